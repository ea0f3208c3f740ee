"""Issue 42: discovery agrees with the bundled Claude Code on what it refuses and what it reads.

Each rule here was measured on the CLI (2.1.332; tests/integration/test_discovery_cli.py starts it
on the same shapes): a plugin it refuses to install is an error naming the CLI's rule and the fix,
and its skills are never evaluated; remote sources are notes; skill-creator's files are read as
authors leave them; every discovered skill is touched by an edit of its SKILL.md; a skill the
model cannot invoke gets no trigger evaluation.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers import repo_shapes
from tests.helpers.repo_shapes import (
    commands_beside_skills,
    dot_dot_source,
    put,
    refused_plugins,
    refused_root_plugin,
    remote_with_codex_twin,
    root_skill_marketplace_evals,
    triggers,
)

from evolve_action import plan
from evolve_action.checks import CheckOptions, run_checks
from evolve_action.config import Config
from evolve_action.github import ChangedPath, touched_skills
from evolve_action.repo import Repository, discover
from evolve_action.specs import Severity


def shape(repo: Repository) -> dict[str, list[str]]:
    return {p.name: [s.name for s in repo.skills() if s.plugin == p.name] for p in repo.plugins}


def errors(repo: Repository) -> list[str]:
    report = run_checks(repo, Config(), CheckOptions(signals=False))
    return [f.message for f in report.findings if f.severity == Severity.ERROR]


def test_plugins_the_cli_refuses_are_errors_naming_its_rule_and_are_never_evaluated(
    tmp_path: Path,
) -> None:
    repo = discover(refused_plugins(tmp_path / "shape"), tmp_path)
    assert shape(repo) == {"good": ["good-one"]}
    assert errors(repo) == [
        'plugins/agents-dir/.claude-plugin/plugin.json: `agents` path "./agents": Claude Code '
        "refuses to install this plugin (Validation errors: agents.0: Invalid string: must end "
        'with ".md"), so none of its skills load — list each agent file, such as '
        '"./agents/<name>.md", or drop the field (the default agents/ directory is loaded '
        "without it)",
        'plugins/hooks-dir/.claude-plugin/plugin.json: `hooks` path "./hooks": Claude Code '
        "refuses to install this plugin (Validation errors: hooks: Invalid string: must end with "
        '".json"), so none of its skills load — point it at a JSON file such as '
        '"./hooks/hooks.json", or drop the field (the default file is loaded without it)',
        ".claude-plugin/marketplace.json: plugin 'climb' (plugins[3]): source "
        '"./plugins/../plugins/climb" does not stay inside the marketplace directory; Claude '
        "Code refuses to install it (its marketplace entry path does not stay inside the "
        'marketplace directory) — write "./" for the repository root, or a "./<dir>" path with '
        'no "." or ".." segments',
        ".claude-plugin/marketplace.json: plugin 'no-prefix' (plugins[4]): source "
        '"plugins/no-prefix" is a path without a leading "./"; Claude Code refuses to install it '
        '(marketplace entry is invalid: source: Invalid string: must start with "./") — write '
        '"./<dir>" for a plugin in this repository, or a {"source": "github", "repo": '
        '"owner/name"} object for another repository',
        "plugins/spaced/.claude-plugin/plugin.json: plugin `name`: Claude Code refuses to load "
        "this plugin (Validation errors: name: Plugin name cannot contain spaces. Use kebab-case "
        '(e.g., "my-plugin")), so none of its skills load — set it to a kebab-case name, such as '
        '"spaced"',
        "plugins/nameless/.claude-plugin/plugin.json: plugin `name`: Claude Code refuses to load "
        "this plugin (Validation errors: name: Invalid input: expected string, received "
        'undefined), so none of its skills load — set it to a kebab-case name, such as "nameless"',
    ]
    assert (
        "note: Claude Code refuses to install plugin 'agents-dir' (the error on "
        "plugins/agents-dir/.claude-plugin/plugin.json): its skills are not loadable and not "
        "evaluated: agents-dir-one, agents-dir-two"
    ) in repo.notices
    assert sorted(p.name for p in repo.refused) == [
        "agents-dir",
        "climb",
        "hooks-dir",
        "nameless",
        "no-prefix",
        "spaced",
    ]
    assert (
        "note: Claude Code refuses to install plugin 'no-prefix' (the error on "
        ".claude-plugin/marketplace.json): its skills are not loadable and not evaluated: "
        "no-prefix-one"
    ) in repo.notices
    # its triggers are never planned, and an edit of its SKILL.md touches nothing
    assert [(es.plugin, es.skill) for es in repo.eval_sets()] == []
    edit = ChangedPath(path="plugins/agents-dir/skills/agents-dir-one/SKILL.md")
    assert touched_skills(repo, [edit]).empty


def test_a_source_leaving_the_marketplace_directory_is_refused(tmp_path: Path) -> None:
    repo = discover(dot_dot_source(tmp_path / "shape"), tmp_path)
    assert (shape(repo), [p.name for p in repo.refused]) == ({}, ["rooted"])
    assert errors(repo) == [
        ".claude-plugin/marketplace.json: plugin 'rooted' (plugins[0]): source \"./.\" does not "
        "stay inside the marketplace directory; Claude Code refuses to install it (its "
        'marketplace entry path does not stay inside the marketplace directory) — write "./" '
        'for the repository root, or a "./<dir>" path with no "." or ".." segments'
    ]


def test_a_refused_root_plugin_has_nothing_to_evaluate_and_the_checks_say_why(
    tmp_path: Path,
) -> None:
    repo = discover(refused_root_plugin(tmp_path / "shape"), tmp_path)
    assert (repo.layout, repo.plugins, [p.name for p in repo.refused]) == ("single", (), ["solo"])
    assert [e.split(":", 1)[0] for e in errors(repo)] == [".claude-plugin/plugin.json"]
    assert repo.notices[-1].endswith("not loadable and not evaluated: solo-skill")


def test_remote_sources_are_notes_even_beside_a_codex_marketplace(tmp_path: Path) -> None:
    repo = discover(remote_with_codex_twin(tmp_path / "shape"), tmp_path)
    assert shape(repo) == {"alpha": ["one"]}
    assert errors(repo) == []
    assert repo.notices == (
        "note: 3 marketplace plugins not evaluated here (remote): sub (git-subdir "
        "https://example.com/x.git), gh (github a/b), u (url https://example.com/y.git)",
    )


def test_skill_name_binds_evals_json_whatever_trigger_files_sit_beside_it(tmp_path: Path) -> None:
    root = root_skill_marketplace_evals(tmp_path / "shape")
    repo = discover(root, tmp_path)
    (es,) = repo.eval_sets()
    assert (es.plugin, es.skill) == ("playbook", "playbook")
    assert (es.evals_path, es.triggers_path) == (
        root / "evals/evals.json",
        root / "evals/trigger-eval.json",
    )
    assert repo.notices == (
        "note: evals/ holds 2 trigger eval sets for playbook/playbook: trigger-eval.json is read "
        "(the shortest name, the one the others vary) and trigger-eval-fuzzy.json is not; to "
        "evaluate its queries too, add them to trigger-eval.json",
    )
    built = plan.build_inputs(repo.eval_sets(), root=repo.root)
    (inputs,) = built.sets
    assert (len(inputs.evals or ()), len(inputs.triggers or ())) == (9, 4)
    assert errors(repo) == []


def _builders() -> dict[str, Callable[[Path], Path]]:
    """Every shape builder of tests/helpers/repo_shapes.py (a function of the root alone)."""
    found: dict[str, Callable[[Path], Path]] = {}
    for name, fn in inspect.getmembers(repo_shapes, inspect.isfunction):
        params = list(inspect.signature(fn).parameters.values())
        if fn.__module__ != repo_shapes.__name__ or not params or params[0].name != "root":
            continue
        if name == "shape_links" or any(p.default is p.empty for p in params[1:]):
            continue
        found[name] = fn
    return found


def test_the_enumeration_covers_every_builder() -> None:
    assert {"root_skill_marketplace_evals", "marketplace_root_skill_plugin"} <= set(_builders())
    assert len(_builders()) >= 30  # issues 21, 30, 42 and the CLI-agreement shapes


@pytest.mark.parametrize("name", sorted(_builders()))
def test_an_edit_of_any_discovered_skill_md_touches_that_skill(tmp_path: Path, name: str) -> None:
    """Touched = discovered: in every shape, each skill discovery finds is touched by an edit of
    its SKILL.md (and by an edit of any other file in its directory), and by nothing else."""
    root = _builders()[name](tmp_path / "shape")
    repo = discover(root, root)
    skills = repo.skills()
    assert skills or repo.refused or name in ("commands_only",) or not shape(repo), name
    for sk in skills:
        want = (f"{sk.plugin}/{sk.name}",)
        touched = touched_skills(repo, [ChangedPath(path=repo.rel(sk.skill_md))])
        assert touched.keys == want, (name, repo.rel(sk.skill_md), touched.keys)
        extra = touched_skills(repo, [ChangedPath(path=repo.rel(sk.dir / "references/new.md"))])
        assert want[0] in extra.keys, (name, repo.rel(sk.dir))


def test_a_skill_the_model_cannot_invoke_gets_no_trigger_run_and_its_evals_still_run(
    tmp_path: Path,
) -> None:
    repo = discover(commands_beside_skills(tmp_path / "shape"), tmp_path)
    (es,) = repo.eval_sets()
    assert (es.plugin, es.skill) == ("kit", "menu")
    built = plan.build_inputs([es], root=repo.root)
    (inputs,) = built.sets
    assert inputs.triggers is None
    assert len(inputs.evals or ()) == 1
    assert built.invalid == []
    assert built.warnings == [
        "kit/menu: triggers not run: its SKILL.md sets `disable-model-invocation: true`, so "
        "Claude Code never lists it to the model and the model cannot invoke it (a trigger "
        "evaluation would measure nothing); its evals still run"
    ]


def test_a_skill_a_command_hides_is_a_tier0_error_and_gets_no_trigger_run(
    tmp_path: Path,
) -> None:
    """`commands/ship.md` beside `skills/ship/`: the CLI lists the command in the skill's place
    (measured, tests/integration/test_discovery_cli.py), so the checks say so before any session
    and Tier 1 is not planned; `commands/ops/deploy.md` (`kit:ops:deploy`) hides nothing."""
    root = commands_beside_skills(tmp_path / "shape")
    put(root, ".claude/skills/ship/SKILL.md", "---\nname: ship\ndescription: Ship it.\n---\n")
    repo = discover(root, root)
    report = run_checks(repo, Config(), CheckOptions(signals=False))
    shadowed = [f for f in report.findings if f.check == "skill.shadowed"]
    assert [(f.path, f.severity) for f in shadowed] == [
        ("plugins/kit/skills/ship/SKILL.md", Severity.ERROR)
    ]
    assert "the command plugins/kit/commands/ship.md takes this skill's name 'ship'" in (
        shadowed[0].message
    )
    assert "rename the skill or the command" in shadowed[0].message
    triggers(root, "plugins/kit/evals/ship", "ship")
    repo = discover(root, root)
    (es,) = [e for e in repo.eval_sets() if e.skill == "ship" and e.plugin == "kit"]
    built = plan.build_inputs([es], root=repo.root)
    (inputs,) = built.sets
    assert inputs.triggers is None
    assert built.warnings == [
        "kit/ship: triggers not run: the command commands/ship.md of its plugin has the same "
        "name, and Claude Code lists the command in the skill's place (the model never sees the "
        "skill); rename the skill or the command; its evals still run"
    ]
    (menu,) = [e for e in discover(root, root).eval_sets() if e.skill == "menu"]
    assert "commands" not in " ".join(plan.build_inputs([menu], root=repo.root).warnings)


@pytest.mark.parametrize(
    ("manifest", "cli_says", "fix"),
    [
        (
            {"skills": "skills"},
            'skills: Invalid string: must start with "./"',
            'write it "./skills"',
        ),
        ({"commands": "commands"}, "commands: Invalid input", 'write it "./commands"'),
        (
            {"mcpServers": ".mcp.json"},
            'mcpServers: Invalid string: must start with "./"',
            '"./.mcp.json"',
        ),
        (
            {"mcpServers": "./mcp"},
            'mcpServers: Invalid string: must end with ".json"',
            '"./.mcp.json"',
        ),
        (
            {"lspServers": "./lsp"},
            'lspServers: Invalid string: must end with ".json"',
            '"./.lsp.json"',
        ),
        (
            {"agents": ["./agents/a.md", "./agents"]},
            'agents.1: Invalid string: must end with ".md"',
            "list each agent file",
        ),
    ],
)
def test_each_measured_manifest_refusal_quotes_the_cli_and_a_working_fix(
    tmp_path: Path, manifest: dict[str, object], cli_says: str, fix: str
) -> None:
    """The plugin.json rules `claude plugin install` applied (CLI 2.1.332, measured one by one)."""
    repo_shapes.put(tmp_path, repo_shapes.MANIFEST, {"name": "solo", **manifest})
    repo_shapes.skill(tmp_path, "skills/one")
    repo = discover(tmp_path, tmp_path)
    (problem,) = repo.problems
    assert f"(Validation errors: {cli_says})" in problem.message
    assert fix in problem.message.split(" — ", 1)[1]
    assert repo.plugins == ()


@pytest.mark.parametrize(
    "manifest",
    [
        {"agents": "./agents/a.md"},
        {"commands": ["./commands"]},
        {"hooks": "./hooks/hooks.json", "mcpServers": {"x": {"command": "x"}}},
        {"outputStyles": "./styles"},
        {"skills": "./../.."},
        {"version": "abc"},
    ],
)
def test_what_the_cli_installs_is_no_refusal(tmp_path: Path, manifest: dict[str, object]) -> None:
    repo_shapes.put(tmp_path, repo_shapes.MANIFEST, {"name": "solo", **manifest})
    repo_shapes.skill(tmp_path, "skills/one")
    repo = discover(tmp_path, tmp_path)
    assert [p.check for p in repo.problems if p.check == "plugin.refused"] == []
    assert [p.name for p in repo.plugins] == ["solo"]
