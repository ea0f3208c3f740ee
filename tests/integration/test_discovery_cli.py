"""Discovery agrees with Claude Code (issue 30): the bundled CLI is the oracle for which skills load.

For each layout fixture the real CLI is started offline against a scripted server, as the listing
check starts it, in a copy of the repository (so project skills under `.claude/skills`, symlinked
or not, load as they do for anyone working there). Plugins are loaded the way users get them:
a marketplace is added (`claude plugin marketplace add --scope project`) and every entry it lists
is installed (remote entries cannot be fetched offline and fail, as they would on an air-gapped
machine); any other plugin is loaded with `--plugin-dir`. The skills the CLI lists (minus its
built-in ones) must be exactly the skills `discover` finds, namespaced as the CLI namespaces them
(`plugin:skill` for plugin skills, the bare name for project skills).

Where the CLI cannot load a shape as it is, a rule stands in: a standalone skill repository (a
root SKILL.md, no manifest) is installed by copying it into `.claude/skills/<name>/` (what
skill-creator tells its users to do), named by its frontmatter.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.repo_shapes import (
    MANIFEST,
    MARKETPLACE,
    commands_beside_skills,
    dot_dot_source,
    dot_source_list,
    linked_project_skills,
    marketplace_entry_rules,
    marketplace_root_skill_plugin,
    namespace_from_plugin_json,
    nested_and_underscored,
    plugin_json_skills,
    project_beside_plugins,
    project_skills,
    refused_plugins,
    refused_root_plugin,
    remote_marketplace,
    remote_with_codex_twin,
    root_skill_marketplace_evals,
    root_skill_plugin,
    skills_key_list,
    skills_key_string,
    skills_list_marketplace,
    standalone_skill,
    symlinked_project_skills,
)

from evolve_action.harness import LISTING_ANCHOR, SessionSpec, run_session
from evolve_action.modelserver import ModelServer
from evolve_action.repo import PROJECT_SKILLS, Repository, discover, parse_frontmatter

pytestmark = pytest.mark.integration


LAYOUTS: dict[str, Callable[[Path], Path]] = {
    "standalone-skill": standalone_skill,
    "single-skill-plugin": root_skill_plugin,
    "marketplace-single-skill-plugin": marketplace_root_skill_plugin,
    "skills-key-string": skills_key_string,
    "skills-key-list": skills_key_list,
    "plugin-json-skills-in-marketplace": plugin_json_skills,
    "nested-and-underscored": nested_and_underscored,
    "marketplace-local-and-remote": remote_marketplace,
    "strict-false-skills-lists": skills_list_marketplace,
    "marketplace-entry-rules": marketplace_entry_rules,
    "root-entry-with-skills-list": dot_source_list,
    "project-skills": project_skills,
    "project-skills-symlinked": symlinked_project_skills,
    "project-skills-linked-one-by-one": linked_project_skills,
    "project-beside-plugins": project_beside_plugins,
    "refused-plugins": refused_plugins,
    "refused-dot-dot-source": dot_dot_source,
    "refused-root-plugin": refused_root_plugin,
    "remote-with-codex-twin": remote_with_codex_twin,
    "commands-beside-skills": commands_beside_skills,
    "root-skill-marketplace-evals": root_skill_marketplace_evals,
    "namespace-from-plugin-json": namespace_from_plugin_json,
}


def _environ(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    return env


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _listed(body: dict[str, Any]) -> set[str]:
    """The names of the listing's `- name: description` lines (`- dir (name): …` → `dir`),
    read by the test itself, not by the code under test."""
    texts = [t for t in _texts(body) if LISTING_ANCHOR in t]
    assert texts, "the CLI sent no skill listing"
    listing = texts[-1].split(LISTING_ANCHOR, 1)[1]
    names = set()
    for line in listing.splitlines():
        if line.startswith("- "):
            names.add(line[2:].split(": ", 1)[0].split(" (", 1)[0])
    return names


def _cli_lists(
    workspace: Path, env: dict[str, str], cli: Path, *, plugin_dirs: tuple[Path, ...] = ()
) -> set[str]:
    with ModelServer({"rules": [{"text": "ok"}]}, port=0) as srv:
        run_env = {**env, "ANTHROPIC_BASE_URL": srv.base_url, "ANTHROPIC_API_KEY": "sk-test"}
        config = workspace.parent / f"{workspace.name}.config"
        config.mkdir()
        run_env["CLAUDE_CONFIG_DIR"] = str(config)
        market = workspace / MARKETPLACE
        if market.is_file():
            _claude(cli, workspace, run_env, "plugin", "marketplace", "add", str(workspace))
            doc = json.loads(market.read_text())
            for entry in doc["plugins"]:  # every entry: the CLI decides what installs
                _claude(
                    cli, workspace, run_env, "plugin", "install", f"{entry['name']}@{doc['name']}"
                )
        transcript = asyncio.run(
            run_session(
                SessionSpec(
                    prompt="hello",
                    workspace=workspace,
                    model="",
                    max_turns=1,
                    allowed_tools=("Skill",),
                    permission_mode="default",
                    plugin_dirs=plugin_dirs,
                    config_dir=config,
                ),
                environ=run_env,
            )
        )
        bodies = [r["body"] for r in srv.requests if r["path"] == "/v1/messages"]
    assert bodies, transcript.error_message
    return _listed(bodies[0])


def _claude(cli: Path, cwd: Path, env: dict[str, str], *args: str) -> None:
    """One `claude plugin …` command, project scope (the sessions read project settings only)."""
    subprocess.run(
        [str(cli), *args, "--scope", "project"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,  # a remote entry fails offline: the listing shows what loaded
    )


def _workspace(root: Path, dest: Path, env: dict[str, str]) -> Path:
    """A copy of the repository (symlinks kept), in git, where the CLI is started."""
    shutil.copytree(root, dest, symlinks=True)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "shape", "--allow-empty"]):
        subprocess.run(
            ["git", *args],
            cwd=dest,
            env={
                **env,
                "GIT_AUTHOR_NAME": "t",
                "GIT_AUTHOR_EMAIL": "t@t",
                "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t",
            },
            check=True,
            capture_output=True,
        )
    return dest


def _standalone_name(root: Path) -> str | None:
    """The stand-in's install name: the frontmatter `name` of a root SKILL.md with no manifest."""
    if not (root / "SKILL.md").is_file() or (root / MANIFEST).exists():
        return None
    for line in (root / "SKILL.md").read_text().splitlines()[1:]:
        if line.startswith("name:"):
            return line.split(":", 1)[1].strip()
    return root.name


def _manifest_name(plugin_dir: Path) -> str:
    """The plugin.json `name`, read by the test itself ("" without one)."""
    try:
        value = json.loads((plugin_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return ""
    return value.get("name", "") if isinstance(value, dict) else ""


def commands_of(repo: Repository) -> set[str]:
    """The listing names of the plugins' commands, by source (`commands/**/*.md` of each plugin
    discovery finds): `plugin:name`, a subdirectory adding a segment (`kit:ops:deploy`)."""
    names = set()
    for plugin in repo.plugins:
        commands = plugin.dir / "commands"
        for md in commands.rglob("*.md") if commands.is_dir() else ():
            parts = md.relative_to(commands).with_suffix("").parts
            names.add(":".join((_manifest_name(plugin.dir) or plugin.name, *parts)))
    return names


def expected_by_discovery(repo: Repository) -> set[str]:
    """What discovery finds, namespaced as the CLI lists it. A skill with
    `disable-model-invocation: true` is found (a user can still run it) but never shown to the
    model, so the listing leaves it out (measured on anthropics/claude-plugins-official); a skill
    named like a command of its plugin is listed as the command (measured, CLI 2.1.332: one
    `kit:ship` line, the command's description)."""
    names = set()
    for sk in repo.skills():
        front = parse_frontmatter(sk.skill_md.read_text(), sk.skill_md)
        if front is not None and front.fields.get("disable-model-invocation") == "true":
            continue
        plugin = repo.plugin(sk.plugin)
        assert plugin is not None
        project = repo.rel(sk.dir).startswith(PROJECT_SKILLS + "/")
        standalone = not plugin.manifest and sk.dir == repo.root and repo.layout == "single"
        namespace = _manifest_name(plugin.dir) or sk.plugin  # the CLI's: plugin.json `name`
        names.add(sk.name if project or standalone else f"{namespace}:{sk.name}")
    return names - commands_of(repo)


@pytest.fixture(scope="module")
def built_ins(tmp_path_factory: pytest.TempPathFactory, claude_cli: Path) -> set[str]:
    """The CLI's own skills, listed in an empty repository."""
    tmp = tmp_path_factory.mktemp("empty")
    (tmp / "repo").mkdir()
    env = _environ(tmp)
    return _cli_lists(_workspace(tmp / "repo", tmp / "ws", env), env, claude_cli)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_the_cli_lists_exactly_the_skills_discovery_finds(
    tmp_path: Path, name: str, claude_cli: Path, built_ins: set[str]
) -> None:
    root = LAYOUTS[name](tmp_path / "shape")
    env = _environ(tmp_path)
    ws = _workspace(root, tmp_path / "ws" / "shape", env)
    plugin_dirs: tuple[Path, ...] = ()
    if not (ws / MARKETPLACE).exists() and ((ws / MANIFEST).exists() or (ws / "skills").is_dir()):
        plugin_dirs = (ws,)
    installed = _standalone_name(root)
    if installed is not None:  # the stand-in: installed by copying, as skill-creator says
        shutil.copytree(
            root, ws / PROJECT_SKILLS / installed, ignore=shutil.ignore_patterns(".git")
        )
    repo = discover(root, root)
    # the commands, told apart by source: the CLI lists them beside skills in the same form
    listed = _cli_lists(ws, env, claude_cli, plugin_dirs=plugin_dirs) - built_ins
    listed -= commands_of(repo)
    found = expected_by_discovery(repo)
    assert listed == found, f"CLI lists {sorted(listed)}, discovery finds {sorted(found)}"
    assert found or repo.refused, "every fixture has skills, or a plugin the CLI refuses"
