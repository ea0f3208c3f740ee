"""`evolve-action demo`: evaluate a copy of the example repository end to end, offline by default.

Owns: the flags of `demo` and the console text around the run (where the copy is, which model
answers, the closing summary). The pipeline itself is `run all` — checks → triggers → evals →
report — called in-process through `commands.all.handle` with the copy as `--root`, so the demo
exercises exactly the code a real run does. Without Anthropic credentials in the environment (or
with `--scripted`) the agent and the judge talk to the scripted model server, started in-process
with the bundled demo policy; with credentials the demo refuses to spend money unless `--yes` is
given (it never prompts: CI has no stdin). Exit codes: those of `run all`; 2 when the example
repository is missing, `--out` is unusable, or credentials are present without `--yes`/`--scripted`.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from evolve_action import flows as demo
from evolve_action import repo
from evolve_action.cli import _all as run_all
from evolve_action.cli._common import Invocation, default_jobs, require_positive, split_list
from evolve_action.errors import UsageError

DEFAULT_RUNS = 1
"""Trigger sessions per query in the demo (`run all` defaults to 3; one keeps the demo quick)."""
DEFAULT_MODEL = "anthropic/claude-sonnet-5"
"""The one model the demo evaluates (`run all` would evaluate every configured model)."""


def register(subparsers: Any) -> None:
    """Add `demo` to the top-level commands."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="evaluate a copy of the example plugin repository end to end (offline by default)",
        description=(
            "Copy the example plugin repository (examples/) to a fresh directory and run the whole "
            "pipeline on the copy: checks, triggers, evals (with and without each skill) and the "
            "report. Without ANTHROPIC_API_KEY/CLAUDE_CODE_OAUTH_TOKEN the real Claude Code CLI "
            "and the judge talk to the built-in scripted model server: offline, free, "
            "deterministic. Your own tree is never modified."
        ),
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("examples"),
        help="the plugin repository to copy and evaluate (default: examples, from the working directory)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to put the copy: a new or empty directory (default: a fresh temp dir, printed)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="concurrent agent sessions (default: (CPUs+1)/2, at least 2)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        help=f"trigger sessions per query (default {DEFAULT_RUNS})",
    )
    parser.add_argument(
        "--model",
        action="append",
        metavar="ID",
        help=f"model(s) to evaluate, as for run all (default: {DEFAULT_MODEL})",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the agents' temp workspaces (paths are printed)"
    )
    backend = parser.add_mutually_exclusive_group()
    backend.add_argument(
        "--scripted",
        action="store_true",
        help="use the scripted model server even when Anthropic credentials are set",
    )
    backend.add_argument(
        "--yes",
        action="store_true",
        help="with Anthropic credentials set: use the real API (this costs money)",
    )
    parser.add_argument(
        "--log",
        type=Path,
        default=None,
        metavar="FILE",
        help="append the scripted model server's request log (JSON lines) to FILE",
    )
    parser.set_defaults(handler=handle)


def _run_all_args(
    root: Path, *, jobs: int, runs: int, keep: bool, models: list[str]
) -> argparse.Namespace:
    """The parsed flags of `run all --root ROOT …`, from `run all`'s own parser."""
    parser = argparse.ArgumentParser(prog="evolve-action run")
    run_all.register(parser.add_subparsers(dest="tier"))
    argv = ["all", "--root", str(root), "--jobs", str(jobs), "--runs", str(runs)]
    for model in models:
        argv += ["--model", model]
    if keep:
        argv.append("--keep-workspaces")
    return parser.parse_args(argv)


def _preflight(
    source: Path,
    *,
    models: list[str],
    log_path: Path | None,
    environ: Mapping[str, str],
    cwd: Path,
) -> None:
    """Reject a bad `--model` or `--log` before anything is copied or started.

    Without this a typo in `--model` surfaced only after the copy and the checks step, leaving
    a half-made demo directory behind. A missing source is left to `demo.copy_examples`, which
    explains where it looked.
    """
    if log_path is not None:
        try:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            with log_path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise UsageError(
                f"--log {log_path}: cannot open the request log: {exc.strerror or exc}",
                hint="pass a writable --log path",
            ) from None
    if not source.is_dir():
        return
    from evolve_action.catalog import build_catalog, resolve_models
    from evolve_action.config import resolve_repository

    _, config = resolve_repository(source, cwd, None, environ)
    resolve_models(
        build_catalog(config.providers),
        model_flags=split_list(models),
        config_models=config.models,
        config_harnesses=config.harnesses,
        harness_flags=(),
        available={"claude"},
        tier="triggers",
    )


def handle(inv: Invocation) -> int:
    """Copy the examples, pick the model backend, run `run all` on the copy, print the summary."""
    args = inv.args
    out, err = inv.stdout, inv.stderr
    jobs = args.jobs if args.jobs is not None else max(2, default_jobs())
    require_positive("--jobs", jobs, "a positive number of concurrent sessions")
    require_positive("--runs", args.runs, "at least 1")
    choice = demo.choose_backend(inv.environ, scripted=args.scripted, yes=args.yes)
    if choice.backend is None:
        raise UsageError(
            f"{choice.credential} is set: the demo would run the agent and the judge on the real "
            "Anthropic API, which costs money",
            hint="pass --yes to use the real API, or --scripted to run offline against the "
            "scripted model server",
        )
    source = args.root if args.root.is_absolute() else inv.cwd / args.root
    target = (
        None if args.out is None else args.out if args.out.is_absolute() else inv.cwd / args.out
    )
    models = args.model or [DEFAULT_MODEL]
    log_path = None if args.log is None else inv.cwd / args.log
    _preflight(source, models=models, log_path=log_path, environ=inv.environ, cwd=inv.cwd)
    copy = demo.copy_examples(source, target, label=str(args.root))
    out.write(f"demo: copied {args.root} to {copy} (your tree is not modified)\n")
    with ExitStack() as stack:
        if choice.backend is demo.Backend.SCRIPTED:
            from evolve_action.modelserver import ModelServer

            server = stack.enter_context(
                ModelServer(
                    demo.demo_policy(),
                    port=0,
                    log_path=log_path,
                    log_bodies=False,
                    keep_requests=False,
                )
            )
            cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evolve-demo-")))
            environ = demo.scripted_environ(inv.environ, base_url=server.base_url, cache_dir=cache)
            why = "--scripted" if choice.credential else "no Anthropic credentials set"
            out.write(
                f"demo: {why}: Claude Code and the judge talk to the scripted model server at "
                f"{server.base_url} (offline, free; policy: evolve_action/"
                f"{'/'.join(demo.POLICY_RESOURCE)})\n"
            )
        else:
            environ = dict(inv.environ)
            out.write(f"demo: using the real Anthropic API ({choice.credential}, --yes)\n")
        out.flush()
        run_args = _run_all_args(copy, jobs=jobs, runs=args.runs, keep=args.keep, models=models)
        code = run_all.handle(
            Invocation(args=run_args, environ=environ, stdout=out, stderr=err, cwd=inv.cwd)
        )
    summary = demo.summarise(repo.discover(copy, copy))
    out.write(demo.render_summary(summary))
    out.flush()
    return code
