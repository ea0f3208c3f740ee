"""The README stays honest: its commands exist and parse, its links resolve, CI runs its test command."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from evolve_action.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _tour_commands() -> list[str]:
    """Every concrete `evolve-action …` line in the README's sh code blocks (not usage synopses)."""
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            for part in line.split("&&"):
                part = part.strip()
                match = re.match(r"(?:\.venv/bin/)?evolve-action\s+(.*)", part)
                if match:
                    commands.append(match.group(1))
    return commands


@pytest.mark.parametrize("command", _tour_commands())
def test_readme_command_parses(command: str) -> None:
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


def test_readme_links_resolve() -> None:
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", README):
        assert (REPO / target).exists(), f"README links to missing {target}"


def test_every_command_is_documented() -> None:
    parser = build_parser()
    top = next(a for a in parser._actions if a.dest == "command")
    for name in top.choices:  # type: ignore[union-attr]
        if name == "run":
            continue
        assert f"`{name}`" in README or f"evolve-action {name}" in README, name
