"""The command-line front end: parse, build options, pick a reporter, call an engine, map to exit codes.

Owns: `main` (and `console_main`, the process entry), the parser tree, the exit-code table
(docs/cli.md) and the one place the secrets of the environment a run was given are registered
with `redact` (`SECRET_ENV_NAMES`, plus every `*_TOKEN`/`*_API_KEY`-style name), for the whole
run and only for it. Never holds business logic:
each subcommand lives in `evolve_action.cli._<name>` and registers itself via
`register(subparsers)`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, TextIO

from evolve_action import __version__, github, harness, redact
from evolve_action.cli import (
    _action,
    _all,
    _checks,
    _demo,
    _evals,
    _export,
    _init,
    _install,
    _model_server,
    _report,
    _shard,
    _triggers,
)
from evolve_action.cli._common import Handler, Invocation
from evolve_action.errors import EvolveError, did_you_mean, first_evolve_error
from evolve_action.github import annotate, is_actions
from evolve_action.sanitise import gate

# Subcommands of `evolve-action run …` and top-level subcommands, in help order; each module
# registers its parser and handler (`register(subparsers)`).
RUN_COMMANDS: tuple[ModuleType, ...] = (_checks, _triggers, _evals, _all)
TOP_COMMANDS: tuple[ModuleType, ...] = (
    _model_server,
    _report,
    _demo,
    _action,
    _shard,
    _install,
    _export,
    _init,
)

SECRET_ENV_NAMES: tuple[str, ...] = (
    *harness.CREDENTIAL_VARS,
    *harness.OPENAI_CREDENTIAL_VARS,
    "GITHUB_TOKEN",
    "GH_TOKEN",
    *(f"INPUT_{n.upper()}" for n in github.SECRET_INPUTS),
    *(f"INPUT_{n.upper().replace('_', '-')}" for n in github.SECRET_INPUTS),
)
"""Variables whose values are secrets: redacted from everything the run writes or posts."""

EXIT_OK, EXIT_FAILURES, EXIT_ERROR, EXIT_BUG, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

log = logging.getLogger(__name__)


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


def build_parser() -> argparse.ArgumentParser:
    """Build the full parser tree from the registered command modules."""
    parser = Parser(
        prog="evolve-action",
        description="Evaluate coding-agent skills: static checks, trigger accuracy, behavioural evals.",
    )
    parser.add_argument("--version", action="version", version=f"evolve-action {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging to stderr")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = top.add_parser("run", help="run one evaluation tier (checks, triggers, evals) or all")
    run.set_defaults(handler=_action.handle_run)  # no tier: the GitHub Action's `mode: run`
    run_sub = run.add_subparsers(dest="tier", metavar="TIER")
    for command in RUN_COMMANDS:
        command.register(run_sub)
    for command in TOP_COMMANDS:
        command.register(top)
    return parser


def main(
    argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    cwd: Path | None = None,
) -> int:
    """Run the CLI and return its exit code (0 ok, 1 failures/gate, 2 error, 3 bug, 130 interrupt)."""
    env = dict(os.environ if environ is None else environ)
    # Every secret of the environment (and whatever the run masks) becomes `***` in every file,
    # comment, summary, output, annotation and console line of this run.
    with redact.scoped(), fewer_collections():
        redact.register_environ(env, SECRET_ENV_NAMES)
        return _run(argv, env, stdout=stdout, stderr=stderr, cwd=cwd)


def console_main() -> int:
    """The console script and `python -m evolve_action`: `main`, then an exit that rescans nothing.

    A whole-repository command keeps everything it decoded to the end (the results cache), and
    the interpreter's collections at shutdown would walk all of it once more: about 0.8 s of CPU
    at 300 skills. Freezing the heap first moves those objects out of the collector's sight;
    they are still freed as the interpreter exits. Only for a process that ends right after:
    in-process callers (tests, the action's own flows) use `main`.
    """
    code = main()
    gc.freeze()
    return code


GC_FIRST_THRESHOLD = 100_000
"""Allocations between collections of the cyclic garbage collector's youngest generation while
a command runs (CPython's default is 700)."""


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run with the garbage collector's first threshold at `GC_FIRST_THRESHOLD`; restore it after.

    A whole-repository command builds hundreds of thousands of small objects (every results
    file and definition of a 300-skill marketplace, the report's rows) and keeps many of them to
    the end. With the default threshold the collector rescans the growing heap again and again:
    about a second of CPU at 300 skills when the results model was made of dataclasses (its
    msgspec structs are not tracked), still a tenth of a second now (`bench/sweep.py`). Cyclic
    garbage waits up to 100,000 allocations instead of 700 before it is collected; reference
    counting frees everything else as before.
    """
    old = gc.get_threshold()
    gc.set_threshold(GC_FIRST_THRESHOLD, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _run(
    argv: Sequence[str] | None,
    env: dict[str, str],
    *,
    stdout: TextIO | None,
    stderr: TextIO | None,
    cwd: Path | None,
) -> int:
    # Every console line passes the untrusted-text gate (no raw escapes; under Actions, no line
    # that starts a workflow command unless `github.workflow` wrote it).
    out = gate(stdout or sys.stdout, actions=is_actions(env))
    err = gate(stderr or sys.stderr, actions=is_actions(env))
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse: --help/--version exit 0
        return int(exc.code or 0)
    except ParseFailure as exc:
        err.write(str(exc))
        return EXIT_ERROR
    if extra:
        err.write(unknown_arguments(parser, args, extra))
        return EXIT_ERROR
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=err)
    if not args.verbose:  # the SDK logs its own teardown of a killed agent (timeouts) as errors
        logging.getLogger("claude_agent_sdk").setLevel(logging.CRITICAL)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(out)
        return EXIT_ERROR
    invocation = Invocation(args=args, environ=env, stdout=out, stderr=err, cwd=cwd or Path.cwd())
    caught = harness.Caught()
    try:
        try:
            with contextlib.ExitStack() as stack:
                caught = stack.enter_context(harness.termination_signals())
                stack.enter_context(harness.scratch())
                if getattr(args, "keep_workspaces", False) is True:
                    harness.keep_scratch()
                if _runs_agents(args):
                    # The model gateway holds the credentials; `--max-cost-usd` is its hard cap.
                    stack.enter_context(
                        harness.gateways(limit_usd=getattr(args, "max_cost_usd", None))
                    )
                    conf = stack.enter_context(harness.confined(env, root=_root_of(args)))
                    _say_confinement(conf, env, out, err)
                return handler(invocation)
        except BaseExceptionGroup as group:  # an engine's TaskGroup: report the input problem
            first = first_evolve_error(group)
            if first is None:
                raise
            raise first from None
    except EvolveError as exc:
        err.write(f"error: {exc.render(_root_of(args))}\n")
        if env.get("GITHUB_ACTIONS") == "true":
            shown = exc.path.as_posix() if exc.path else None
            annotate(out, "error", exc.message, file=shown, line=exc.line)
        return EXIT_ERROR
    except KeyboardInterrupt:
        err.write("interrupted\n")
        return caught.exit_code  # 130 SIGINT, 143 SIGTERM, 129 SIGHUP
    except Exception as exc:  # a bug: one line, traceback at debug level
        log.debug("unexpected error", exc_info=True)
        err.write(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "  please report this (re-run with -v for a traceback)\n"
        )
        return EXIT_BUG


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


def _runs_agents(args: argparse.Namespace) -> bool:
    command = getattr(args, "command", None)
    tier = getattr(args, "tier", None)
    return (
        tier in ("triggers", "evals", "all")
        or command in ("demo", "pr", "shard")
        or (command == "init" and getattr(args, "check", False) is True)
        or (
            command == "run" and tier is None  # the action's `mode: run`
        )
    )


def _say_confinement(
    conf: harness.Confinement, env: Mapping[str, str], out: TextIO, err: TextIO
) -> None:
    """The one line about how agents are confined; under Actions an unconfined run is also a
    warning annotation ("agent ran unconfined"), so it shows on the run's page."""
    line = conf.note()
    if line:
        err.write(line + "\n")
    if conf.unconfined and is_actions(env):
        annotate(out, "warning", line.removeprefix("warning: "))


def _root_of(args: argparse.Namespace) -> Path | None:
    root = getattr(args, "root", None)
    return root if isinstance(root, Path) else None


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
