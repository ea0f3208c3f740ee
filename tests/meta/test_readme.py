"""The README and docs stay honest: their commands exist and parse, every flag `--help` lists is
documented in the CLI reference (docs/cli.md; and every flag the docs mention exists), links and
anchors resolve, CI runs the README's test command."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from evolve_action.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
CLI_REFERENCE = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [REPO / "README.md", *DOCS, REPO / "BENCHMARKS.md"]

# The commands of the CLI reference, as `evolve-action <words>`.
COMMANDS = [
    "run checks",
    "run triggers",
    "run evals",
    "run all",
    "report",
    "export",
    "model-server",
    "demo",
    "pr",
    "gate",
    "plan",
    "merge",
    "shard",
    "install",
    "init",
]
SHARED = ("run triggers", "run evals", "run all")  # documented in the shared-options table too
# Flags of other programs that the docs mention (pytest's golden switch, the Claude Code CLI's).
FOREIGN_FLAGS = {
    "--update-golden",
    "--output-format",
    "--permission-mode",
    # Codex's own flags (docs/codex.md) and docker build's.
    "--sandbox",
    "--skip-git-repo-check",
    "--build-arg",
    # skill-creator's eval viewer (docs/export.md).
    "--benchmark",
    "--static",
}
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _parser_for(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for word in command.split():
        parser = _subparsers(parser)[word]
    return parser


def _help_flags(command: str) -> set[str]:
    """The long options `evolve-action <command> --help` lists (without --help itself)."""
    help_text = _parser_for(command).format_help()
    options = help_text.split("options:", 1)[1]
    return {
        flag
        for line in options.splitlines()
        if line.lstrip().startswith("-")
        for flag in FLAG.findall(line.split("  ", 2)[1] if line.startswith("  ") else line)
    } - {"--help"}


def _bench_flags() -> set[str]:
    """Flags of the benchmark scripts (BENCHMARKS.md shows how to run them)."""
    return {
        flag
        for script in (REPO / "bench").glob("*.py")
        for flag in re.findall(r'add_argument\(\s*"(--[a-z][a-z0-9-]*)"', script.read_text())
    }


def _all_flags() -> set[str]:
    flags = {"--version", "--verbose", "--help"} | _bench_flags()
    for command in COMMANDS:
        flags |= _help_flags(command)
    return flags


def _section(heading_prefix: str) -> str:
    """README text from the `### `<command>`` heading to the next heading of level ≤ 3."""
    match = re.search(
        rf"^### `{re.escape(heading_prefix)}`.*?(?=^#{{1,3}} )", CLI_REFERENCE, flags=re.S | re.M
    )
    assert match is not None, f"docs/cli.md has no '### `{heading_prefix}`' section"
    return match.group(0)


def _shared_section() -> str:
    match = re.search(r"Options shared by.*?(?=^### )", CLI_REFERENCE, flags=re.S | re.M)
    assert match is not None, "docs/cli.md has no shared-options table"
    return match.group(0)


def _code_commands(text: str) -> list[str]:
    """Every concrete `evolve-action …` invocation in sh/console code blocks (not usage synopses)."""
    commands: list[str] = []
    for lang, block in re.findall(r"```(sh|console)\n(.*?)```", text, flags=re.S):
        lines = block.replace("\\\n", " ").splitlines()
        for line in lines:
            if lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            line = line.split(" #", 1)[0].strip()
            for part in re.split(r"&&|\|", line):
                words = part.strip().split()
                while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                    words.pop(0)  # VAR=value prefixes
                rest = " ".join(words)
                match = re.match(r"(?:\S*/)?evolve-action\s+(.*)", rest)
                if match:
                    commands.append(match.group(1))
    return commands


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


@pytest.mark.parametrize(
    "command",
    sorted({c for page in PAGES for c in _code_commands(page.read_text(encoding="utf-8"))}),
)
def test_documented_command_parses(command: str) -> None:
    args = build_parser().parse_args(shlex.split(command))
    assert getattr(args, "handler", None) is not None, command


def test_readme_has_the_two_setup_commands() -> None:
    assert "evolve-action demo" in README
    assert ".venv/bin/pytest" in README


def test_ci_runs_the_readme_test_command() -> None:
    block = re.search(r"\*\*Run the tests\*\*:\s*```sh\n(.*?)\n```", README, flags=re.S)
    assert block is not None
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    test_command = block.group(1).strip()
    assert test_command.replace("pip install", "pip install -q") in ci or test_command in ci


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_and_anchors_resolve(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)  # code spans: `[x](y)` is no link
    for target, anchor in re.findall(r"\]\(((?!https?:)[^)#\s]*)(?:#([^)\s]*))?\)", text):
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name} links to missing {target}"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), (
                f"{page.name} links to missing #{anchor} in {path.name}"
            )


def test_every_command_is_documented() -> None:
    names = set(_subparsers(build_parser())) - {"run"}
    names |= {f"run {t}" for t in _subparsers(_parser_for("run"))}
    assert names == set(COMMANDS), "update COMMANDS and the CLI reference (docs/cli.md)"
    for name in names:
        assert f"### `{name}`" in CLI_REFERENCE, f"docs/cli.md lacks a '### `{name}`' section"


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_documents_every_flag(command: str) -> None:
    text = _section(command) + (_shared_section() if command in SHARED else "")
    documented = set(FLAG.findall(text))
    missing = _help_flags(command) - documented
    assert not missing, f"docs/cli.md section for `{command}` lacks {sorted(missing)}"


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_synopsis_flags_exist(command: str) -> None:
    section = _section(command)
    synopsis = re.search(r"```\n(evolve-action .*?)```", section, flags=re.S)
    assert synopsis is not None, f"docs/cli.md section for `{command}` has no usage synopsis"
    unknown = set(FLAG.findall(synopsis.group(1))) - _help_flags(command)
    assert not unknown, (
        f"docs/cli.md synopsis of `{command}` names flags --help lacks: {sorted(unknown)}"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_mentioned_flags_exist(page: Path) -> None:
    mentioned = set(FLAG.findall(page.read_text(encoding="utf-8")))
    unknown = mentioned - _all_flags() - FOREIGN_FLAGS
    assert not unknown, f"{page.name} mentions flags no command has: {sorted(unknown)}"


def test_readme_example_policy_answers_as_described() -> None:
    """The quick-start policy serves: the scripted write step, the 529-once fault, the default."""
    import json
    import urllib.error
    import urllib.request

    from evolve_action.modelserver import ModelServer, Policy

    server_doc = (REPO / "docs" / "model-server.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n# policy\.yaml\n(.*?)```", server_doc, flags=re.S)
    assert block is not None, "docs/model-server.md lost its example policy"

    def ask(base: str, prompt: str, system: str | None = None) -> tuple[int, dict[str, object]]:
        body: dict[str, object] = {"model": "claude-sonnet-5", "max_tokens": 64}
        body["messages"] = [{"role": "user", "content": prompt}]
        if system is not None:
            body["system"] = system
        req = urllib.request.Request(
            f"{base}/v1/messages",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    with ModelServer(Policy.from_yaml(block.group(1)), port=0) as srv:
        status, reply = ask(srv.base_url, "make the greeting", "Primary working directory: /w")
        assert status == 200
        assert reply["content"] == [
            {
                "type": "tool_use",
                "id": reply["content"][0]["id"],  # type: ignore[index]
                "name": "Write",
                "input": {"file_path": "/w/hello.txt", "content": "hello\n"},
            }
        ]
        # Without a stated working directory the rule does not apply: nothing is written.
        status, reply = ask(srv.base_url, "make the greeting")
        assert reply["content"] == [{"type": "text", "text": "OK"}]
        assert ask(srv.base_url, "flaky")[0] == 529
        status, reply = ask(srv.base_url, "flaky")
        assert (status, reply["content"]) == (200, [{"type": "text", "text": "recovered"}])
