"""The PR job's sharded pair: `mode: plan` splits the touched skills' work into a matrix of shards,
`mode: shard` runs one of them into fragments (`mode: merge` folds them in and publishes as `pr`,
in `flows._action`).

Owns: `plan_or_shard` and the options both read (`run all --new --modified` over the touched
skills, the models the inputs name). Guarantees: the plan and every shard build the same options
from the same `JobContext`, so their plans agree. Never does: publish (no comment, no commit,
no report), or write to the workflow-command stream.
"""

from __future__ import annotations

import json

from evolve_action import events
from evolve_action.flows._pr_job import ActionOutcome, JobContext
from evolve_action.flows._run_all import RunAllOptions
from evolve_action.flows._shard import plan_shards, run_shard
from evolve_action.github import (
    ActionInputs,
    ActionOutputs,
    CommandFiles,
    Touched,
    append_summary,
    write_outputs,
)
from evolve_action.repo import rel_path

__all__ = ["plan_or_shard"]


def _sharded_options(job: JobContext, touched: Touched) -> RunAllOptions:
    """`run all --new --modified` over the touched skills: what `plan` splits and `shard` runs
    (the models the inputs name: none named, the engines' default set)."""
    eo = job.evals_options(
        sorted({s.plugin for s in touched.skills}),
        sorted({s.skill for s in touched.skills}),
        models=job.named_models,
    )
    return RunAllOptions(
        repository=job.repo,
        config=job.config,
        environ=job.agent_env,
        evals=eo,
        runs=job.runs,
        report=False,
    )


def plan_or_shard(
    mode: str,
    inputs: ActionInputs,
    job: JobContext,
    touched: Touched,
    files: CommandFiles,
) -> ActionOutcome:
    """`mode: plan` (the matrix) or `mode: shard` (one shard into fragments); nothing published."""
    opts = _sharded_options(job, touched)
    if mode == "plan":
        assert inputs.shards is not None
        sp = plan_shards(opts, inputs.shards, reporter=events.NullReporter())
        units = sum(len(s.units) for s in sp.shards)
        line = (
            f"evolve-action plan {sp.plan_id}: {units} unit(s) of {len(touched.keys)} touched "
            f"skill(s) in {len(sp.shards)} shard(s)"
        )
        outputs = ActionOutputs(
            status="skipped",
            evaluated_skills=touched.keys,
            matrix=json.dumps(sp.to_json()["matrix"], separators=(",", ":")),
            plan_id=sp.plan_id,
        )
        append_summary(files.summary, line + "\n")
        write_outputs(files.output, outputs)
        return ActionOutcome(exit_code=0, outputs=outputs, lines=(line,), touched=touched)
    assert inputs.shard is not None and inputs.fragments is not None
    index, total = inputs.shard
    sp, outcome = run_shard(
        opts, index, total, reporter=events.NullReporter(), fragments=inputs.fragments
    )
    sessions = 0
    failed = False
    if outcome is not None:
        sessions = (outcome.triggers.sessions if outcome.triggers else 0) + (
            outcome.evals.executed + outcome.evals.baselines if outcome.evals else 0
        )
        failed = outcome.failed
    where = rel_path(job.top, inputs.fragments)
    lines = [
        f"evolve-action shard {index}/{total} of plan {sp.plan_id}: "
        f"{len(sp.shards[index - 1].units)} unit(s), {sessions} session(s); fragments in {where}"
    ]
    if budget_line := opts.evals.budget.summary() if opts.evals.budget else "":
        lines.append(budget_line)
    outputs = ActionOutputs(
        status="failed" if failed else "passed",
        evaluated_skills=touched.keys,
        sessions=sessions,
        plan_id=sp.plan_id,
    )
    append_summary(files.summary, "\n\n".join(lines) + "\n")
    write_outputs(files.output, outputs)
    return ActionOutcome(exit_code=0, outputs=outputs, lines=tuple(lines), touched=touched)
