"""`evolve-action init`: draft trigger queries and eval cases for the skills that have none.

Owns: the flags of `init`, starting the scripted model server for `--scripted` (the demo's policy,
whose `draft` rule answers from the skill text in the request), and the console text: the
estimate before drafting, what was drafted per skill, the measured cost, the first sweep's
estimate (the one `run all --new --dry-run` prints, with its models and why), the `--check` misses, the workflow files and the commands to review, run and
commit. The work is `flows.run_init`. Exit codes: 0 done; 2 no credentials (without
`--scripted`), an unknown `--skill`, or an unusable repository.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from pathlib import Path
from typing import Any

from evolve_action import flows
from evolve_action.cli._common import (
    Invocation,
    require_positive,
    split_list,
)
from evolve_action.cli._flags import add_repo_flags
from evolve_action.errors import UsageError
from evolve_action.events import LineReporter
from evolve_action.modelserver import ModelServer


def register(subparsers: Any) -> None:
    """Add `init` to the top-level commands."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "init",
        help="draft trigger queries and eval cases for the skills that have none",
        description=(
            "For every skill without definitions (or each --skill), ask the judge model for "
            "trigger queries (should and should-not) and eval cases grounded in the skill's "
            "SKILL.md body, gate them, and write evals/<skill>/triggers.yaml and evals.yaml, "
            "each marked as a draft to review. Authored files are never overwritten (--force "
            "keeps a backup); results files are never touched. See docs/init.md."
        ),
    )
    add_repo_flags(parser)
    parser.add_argument(
        "--skill",
        action="append",
        metavar="NAME",
        help="draft only these skills, even when they have definitions (repeatable, "
        "comma-separated)",
    )
    parser.add_argument(
        "--should",
        type=int,
        default=10,
        metavar="N",
        help="should-trigger queries to ask for (default 10)",
    )
    parser.add_argument(
        "--should-not",
        type=int,
        default=10,
        metavar="N",
        help="should-not-trigger queries to ask for (default 10)",
    )
    parser.add_argument(
        "--evals",
        type=int,
        default=2,
        metavar="N",
        help="eval cases to ask for per skill (default 2; 0: triggers only)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace authored files and workflows, keeping each as <name>.bak",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="run the drafted triggers once (in a throwaway copy) and list the queries the "
        "skill misses or wrongly takes",
    )
    parser.add_argument(
        "--workflow",
        action="store_true",
        help="also write .github/workflows/evolve-pr.yml and evolve-gate.yml from the tested "
        "examples",
    )
    parser.add_argument(
        "--judge-model", default=None, metavar="ID", help="the drafting model (default: judge)"
    )
    parser.add_argument(
        "--jobs", type=int, default=4, help="concurrent drafting requests (default 4)"
    )
    parser.add_argument(
        "--scripted",
        action="store_true",
        help="draft with the built-in scripted model server (offline, free; for trying it)",
    )
    parser.set_defaults(handler=handle)


def handle(inv: Invocation) -> int:
    """Resolve the flags, run the init flow, print what it did."""
    args = inv.args
    for flag, value in (("--should", args.should), ("--should-not", args.should_not)):
        require_positive(flag, value, "at least 1")
    if args.evals < 0:
        raise UsageError(f"--evals {args.evals}: want 0 or more (0: triggers only)")
    require_positive("--jobs", args.jobs, "at least 1")
    out = inv.stdout
    with contextlib.ExitStack() as stack:
        environ = dict(inv.environ)
        if args.scripted:
            server = stack.enter_context(
                ModelServer(flows.demo_policy(), port=0, keep_requests=False)
            )
            cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evolve-init-")))
            environ = flows.scripted_environ(environ, base_url=server.base_url, cache_dir=cache)
            out.write(
                f"init: --scripted: drafting with the scripted model server at {server.base_url} "
                "(offline, free; it drafts from the skill text it receives)\n"
            )
        outcome = flows.run_init(
            flows.InitOptions(
                cwd=inv.cwd,
                environ=environ,
                root=args.root,
                layout=args.layout,
                skills=split_list(args.skill),
                should=args.should,
                should_not=args.should_not,
                evals=args.evals,
                force=args.force,
                check=args.check,
                workflow=args.workflow,
                judge_model=args.judge_model,
                jobs=args.jobs,
            ),
            reporter=LineReporter(out),
            on_step=lambda step: _planned(inv, step),
        )
    _print(inv, outcome, scripted=args.scripted, evals_asked=args.evals)
    return 0


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def _planned(inv: Invocation, step: flows.InitPlanned) -> None:
    inv.stdout.write(
        f"init: drafting {len(step.skills)} skill(s) with {step.model}: about "
        f"{step.input_tokens:,} input tokens, estimated {_usd(step.estimate_usd)}\n"
    )
    inv.stdout.flush()


def _print(
    inv: Invocation, outcome: flows.InitOutcome, *, scripted: bool, evals_asked: int
) -> None:
    out, root = inv.stdout, outcome.root
    for warning in outcome.config_warnings:
        inv.stderr.write(f"warn: {warning}\n")

    def rel(path: Path) -> str:
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

    for path in outcome.workflows:
        out.write(f"wrote {rel(path)}\n")
    for path in outcome.workflow_backups:
        out.write(f"  (kept the old workflow as {rel(path)})\n")
    for path in outcome.workflows_kept:
        out.write(f"kept {rel(path)} (exists; --force replaces it, keeping a backup)\n")
    if outcome.workflows:
        out.write(
            f"  add the repository secret {flows.WORKFLOW_SECRET}: Settings → Secrets and "
            "variables → Actions → New repository secret; pin OWNER/evolve-action to a "
            "release's commit SHA in the workflow files\n"
        )
    if not outcome.drafts:
        out.write("init: every skill has definitions: nothing to draft (use --skill NAME)\n")
        return
    for d in outcome.drafts:
        head = f"{d.plugin}/{d.skill}"
        if d.error:
            out.write(f"{head}: not drafted: {d.error}\n")
            continue
        lang = f", language {d.language}" if d.language else ""
        empty = [what for what, n in (("triggers", d.should), ("evals", d.evals)) if n == 0]
        out.write(
            f"{head}: {d.should} should + {d.should_not} should-not queries, {d.evals} eval "
            f"case(s){lang}; {len(d.dropped)} dropped by the gates\n"
        )
        for drop in d.dropped:
            out.write(f"  dropped ({drop.reason}): {drop.text}\n")
        for path in d.written:
            out.write(f"  wrote {rel(path)}\n")
        for path in d.backups:
            out.write(f"  kept the authored file as {rel(path)}\n")
        for path in d.kept:
            out.write(f"  kept {rel(path)} (authored; --force replaces it, keeping a backup)\n")
        if empty and evals_asked:
            out.write(f"  no {' or '.join(empty)} file: nothing on it passed the gates\n")
        elif not d.should:
            out.write("  no triggers file: a side had no query after the gates\n")
    for finding in outcome.findings:
        out.write(f"error: a drafted file failed the checks and was removed: {finding}\n")
    out.write(f"drafting cost: {_usd(outcome.cost_usd)}{' (scripted)' if scripted else ''}\n")
    if outcome.sweep is not None:
        models = ", ".join(outcome.sweep.sessions) or "no model"
        out.write(
            f"first sweep (what `run all --new --dry-run` plans): {outcome.planned_triggers} "
            f"trigger queries, {outcome.planned_evals} eval cases, on {models} "
            f"({outcome.sweep_why})\n"
        )
        out.write(outcome.sweep.line())
        if len(outcome.sweep.sessions) > 1:
            out.write(f"  (one model costs less: run all --new --model {outcome.check_model})\n")
    if outcome.checked is not None:
        out.write(f"check: one run of every drafted query with {outcome.check_model}\n")
        if not outcome.checked:
            out.write("check: every drafted query went the right way\n")
        for q in outcome.checked:
            what = "missed (should trigger)" if q.should_trigger else "wrongly took"
            out.write(f"check: {q.plugin}/{q.skill} {what}: {q.query}\n")
        if outcome.checked:
            out.write(
                "  decide per query whether the query or the description is wrong, and edit it\n"
            )
    if any(d.written for d in outcome.drafts):
        out.write(
            "next: review the drafts (git diff; delete the DRAFT comment when done), then\n"
            "  evolve-action run checks\n"
            "  evolve-action run all --new --dry-run     # what the first sweep runs and costs\n"
            "  evolve-action run all --new               # evaluate, writes results files\n"
            "  git add -A && git commit -m 'Evals for skills that had none'\n"
        )
    out.flush()
