"""The listing check with the real Claude Code CLI (issue 25): what the model is shown, per skill.

Fixture repositories are built here: one plugin of 10 short skills (all listed whole), one of 120
skills with 324-character descriptions (the end of the listing is name-only), and a marketplace of
three plugins of 40 such skills each (each plugin fits alone; together they overflow). Every
verdict is checked against an independent capture: the same workspace started through the harness
against the test's own scripted server, its first request's text searched for the exact lines
`- name: description` and `- name`.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path

import pytest

from evolve_action.checks import (
    LISTING_CACHE_NAME,
    check_listing,
    install_sets,
)
from evolve_action.harness import (
    LISTING_ANCHOR,
    SessionSpec,
    create_workspace,
    remove_workspace,
    run_session,
)
from evolve_action.modelserver import ModelServer
from evolve_action.repo import discover
from evolve_action.specs import Severity

pytestmark = pytest.mark.integration


def _description(i: int, length: int) -> str:
    return (f"Use when the user asks about topic {i} " + "x" * length)[:length]


def _plugin(root: Path, name: str, count: int, length: int, *, start: int = 0) -> None:
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    for i in range(start, start + count):
        skill = f"{name}-s{i:03d}"
        d = root / "skills" / skill
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: {skill}\ndescription: {_description(i, length)}\n---\n\nBody {i}\n"
        )


def _environ(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env


def _request_text(skills: list[Path], plugin_dirs: tuple[Path, ...], env: dict[str, str]) -> str:
    """The first request's text, captured by the test itself (not by the code under test)."""
    with ModelServer({"rules": [{"text": "ok"}]}, port=0) as srv:
        run_env = {**env, "ANTHROPIC_BASE_URL": srv.base_url, "ANTHROPIC_API_KEY": "sk-test"}
        ws = create_workspace(prefix="verify.", skills=skills, environ=run_env, link_skills=True)
        try:
            asyncio.run(
                run_session(
                    SessionSpec(
                        prompt="hello",
                        workspace=ws,
                        model="",
                        max_turns=1,
                        allowed_tools=("Skill", "Read"),
                        permission_mode="default",
                        plugin_dirs=plugin_dirs,
                    ),
                    environ=run_env,
                )
            )
        finally:
            remove_workspace(ws)
        body = next(r["body"] for r in srv.requests if r["path"] == "/v1/messages")
    return json.dumps(body, ensure_ascii=False)


def _check(root: Path, env: dict[str, str]):  # type: ignore[no-untyped-def]
    repo = discover(root, root)
    return asyncio.run(
        check_listing(
            repo, models=[""], environ=env, cache_path=root.parent / "cache" / LISTING_CACHE_NAME
        )
    )


def _verify(report, env: dict[str, str], kind: str) -> None:  # type: ignore[no-untyped-def]
    """Each verdict of the `kind` set agrees with the exact lines of an independent capture."""
    sl = next(s for s in report.sets if s.set.kind == kind)
    text = _request_text(
        [m.dir for m in sl.set.members] if not sl.set.plugin_dirs else [], sl.set.plugin_dirs, env
    )
    assert LISTING_ANCHOR in text
    for sk in sl.skills:
        member = next(m for m in sl.set.members if m.skill == sk.skill)
        listed = (
            sk.skill
            if kind == "plugin" and not sl.set.plugin_dirs
            else f"{member.plugin}:{sk.skill}"
        )
        desc = (member.dir / "SKILL.md").read_text().split("description: ")[1].split("\n")[0]
        whole = f"\\n- {listed}: {desc}\\n" in text
        bare = f"\\n- {listed}\\n" in text or text.endswith(f"\\n- {listed}")
        assert {"whole": whole, "name-only": bare}.get(sk.status, False), (sk, whole, bare)


def test_ten_short_skills_are_all_listed_whole(tmp_path: Path, claude_cli: Path) -> None:
    root = tmp_path / "short"
    _plugin(root, "short", 10, 60)
    env = _environ(tmp_path)
    report = _check(root, env)
    assert report.started == 1
    [sl] = report.sets
    assert [s.status for s in sl.skills] == ["whole"] * 10
    assert report.findings == ()
    assert sl.cli_version  # `claude --version` was read
    _verify(report, env, "plugin")
    again = _check(root, env)  # cached: no CLI start
    assert again.started == 0 and again.sets[0].cached
    assert [s.status for s in again.sets[0].skills] == ["whole"] * 10


def test_a_long_plugin_loses_descriptions_at_the_end(tmp_path: Path, claude_cli: Path) -> None:
    root = tmp_path / "long"
    _plugin(root, "long", 120, 324)
    env = _environ(tmp_path)
    report = _check(root, env)
    [sl] = report.sets
    statuses = [s.status for s in sl.skills]
    bare = statuses.count("name-only")
    assert 0 < bare < 120 and statuses.count("whole") == 120 - bare
    assert statuses == ["whole"] * (120 - bare) + ["name-only"] * bare  # the end loses
    errors = [f for f in report.findings if f.severity == Severity.ERROR]
    assert len(errors) == bare
    assert all("description not shown to the model: listing budget" in f.message for f in errors)
    assert errors[0].path == "skills/long-s" + f"{120 - bare:03d}/SKILL.md"
    _verify(report, env, "plugin")


def test_a_marketplace_whose_plugins_fit_alone_but_not_together(
    tmp_path: Path, claude_cli: Path
) -> None:
    root = tmp_path / "market"
    plugins = []
    for n, name in enumerate(("alpha", "beta", "gamma")):
        _plugin(root / "plugins" / name, name, 40, 324, start=40 * n)
        plugins.append({"name": name, "source": f"./plugins/{name}"})
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "m", "owner": {"name": "o"}, "plugins": plugins})
    )
    env = _environ(tmp_path)
    repo = discover(root, root)
    assert [s.kind for s in install_sets(repo)] == ["plugin", "plugin", "plugin", "repository"]
    report = _check(root, env)
    assert report.started == 4
    own = [s for s in report.sets if s.set.kind == "plugin"]
    assert all(sk.status == "whole" for s in own for sk in s.skills)
    whole_repo = next(s for s in report.sets if s.set.kind == "repository")
    lost = [sk for sk in whole_repo.skills if sk.status == "name-only"]
    assert lost and all(sk.plugin == "gamma" for sk in lost[-1:])
    [note] = report.findings
    assert note.severity == Severity.SIGNAL and note.check == "listing.marketplace"
    assert f"{len(lost)} of 120 skills are listed by name only" in note.message
    assert f"~{whole_repo.over_budget:,} characters over the budget" in note.message
    assert f"gamma:{lost[-1].skill}" in note.message  # the end of the listing loses first
    _verify(report, env, "repository")


def test_a_trigger_miss_of_a_name_only_skill_is_explained(
    tmp_path: Path, claude_cli: Path, model_server
) -> None:  # type: ignore[no-untyped-def]
    """claude-sonnet-4-6's listing budget (~8,000 characters, ~1,800 left after the built-in
    skills) lists the first of 12 long skills whole and the last by name only: the scripted model
    routes by the listing, so the first triggers and the last misses, and that miss says why."""
    from tests.helpers.agents import MODEL, scripted_env, triggers_doc, write

    from evolve_action.cli import main

    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "big", "version": "1.0.0"}\n')
    for i in range(12):
        name = f"big-{i:02d}"
        desc = (f"Use when the user asks about zeta{i:02d} reports. " + "Filler " * 60)[:300]
        write(
            root, f"skills/{name}/SKILL.md", f"---\nname: {name}\ndescription: {desc}\n---\n\nB\n"
        )
    for name in ("big-00", "big-11"):
        write(
            root, f"evals/{name}/triggers.json", triggers_doc([(f"zeta{name[-2:]} reports", True)])
        )
    srv = model_server({"rules": [{"route": {"threshold": 0.05}}]})
    env = scripted_env(tmp_path, srv.base_url)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", "triggers", "--model", MODEL, "--runs", "1", "--root", str(root)],
        env,
        stdout=out,
        stderr=err,
        cwd=root,
    )
    text = out.getvalue() + err.getvalue()
    assert code == 0, text
    # the scripted model saw the same listing the check judged
    listed = {s for r in srv.requests if r["path"] == "/v1/messages" for s in r.get("skills", [])}
    assert {"big-00", "big-11"} <= listed
    lines = [line for line in text.splitlines() if "zeta11" in line and "expect=yes" in line]
    assert lines and all("(description not shown to the model: listing budget)" in x for x in lines)
    assert "big-11 (anthropic/claude-sonnet-4-6): description not shown to the model" in text
    assert "shorten the plugin's skill descriptions or put fewer skills" in text
    hit = [line for line in text.splitlines() if "zeta00" in line and "expect=yes" in line]
    assert hit and not any("listing budget" in line for line in hit)


BUILT_IN_MIN = 5  # Claude Code 2.1.332 lists ~15 built-in skills after the user's


def _capture(tmp_path: Path, count: int, length: int, model: str):  # type: ignore[no-untyped-def]
    from evolve_action.harness import capture_listing

    root = tmp_path / f"budget-{count}x{length}-{model or 'default'}"
    _plugin(root, "b", count, length)
    skills = sorted((root / "skills").iterdir())
    return asyncio.run(capture_listing(model=model, environ=_environ(tmp_path), skills=skills)), [
        d.name for d in skills
    ]


def test_the_cli_listing_budget_rule(tmp_path: Path, claude_cli: Path) -> None:
    """The rule docs/checks.md states ("The listing budget"), measured with CLI 2.1.332: fails when
    a new CLI changes it, so the check and its documentation never silently go stale."""
    # Per-skill cap: a 2,000-character description is cut to 1,535 characters plus `…`.
    one, _ = _capture(tmp_path, 1, 2000, "")
    [entry] = [e for e in one.entries if e.name == "b-s000"]
    assert entry.description is not None and len(entry.description) == 1536
    assert entry.description.endswith("…")
    # Total budget, default model: ~30,000 characters for the whole listing (built-ins included);
    # user skills (sorted by name, listed first) lose their descriptions from the end.
    full, names = _capture(tmp_path, 120, 324, "")
    ours = [e for e in full.entries if e.name in set(names)]
    assert [e.name for e in ours] == names
    bare = [e.description is None for e in ours]
    assert bare == sorted(bare) and 40 <= sum(bare) <= 60
    assert 29_000 <= full.chars <= 30_000
    builtins = [e for e in full.entries if e.name not in set(names)]
    assert len(builtins) >= BUILT_IN_MIN, builtins
    # Built-ins mostly keep theirs; near the cap the last ones can lose it too (docs/checks.md).
    kept = [e.description is not None for e in builtins]
    assert kept == sorted(kept, reverse=True) and sum(kept) >= len(builtins) - 3
    assert full.entries[: len(names)] == tuple(ours)  # the user's skills come first
    # claude-sonnet-4-6 (and claude-haiku-4-5): ~8,000 characters.
    small, names = _capture(tmp_path, 120, 324, "claude-sonnet-4-6")
    assert 7_500 <= small.chars <= 8_000
    assert sum(1 for e in small.entries if e.name in set(names) and e.description is None) >= 115


def test_a_standalone_skill_is_listed_under_its_own_name(tmp_path: Path, claude_cli: Path) -> None:
    """Issue 30: the checkout is named otherwise and has siblings with a SKILL.md of their own;
    the check installs the skill alone, from a copy named after it, and finds it listed whole."""
    from tests.helpers.repo_shapes import skill, standalone_skill

    root = standalone_skill(tmp_path / "checkout")
    skill(tmp_path, "sibling")  # beside the checkout: never installed
    env = _environ(tmp_path)
    repo = discover(root, root)
    [one] = install_sets(repo)
    assert [(m.skill, m.dir) for m in one.members] == [("tidy-notes", root)]
    report = _check(root, env)
    [sl] = report.sets
    assert [(s.skill, s.status) for s in sl.skills] == [("tidy-notes", "whole")]
    assert report.findings == ()
