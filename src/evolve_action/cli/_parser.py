"""The argument parser of the command line: strict options and short usage errors.

Owns: `Parser` (argparse without abbreviated options, whose errors are one line naming the
mistake, a "did you mean" and where to look: `ParseFailure`) and the error for arguments a command
does not take (`unknown_arguments`, naming the commands that do). Never does: define a command's
flags (each command module does) or run anything.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

from evolve_action.errors import did_you_mean


class Parser(argparse.ArgumentParser):
    """argparse with no abbreviated options (`--skil` is never `--skill`) and short usage errors:
    one line naming the mistake, a "did you mean" where a command is misspelt, and where to look."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print `error: <prog>: <message>` (plus a suggestion and the help hint) and exit 2."""
        hint = f"see `{self.prog} --help`"
        if (bad := _INVALID_CHOICE.search(message)) is not None and message.startswith(
            "argument -"
        ):
            word, allowed = (
                bad.group(1),
                re.findall(r"'([^']*)'", message.split("choose from", 1)[-1]),
            )
            message = message.split(" (choose from", 1)[0]
            suggestion = did_you_mean(word, allowed) or f"allowed: {', '.join(allowed)}."
            hint = f"{suggestion} See `{self.prog} --help`"
        elif bad is not None:
            word = bad.group(1)
            choices = _choices(self)
            message = f"unknown command {word!r}"
            suggestion = did_you_mean(word, choices) or f"commands: {', '.join(choices)}."
            hint = f"{suggestion} See `{self.prog} --help`"
        raise ParseFailure(f"error: {self.prog}: {message}\n  hint: {hint}\n")


class ParseFailure(Exception):
    """A usage error found while parsing: its text goes to the CLI's own error stream (exit 2)."""


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)'")


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def unknown_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extra: Sequence[str]
) -> str:
    """The error for arguments the command does not take, naming the commands that do."""
    path = " ".join(p for p in (getattr(args, "command", None), getattr(args, "tier", None)) if p)
    commands = dict(_commands(parser))
    lines = []
    tokens = list(extra)
    while tokens:
        token = tokens.pop(0)
        flag = token.split("=", 1)[0]
        if flag.startswith("-") and "=" not in token and tokens and not tokens[0].startswith("-"):
            token = f"{token} {tokens.pop(0)}"  # the option's value
        takers = [name for name, sub in commands.items() if flag in sub._option_string_actions]
        where = f" (it belongs to {', '.join(takers)})" if flag.startswith("-") and takers else ""
        if flag.startswith("-") and not takers:
            own = commands.get(path, parser)._option_string_actions
            suggestion = did_you_mean(flag, [o for o in own if o.startswith("--")])
            where = f" ({suggestion})" if suggestion else ""
        kind = "option" if flag.startswith("-") else "argument"
        lines.append(f"error: {path or 'evolve-action'}: unknown {kind} {token}{where}\n")
    lines.append(f"  hint: see `evolve-action {path + ' ' if path else ''}--help`\n")
    return "".join(lines)


def _commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command's name and parser, depth first (`run evals`, `pr`, …)."""
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix} {name}".strip()
                found.append((full, sub))
                found.extend(_commands(sub, full))
    return found
