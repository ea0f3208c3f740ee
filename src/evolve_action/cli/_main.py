"""The command-line front end: parse, build options, pick a reporter, call an engine, map to exit codes.

Owns: `main` (and `console_main`, the process entry), the parser tree, the exit-code table
(docs/cli.md) and the one place the secrets of the environment a run was given are registered
with `redact` (`SECRET_ENV_NAMES`, plus every `*_TOKEN`/`*_API_KEY`-style name), for the whole
run and only for it, and printing the one console line about confinement
(`flows.confinement_line`): a confined run's note before the command, an unconfined run's short
warning once after it (`flows.says_unconfined`: never on a dry run, a usage error, or for `pr`,
whose flow says it in the comment too). Never holds business logic:
each subcommand lives in `evolve_action.cli._<name>` and registers itself via
`register(subparsers)`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TextIO

from evolve_action import __version__, flows, github, harness, redact
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
from evolve_action.cli._parser import ParseFailure, Parser, unknown_arguments
from evolve_action.errors import EvolveError, first_evolve_error
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
                conf: harness.Confinement | None = None
                command, tier = getattr(args, "command", None), getattr(args, "tier", None)
                dry_run, check = (getattr(args, n, False) is True for n in ("dry_run", "check"))
                if flows.runs_agents(command, tier, init_check=check):
                    # The model gateway holds the credentials; `--max-cost-usd` is its hard cap.
                    stack.enter_context(
                        harness.gateways(limit_usd=getattr(args, "max_cost_usd", None))
                    )
                    conf = stack.enter_context(harness.confined(env, root=_root_of(args)))
                    if not conf.unconfined:
                        _say_confinement(conf, env, out, err)
                code = handler(invocation)
                late = flows.says_unconfined(command, tier, dry_run=dry_run)
                if conf is not None and conf.unconfined and late:
                    _say_confinement(conf, env, out, err)
                return code
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


def _say_confinement(
    conf: harness.Confinement, env: Mapping[str, str], out: TextIO, err: TextIO
) -> None:
    """Print `flows.confinement_line`: a warning annotation on stdout, or a line on stderr."""
    said = flows.confinement_line(conf, env)
    if said is not None and said.annotation:
        annotate(out, "warning", said.text)
    elif said is not None:
        err.write(said.text + "\n")


def _root_of(args: argparse.Namespace) -> Path | None:
    root = getattr(args, "root", None)
    return root if isinstance(root, Path) else None


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
