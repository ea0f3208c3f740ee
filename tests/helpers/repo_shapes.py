"""Small repositories of the shapes Claude Code users publish (issues 12, 21), built in a directory.

Each builder writes a minimal tree of one shape (never a copy of a public repository) and returns
its root. Skills carry a valid frontmatter with a "Use when" phrase, so the only findings are the
ones the shape itself causes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKETPLACE = ".claude-plugin/marketplace.json"
MANIFEST = ".claude-plugin/plugin.json"


def put(root: Path, rel: str, content: str | dict[str, Any] | list[Any]) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def skill(root: Path, rel_dir: str) -> None:
    name = rel_dir.rstrip("/").rsplit("/", 1)[-1]
    put(
        root,
        f"{rel_dir}/SKILL.md",
        f"---\nname: {name}\ndescription: Does {name} work. Use when asked for {name}.\n---\n\n"
        f"# {name}\n\nDo the work.\n",
    )


def triggers(root: Path, rel_dir: str, skill_name: str, queries: int = 2) -> None:
    put(
        root,
        f"{rel_dir}/triggers.json",
        {
            "skill_name": skill_name,
            "triggers": [
                {"query": f"{skill_name} query {i}", "should_trigger": i % 2 == 0}
                for i in range(queries)
            ],
        },
    )


def marketplace(root: Path, plugins: list[dict[str, Any]]) -> None:
    put(root, MARKETPLACE, {"name": "shapes", "owner": {"name": "Someone"}, "plugins": plugins})


def skills_list_marketplace(root: Path) -> Path:
    """Two plugins on the root itself (`./`), each an explicit `skills` list, `strict: false`."""
    marketplace(
        root,
        [
            {
                "name": "document-skills",
                "source": "./",
                "strict": False,
                "skills": ["./skills/xlsx", "./skills/docx"],
            },
            {"name": "example-skills", "source": "./", "strict": False, "skills": ["./skills/art"]},
        ],
    )
    for name in ("art", "docx", "unlisted", "xlsx"):
        skill(root, f"skills/{name}")
    triggers(root, "evals/xlsx", "xlsx")
    triggers(root, "evals/art", "art", queries=3)
    return root


def remote_marketplace(root: Path) -> Path:
    """Local plugins under `plugins/` and `external_plugins/`, one without skills, three remote."""
    marketplace(
        root,
        [
            {"name": "alpha", "source": "./plugins/alpha"},
            {"name": "ext", "source": "./external_plugins/ext"},
            {"name": "empty", "source": "./plugins/empty"},
            {"name": "by-url", "source": {"source": "url", "url": "https://example.com/u.git"}},
            {
                "name": "by-subdir",
                "source": {"source": "git-subdir", "url": "https://example.com/m.git", "path": "p"},
            },
            {"name": "by-github", "source": {"source": "github", "repo": "someone/thing"}},
        ],
    )
    for name, rel in (("alpha", "plugins/alpha"), ("ext", "external_plugins/ext")):
        put(root, f"{rel}/{MANIFEST}", {"name": name, "version": "1.0.0"})
    put(root, f"plugins/empty/{MANIFEST}", {"name": "empty", "version": "1.0.0"})
    skill(root, "plugins/alpha/skills/one")
    skill(root, "external_plugins/ext/skills/two")
    triggers(root, "plugins/alpha/evals/one", "one")
    triggers(root, "external_plugins/ext/evals/two", "two")
    return root


def self_listing(root: Path, *, by: str) -> Path:
    """One plugin whose marketplace lists the repository itself, by `./` or by a `github` source."""
    source: Any = "./" if by == "dot" else {"source": "github", "repo": "someone/selfy"}
    marketplace(root, [{"name": "selfy", "source": source}])
    put(root, MANIFEST, {"name": "selfy", "version": "1.0.0"})
    skill(root, "skills/brainstorm")
    skill(root, "skills/plan-work")
    triggers(root, "evals/brainstorm", "brainstorm")
    return root


def bare_skills(root: Path, skills_rel: str = "skills") -> Path:
    """No manifest at all: skills under `skills/` (or `.claude/skills/`), with skill-creator's
    in-skill `evals/evals.json` beside one of them."""
    skill(root, f"{skills_rel}/alpha-skill")
    skill(root, f"{skills_rel}/beta-skill")
    put(
        root,
        f"{skills_rel}/alpha-skill/evals/evals.json",
        {"skill_name": "alpha-skill", "evals": [{"id": 1, "prompt": "p", "expected_output": "o"}]},
    )
    triggers(root, "evals/alpha-skill", "alpha-skill")
    return root


def claude_code_plugin(root: Path, opt_in: str | None = None) -> Path:
    """A plugin written for Claude Code alone: a `plugin.json` without a version, a `hooks/`
    directory, no Codex manifest, skills that declare a license and whose descriptions have no
    "Use when" phrase. `opt_in` adds one of evolve's markers: `.evolve.yaml`, `.codex-plugin` (a
    Codex manifest beside the Claude one) or `.agents/plugins` (a Codex marketplace)."""
    put(root, MANIFEST, {"name": "pdf-kit", "description": "PDF helpers"})
    put(root, "hooks/hooks.json", {"hooks": {}})
    for name, extra in (("pdf-text", "license: Apache-2.0\n"), ("pdf-tables", "")):
        put(
            root,
            f"skills/{name}/SKILL.md",
            f"---\nname: {name}\ndescription: Extracts {name} from PDF files.\n{extra}---\n\n"
            f"# {name}\n\nDo the work.\n",
        )
    if opt_in == ".evolve.yaml":
        put(root, ".evolve.yaml", "# evolve's conventions, with their defaults\n")
    elif opt_in == ".codex-plugin":
        put(root, ".codex-plugin/plugin.json", {"name": "pdf-kit"})
    elif opt_in == ".agents/plugins":
        put(root, ".agents/plugins/marketplace.json", {"name": "m", "plugins": []})
    elif opt_in is not None:
        raise ValueError(f"unknown opt-in marker {opt_in!r}")
    return root


LONG_DESCRIPTION_RUNES = 1068
"""The length of the block-scalar description of `yaml_descriptions`' `long-block` skill."""


def long_description() -> list[str]:
    """Lines of a `|-` block whose value (lines joined by newlines) is 1,068 characters long."""
    words = "Use when building with the API and its SDKs; covers models, tools and batching."
    lines = [f"{words} {i:02d}" for i in range(12)]  # 12 lines of 82 characters
    last = LONG_DESCRIPTION_RUNES - (len("\n".join(lines)) + 1)
    return [*lines, "x" * last]


def yaml_descriptions(root: Path) -> Path:
    """A bare skill repository whose descriptions use YAML as Claude Code reads it: a `|-` and a
    `>` block scalar, a quoted string over two lines, comments, an unquoted `: ` (which Claude
    Code tolerates), a 1,068-character `|-` block and one frontmatter that is not YAML at all
    (line 4 of `skills/broken/SKILL.md`)."""
    long_block = "".join(f"  {line}\n" for line in long_description())
    fronts = {
        "literal-strip": "description: |-\n  Formats reports.\n  Use when asked for a report.\n",
        "folded": "description: >\n  Folds long lines\n  into one. Use when folding.\n",
        "quoted-multiline": 'description: "Quoted over\n  two lines. Use when quoting."\n',
        "commented": "# a comment line\ndescription: Use when commenting.  # not part of it\n",
        "unquoted-colon": "description: House style: ruff lints. Use when styling.\n",
        "long-block": f"description: |-\n{long_block}",
        "broken": "description: Does broken things.\n\n  Keywords: broken, things\n",
    }
    for name, front in fronts.items():
        put(root, f"skills/{name}/SKILL.md", f"---\nname: {name}\n{front}---\n\n# {name}\n")
    return root


# --- issue 21: every shape Claude Code loads, each with one skill a PR edits ------------------


def evals_doc(skill_name: str, count: int = 4, files: list[str] | None = None) -> dict[str, Any]:
    """skill-creator's evals.json: integer ids, `expected_output`, `expectations`."""
    return {
        "skill_name": skill_name,
        "evals": [
            {
                "id": i + 1,
                "prompt": f"Do {skill_name} task {i + 1}",
                "expected_output": "done",
                **({"files": files} if files and i == 0 else {}),
                "expectations": [f"the answer does {skill_name} task {i + 1}"],
            }
            for i in range(count)
        ],
    }


def trigger_array(skill_name: str, count: int = 2) -> list[dict[str, Any]]:
    """skill-creator's trigger eval set: a bare JSON array."""
    return [
        {"query": f"{skill_name} query {i}", "should_trigger": i % 2 == 0} for i in range(count)
    ]


def project_skills(root: Path) -> Path:
    """A project's own skills under `.claude/skills/` (no manifest), one with evolve's evals."""
    skill(root, ".claude/skills/commit")
    skill(root, ".claude/skills/review")
    triggers(root, "evals/commit", "commit")
    return root


def dot_source_list(root: Path) -> Path:
    """A marketplace entry on the root (`./`) listing skills at the top level (`./authoring`)."""
    marketplace(root, [{"name": "kit", "source": "./", "skills": ["./authoring", "./review"]}])
    put(root, MANIFEST, {"name": "kit"})
    skill(root, "authoring")
    skill(root, "review")
    skill(root, "drafts/unlisted")
    triggers(root, "evals/authoring", "authoring")
    return root


def plugin_json_skills(root: Path) -> Path:
    """A plugin whose plugin.json declares its skills (`"skills": ["./custom/writer"]`), with 4
    evals and 20 trigger queries beside evolve's way."""
    marketplace(root, [{"name": "docs", "source": "./plugins/docs"}])
    put(root, f"plugins/docs/{MANIFEST}", {"name": "docs", "skills": ["./custom/writer"]})
    skill(root, "plugins/docs/custom/writer")
    skill(root, "plugins/docs/custom/editor")  # not listed: Claude Code does not load it
    triggers(root, "plugins/docs/evals/writer", "writer", queries=20)
    put(root, "plugins/docs/evals/writer/evals.json", evals_doc("writer"))
    return root


def commands_only(root: Path) -> Path:
    """A marketplace of one plugin with skills and one with commands and agents only."""
    marketplace(
        root,
        [
            {"name": "tools", "source": "./plugins/tools"},
            {"name": "cmds", "source": "./plugins/cmds"},
        ],
    )
    put(root, f"plugins/tools/{MANIFEST}", {"name": "tools"})
    skill(root, "plugins/tools/skills/lint")
    put(root, f"plugins/cmds/{MANIFEST}", {"name": "cmds"})
    put(root, "plugins/cmds/commands/ship.md", "---\ndescription: Ship it\n---\nShip.\n")
    put(root, "plugins/cmds/agents/helper.md", "---\nname: helper\ndescription: Helps\n---\n")
    return root


def rejected_entry(root: Path) -> Path:
    """A marketplace whose second entry lists its skills as objects (Claude Code refuses it)."""
    marketplace(
        root,
        [
            {"name": "good", "source": "./plugins/good"},
            {"name": "bad", "source": "./plugins/bad", "skills": [{"path": "./skills/x"}]},
        ],
    )
    for name, sk in (("good", "fine"), ("bad", "x")):
        put(root, f"plugins/{name}/{MANIFEST}", {"name": name})
        skill(root, f"plugins/{name}/skills/{sk}")
    return root


def unlisted_folders(root: Path) -> Path:
    """An evolve-style marketplace (`./plugins/<dir>`) with a folder it does not list."""
    marketplace(root, [{"name": "listed", "source": "./plugins/listed"}])
    for name in ("listed", "scratch"):
        put(root, f"plugins/{name}/{MANIFEST}", {"name": name})
        skill(root, f"plugins/{name}/skills/{name}-skill")
    return root


def nested_plugins(root: Path) -> Path:
    """A monorepo marketplace whose plugins sit deep (`./packages/agents/plugins/<p>`)."""
    marketplace(
        root,
        [
            {"name": "lint", "source": "./packages/agents/plugins/lint"},
            {"name": "docs", "source": "./packages/docs"},
        ],
    )
    put(root, f"packages/agents/plugins/lint/{MANIFEST}", {"name": "lint"})
    skill(root, "packages/agents/plugins/lint/skills/style")
    put(root, f"packages/docs/{MANIFEST}", {"name": "docs"})
    skill(root, "packages/docs/skills/prose")
    triggers(root, "packages/agents/plugins/lint/evals/style", "style")
    return root


def project_beside_plugins(root: Path) -> Path:
    """A marketplace of plugins and, beside it, the project's own `.claude/skills/`."""
    marketplace(root, [{"name": "alpha", "source": "./plugins/alpha"}])
    put(root, f"plugins/alpha/{MANIFEST}", {"name": "alpha"})
    skill(root, "plugins/alpha/skills/one")
    skill(root, ".claude/skills/release")
    triggers(root, "evals/release", "release")
    return root


def plugin_level_evals(root: Path) -> Path:
    """skill-creator's files at the plugin level: `plugins/p/evals/evals.json` bound by its
    `skill_name`, a trigger array beside it, fixtures under the skill's `evals/files/`."""
    marketplace(root, [{"name": "p", "source": "./plugins/p"}])
    put(root, f"plugins/p/{MANIFEST}", {"name": "p"})
    skill(root, "plugins/p/skills/first")
    skill(root, "plugins/p/skills/second")
    put(
        root,
        "plugins/p/evals/evals.json",
        evals_doc("second", files=["evals/files/input.txt"]),
    )
    put(root, "plugins/p/skills/second/evals/files/input.txt", "input\n")
    put(root, "plugins/p/evals/trigger-evals.json", trigger_array("second", 3))
    return root


def root_level_evals(root: Path) -> Path:
    """A single-skill repository with skill-creator's files at the root: `evals/evals.json` (no
    `skill_name`: bound by being the only skill) and `evals/trigger-evals.json`."""
    skill(root, "skills/solo")
    doc = evals_doc("solo", count=2, files=["evals/files/in.txt"])
    del doc["skill_name"]
    put(root, "evals/evals.json", doc)
    put(root, "skills/solo/evals/files/in.txt", "in\n")
    put(root, "evals/trigger-evals.json", trigger_array("solo", 4))
    return root


def unbound_evals(root: Path) -> Path:
    """Two skills and a root `evals/evals.json` naming neither: a note, never a guess."""
    skill(root, "skills/one")
    skill(root, "skills/two")
    put(root, "evals/evals.json", evals_doc("three", count=1))
    return root


def outside_symlink(root: Path, outside: Path) -> Path:
    """A marketplace plugin reached through a symlink leaving the repository."""
    marketplace(
        root,
        [
            {"name": "inside", "source": "./plugins/inside"},
            {"name": "evil", "source": "./plugins/evil"},
        ],
    )
    put(root, f"plugins/inside/{MANIFEST}", {"name": "inside"})
    skill(root, "plugins/inside/skills/safe")
    put(outside, MANIFEST, {"name": "evil"})
    skill(outside, "skills/stolen")
    triggers(outside, "evals/stolen", "stolen")
    (root / "plugins").mkdir(parents=True, exist_ok=True)
    (root / "plugins/evil").symlink_to(outside, target_is_directory=True)
    return root


# --- issue 30: the shapes people actually have -------------------------------------------------


def standalone_skill(root: Path) -> Path:
    """The repository is the skill (skill-creator's layout): a root SKILL.md named `tidy-notes`
    (the checkout directory is named otherwise), skill-creator's `evals/evals.json` with one case
    graded by `{"id", "text"}` assertions and one saved without assertions yet, a trigger array,
    a fixture, and the author's own `evals/trigger-queries.json` in a shape the tool does not read.
    """
    put(
        root,
        "SKILL.md",
        "---\nname: tidy-notes\ndescription: Tidies meeting notes. Use when asked to tidy "
        "notes.\n---\n\n# Tidy notes\n\nSort the notes by topic.\n",
    )
    put(root, "README.md", "# tidy-notes\n\nInstall: copy this directory into skills/.\n")
    put(
        root,
        "evals/evals.json",
        {
            "skill_name": "tidy-notes",
            "evals": [
                {
                    "id": 1,
                    "prompt": "Tidy evals/files/notes.txt",
                    "expected_output": "notes sorted by topic",
                    "files": ["evals/files/notes.txt"],
                    "assertions": [{"id": "a1", "text": "the notes are sorted by topic"}],
                },
                {"id": 2, "prompt": "Tidy these notes: b, a", "expected_output": "a, b"},
            ],
        },
    )
    put(root, "evals/files/notes.txt", "b: two\na: one\n")
    put(root, "evals/trigger-evals.json", trigger_array("tidy-notes", 4))
    put(root, "evals/trigger-queries.json", {"queries": ["tidy my notes", "what time is it"]})
    put(root, ".github/workflows/ci.yml", "on: push\n")
    return root


def root_skill_plugin(root: Path) -> Path:
    """A plugin whose SKILL.md is at its root: no `skills/`, no `skills` key (Claude Code ≥
    2.1.142 loads it as one skill, `humanizer:humanizer`)."""
    put(root, MANIFEST, {"name": "humanizer", "version": "1.0.0"})
    skill(root, ".")
    put(root, "SKILL.md", (root / "SKILL.md").read_text().replace("name: .", "name: humanizer"))
    put(root, "evals/trigger-evals.json", trigger_array("humanizer", 2))
    put(root, "README.md", "# humanizer\n")
    return root


def marketplace_root_skill_plugin(root: Path) -> Path:
    """A marketplace whose one local plugin keeps its SKILL.md at the plugin root."""
    marketplace(root, [{"name": "voice", "source": "./plugins/voice"}])
    put(root, f"plugins/voice/{MANIFEST}", {"name": "voice"})
    skill(root, "plugins/voice")
    triggers(root, "plugins/voice/evals/voice", "voice")
    return root


def symlinked_project_skills(root: Path) -> Path:
    """Claude plus Codex: the skills live in `.agents/skills/`, `.claude/skills` links there."""
    skill(root, ".agents/skills/lint")
    skill(root, ".agents/skills/docs")
    triggers(root, "evals/lint", "lint")
    (root / ".claude").mkdir(parents=True, exist_ok=True)
    (root / ".claude/skills").symlink_to("../.agents/skills", target_is_directory=True)
    return root


def linked_project_skills(root: Path) -> Path:
    """Claude plus Codex, one link per skill: `.claude/skills/<x> -> ../../.agents/skills/<x>`."""
    skill(root, ".agents/skills/plan")
    skill(root, ".agents/skills/ship")
    triggers(root, "evals/ship", "ship")
    (root / ".claude/skills").mkdir(parents=True, exist_ok=True)
    for name in ("plan", "ship"):
        (root / ".claude/skills" / name).symlink_to(
            f"../../.agents/skills/{name}", target_is_directory=True
        )
    return root


# --- issue 42: what the bundled CLI refuses, remote sources, commands, skill-creator variants ---


def refused_plugins(root: Path) -> Path:
    """A marketplace whose plugins the CLI refuses to install, beside one it installs: a
    plugin.json `agents` directory and `hooks` directory (paths must end with ".md" / ".json"),
    a source leaving the marketplace directory (`./plugins/../plugins/climb`), a source
    string without `./`, and plugin.json names the CLI refuses (with a space, none at all)."""
    marketplace(
        root,
        [
            {"name": "good", "source": "./plugins/good"},
            {"name": "agents-dir", "source": "./plugins/agents-dir"},
            {"name": "hooks-dir", "source": "./plugins/hooks-dir"},
            {"name": "climb", "source": "./plugins/../plugins/climb"},
            {"name": "no-prefix", "source": "plugins/no-prefix"},
            {"name": "spaced", "source": "./plugins/spaced"},
            {"name": "nameless", "source": "./plugins/nameless"},
        ],
    )
    manifests: dict[str, dict[str, Any]] = {
        "good": {"name": "good"},
        "agents-dir": {"name": "agents-dir", "agents": ["./agents"]},
        "hooks-dir": {"name": "hooks-dir", "hooks": "./hooks"},
        "climb": {"name": "climb"},
        "no-prefix": {"name": "no-prefix"},
        "spaced": {"name": "spaced kit"},
        "nameless": {"version": "1.0.0"},
    }
    for name, manifest in manifests.items():
        put(root, f"plugins/{name}/{MANIFEST}", manifest)
        skill(root, f"plugins/{name}/skills/{name}-one")
    skill(root, "plugins/agents-dir/skills/agents-dir-two")
    put(root, "plugins/agents-dir/agents/helper.md", "---\nname: helper\ndescription: Helps\n---\n")
    put(root, "plugins/hooks-dir/hooks/hooks.json", {"hooks": {}})
    triggers(root, "plugins/agents-dir/evals/agents-dir-one", "agents-dir-one")
    return root


def dot_dot_source(root: Path) -> Path:
    """A marketplace entry `"source": "./."` on a root plugin (the CLI refuses it; `./` installs)."""
    marketplace(root, [{"name": "rooted", "source": "./."}])
    put(root, MANIFEST, {"name": "rooted"})
    skill(root, "skills/inside")
    return root


def refused_root_plugin(root: Path) -> Path:
    """A single plugin at the root whose plugin.json lists an agents directory."""
    put(root, MANIFEST, {"name": "solo", "agents": ["./agents"]})
    put(root, "agents/helper.md", "---\nname: helper\ndescription: Helps\n---\n")
    skill(root, "skills/solo-skill")
    return root


def remote_with_codex_twin(root: Path) -> Path:
    """A Claude marketplace with a Codex twin (`.agents/plugins/marketplace.json`): one local
    plugin and remote entries of every kind, with and without a `path` inside the remote."""
    marketplace(
        root,
        [
            {"name": "alpha", "source": "./plugins/alpha"},
            {
                "name": "sub",
                "source": {
                    "source": "git-subdir",
                    "url": "https://example.com/x.git",
                    "path": "plugins/sub",
                },
            },
            {"name": "gh", "source": {"source": "github", "repo": "a/b", "path": "./plugins/gh"}},
            {"name": "u", "source": {"source": "url", "url": "https://example.com/y.git"}},
        ],
    )
    put(
        root,
        ".agents/plugins/marketplace.json",
        {"name": "shapes", "plugins": [{"name": "alpha", "source": "./plugins/alpha"}]},
    )
    put(root, f"plugins/alpha/{MANIFEST}", {"name": "alpha"})
    skill(root, "plugins/alpha/skills/one")
    triggers(root, "plugins/alpha/evals/one", "one")
    return root


def commands_beside_skills(root: Path) -> Path:
    """A plugin with commands (`commands/ship.md`, `commands/ops/deploy.md`; one named like a
    skill) beside skills, one of them `disable-model-invocation: true`."""
    marketplace(root, [{"name": "kit", "source": "./plugins/kit"}])
    put(root, f"plugins/kit/{MANIFEST}", {"name": "kit"})
    skill(root, "plugins/kit/skills/lint")
    skill(root, "plugins/kit/skills/ship")
    put(
        root,
        "plugins/kit/skills/menu/SKILL.md",
        "---\nname: menu\ndescription: A menu. Use when asked for the menu.\n"
        "disable-model-invocation: true\n---\nPick a job.\n",
    )
    put(root, "plugins/kit/commands/ship.md", "---\ndescription: Ship the release\n---\nShip.\n")
    put(root, "plugins/kit/commands/ops/deploy.md", "---\ndescription: Deploy it\n---\nGo.\n")
    triggers(root, "plugins/kit/evals/menu", "menu")
    put(root, "plugins/kit/evals/menu/evals.json", evals_doc("menu", count=1))
    return root


def root_skill_marketplace_evals(root: Path) -> Path:
    """A marketplace listing its own root (`./`) whose SKILL.md is at the top, with commands and
    skill-creator's files as authors leave them: `evals/evals.json` with `skill_name` and two
    trigger files beside it (`trigger-eval.json`, `trigger-eval-fuzzy.json`)."""
    marketplace(root, [{"name": "playbook", "source": "./"}])
    put(root, MANIFEST, {"name": "playbook", "version": "1.0.0"})
    put(
        root,
        "SKILL.md",
        "---\nname: playbook\ndescription: Plans products. Use when planning a product.\n---\n\n"
        "# Playbook\n\nPlan it.\n",
    )
    put(root, "commands/playbook-quick.md", "---\ndescription: Quick plan\n---\nPlan fast.\n")
    put(root, "evals/evals.json", evals_doc("playbook", count=9))
    put(root, "evals/trigger-eval.json", trigger_array("playbook", 4))
    put(root, "evals/trigger-eval-fuzzy.json", trigger_array("playbook", 3))
    put(root, "README.md", "# playbook\n")
    put(root, ".github/workflows/ci.yml", "on: push\n")
    return root


def namespace_from_plugin_json(root: Path) -> Path:
    """A marketplace entry `self-improving-agent` whose plugin.json names the plugin `si` (the
    CLI lists its skills as `si:…`)."""
    marketplace(root, [{"name": "self-improving-agent", "source": "./plugins/sia"}])
    put(root, f"plugins/sia/{MANIFEST}", {"name": "si"})
    skill(root, "plugins/sia/skills/reflect")
    return root


# --- the CLI-agreement test's own shapes (tests/integration/test_discovery_cli.py) ---


def skills_key(root: Path, value: str | list[str]) -> Path:
    """A plugin whose plugin.json `skills` key (a string or a list) replaces `skills/`."""
    put(root, MANIFEST, {"name": "keyed", "skills": value})
    skill(root, "custom/a")
    skill(root, "custom/b")
    skill(root, "more/c")
    skill(root, "skills/ignored")  # replaced by the key: never loaded
    return root


def nested_and_underscored(root: Path) -> Path:
    """`skills/group/inner/SKILL.md` two levels down (never loaded), `_`-prefixed skill names in
    a plugin and in the project's `.claude/skills`."""
    put(root, MANIFEST, {"name": "deep"})
    skill(root, "skills/top")
    skill(root, "skills/group/inner")
    skill(root, "skills/_private")
    skill(root, ".claude/skills/_scratch")
    skill(root, ".claude/skills/helper")
    put(
        root,
        "skills/menu/SKILL.md",
        "---\nname: menu\ndescription: A menu. Use when asked.\ndisable-model-invocation: true\n"
        "---\nPick a job.\n",
    )
    return root


def marketplace_entry_rules(root: Path) -> Path:
    """Entries' `skills` and `strict` as Claude Code 2.1.332 applies them: a list adds to the
    plugin's `skills/` (strict or not); `strict: false` with a list while the plugin has a
    plugin.json loads nothing (conflicting manifests); `strict: false` alone keeps `skills/`."""
    marketplace(
        root,
        [
            {
                "name": "conflict",
                "source": "./plugins/conflict",
                "strict": False,
                "skills": ["./extra/c2"],
            },
            {"name": "strict-list", "source": "./plugins/strict-list", "skills": ["./extra/s2"]},
            {
                "name": "loose-list",
                "source": "./plugins/loose-list",
                "strict": False,
                "skills": ["./extra/l2"],
            },
            {"name": "loose", "source": "./plugins/loose", "strict": False},
        ],
    )
    for name, first, second in (
        ("conflict", "c1", "c2"),
        ("strict-list", "s1", "s2"),
        ("loose-list", "l1", "l2"),
        ("loose", "n1", "n2"),
    ):
        skill(root, f"plugins/{name}/skills/{first}")
        skill(root, f"plugins/{name}/extra/{second}")
        if name != "loose-list":
            put(root, f"plugins/{name}/{MANIFEST}", {"name": name})
    return root


def skills_key_string(root: Path) -> Path:
    """plugin.json `"skills": "./custom"`."""
    return skills_key(root, "./custom")


def skills_key_list(root: Path) -> Path:
    """plugin.json `"skills": ["./custom/a", "./more"]`."""
    return skills_key(root, ["./custom/a", "./more"])


def shape_links(root: Path) -> dict[str, str]:
    """Symlinks of a built shape (root-relative path → link text), `.git` left out."""
    return {
        p.relative_to(root).as_posix(): p.readlink().as_posix()
        for p in sorted(root.rglob("*"))
        if p.is_symlink() and ".git" not in p.relative_to(root).parts
    }


@dataclass(frozen=True)
class Edit:
    """A shape, the skills Claude Code loads from it, and the one file a PR edits."""

    build: Callable[[Path], Path]
    skills: dict[str, list[str]]
    """Plugin → skills, as Claude Code would load them."""
    edit: str
    """Root-relative file the PR edits."""
    touched: str
    """`plugin/skill` the edit touches."""
    unrelated: str = "README.md"
    """A root-relative file whose change touches no skill."""
    errors: tuple[str, ...] = ()
    """The Tier 0 checks whose error the shape makes on purpose (`skill.shadowed`)."""


SHAPE_EDITS: dict[str, Edit] = {
    "project-skills": Edit(
        project_skills,
        {"shape": ["commit", "review"]},
        ".claude/skills/commit/SKILL.md",
        "shape/commit",
    ),
    "dot-source-list": Edit(
        dot_source_list, {"kit": ["authoring", "review"]}, "authoring/SKILL.md", "kit/authoring"
    ),
    "plugin-json-skills": Edit(
        plugin_json_skills,
        {"docs": ["writer"]},
        "plugins/docs/custom/writer/SKILL.md",
        "docs/writer",
    ),
    "bare-skills": Edit(
        bare_skills,
        {"shape": ["alpha-skill", "beta-skill"]},
        "skills/beta-skill/SKILL.md",
        "shape/beta-skill",
    ),
    "skills-lists": Edit(
        skills_list_marketplace,
        {"document-skills": ["xlsx", "docx"], "example-skills": ["art"]},
        "skills/docx/SKILL.md",
        "document-skills/docx",
    ),
    "nested-plugins": Edit(
        nested_plugins,
        {"docs": ["prose"], "lint": ["style"]},
        "packages/agents/plugins/lint/skills/style/SKILL.md",
        "lint/style",
    ),
    "project-beside-plugins": Edit(
        project_beside_plugins,
        {"alpha": ["one"], "shape": ["release"]},
        ".claude/skills/release/SKILL.md",
        "shape/release",
    ),
    "plugin-level-evals": Edit(
        plugin_level_evals,
        {"p": ["first", "second"]},
        "plugins/p/evals/trigger-evals.json",
        "p/second",
    ),
    "root-level-evals": Edit(
        root_level_evals, {"shape": ["solo"]}, "evals/evals.json", "shape/solo"
    ),
    "commands-only": Edit(
        commands_only,
        {"cmds": [], "tools": ["lint"]},
        "plugins/tools/skills/lint/SKILL.md",
        "tools/lint",
    ),
    "unlisted-folders": Edit(
        unlisted_folders,
        {"listed": ["listed-skill"]},
        "plugins/listed/skills/listed-skill/SKILL.md",
        "listed/listed-skill",
    ),
    "standalone-skill": Edit(
        standalone_skill,
        {"tidy-notes": ["tidy-notes"]},
        "SKILL.md",
        "tidy-notes/tidy-notes",
        unrelated=".github/workflows/ci.yml",
    ),
    "root-skill-plugin": Edit(
        root_skill_plugin,
        {"humanizer": ["humanizer"]},
        "SKILL.md",
        "humanizer/humanizer",
        unrelated=".github/workflows/ci.yml",
    ),
    "marketplace-root-skill-plugin": Edit(
        marketplace_root_skill_plugin,
        {"voice": ["voice"]},
        "plugins/voice/SKILL.md",
        "voice/voice",
    ),
    "symlinked-project-skills": Edit(
        symlinked_project_skills,
        {"shape": ["docs", "lint"]},
        ".agents/skills/lint/SKILL.md",
        "shape/lint",
    ),
    "linked-project-skills": Edit(
        linked_project_skills,
        {"shape": ["plan", "ship"]},
        ".agents/skills/ship/SKILL.md",
        "shape/ship",
    ),
    "root-skill-marketplace-evals": Edit(
        root_skill_marketplace_evals,
        {"playbook": ["playbook"]},
        "SKILL.md",
        "playbook/playbook",
        unrelated=".github/workflows/ci.yml",
    ),
    "commands-beside-skills": Edit(
        commands_beside_skills,
        {"kit": ["lint", "menu", "ship"]},
        "plugins/kit/skills/ship/SKILL.md",
        "kit/ship",
        unrelated="plugins/kit/commands/ship.md",
        errors=("skill.shadowed",),
    ),
}
"""Every shape of issues 21, 30 and 42 with the edit a PR makes; the root directory is named
`shape`."""
