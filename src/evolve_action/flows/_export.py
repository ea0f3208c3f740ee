"""`export`: stored results as AgentEvals result rows and as skill-creator workspace artefacts.

Owns: `ExportOptions`, `ExportOutcome` and `run_export` (find the results files, build the
documents, write them), and the pure builder of the AgentEvals document from one results entry:
`agentevals_rows` (AgentEvals/AgentV JSONL result rows: `evalId`, `score`, `verdict`, `hits`,
`misses`, `evaluatorResults`, `traceSummary`…); skill-creator's documents (`grading_json`,
`timing_json`, `eval_metadata_json`, `benchmark_json`) are built in `_export_skill_creator`.

Layout written under `out_dir` (one directory per skill and model; `<skill-path>` is
`<plugin>/<skill>`, or `<skill>` when the results file names no plugin):

    agentevals/<skill-path>/<provider>/<model>/with_skill.jsonl      one row per eval case
    agentevals/<skill-path>/<provider>/<model>/without_skill.jsonl   one row per baseline case
    skill-creator/<skill-path>/<provider>/<model>/<skill>-workspace/iteration-1/
        benchmark.json  benchmark.md
        eval-<n>-<id>/eval_metadata.json
        eval-<n>-<id>/with_skill/{grading.json,timing.json,outputs/}
        eval-<n>-<id>/without_skill/{grading.json,timing.json,outputs/}

so `python eval-viewer/generate_review.py <…>/iteration-1 --benchmark <…>/iteration-1/benchmark.json`
(skill-creator's viewer) finds one run per directory holding `outputs/`, its prompt in the parent's
`eval_metadata.json` and its grades in `grading.json`.

Guarantees: results files are only read; every file written goes through the redaction gate
(`encoding.atomic_write_text`); documents are deterministic (no clock: timestamps are the
entries' `ran_at`). Field names are the documented ones exactly: `grading.json` expectations are
`{text, passed, evidence}` with a boolean `passed`; `benchmark.json` carries both the viewer's
`run_summary` (`with_skill`/`without_skill` → `pass_rate`/`time_seconds`/`tokens` → `mean`,
`stddev`, `min`, `max`; `delta` strings) and seed 003's `summaries`/`deltas`, and each run both
`configuration` (the viewer's key) and `config` (seed 003's). Never does: run agents, rewrite a
results file, print.

What the results files cannot give: agent output files and final text are not stored, so each
run's `outputs/` holds only a note saying so, and the rows carry no `candidateAnswer`; baseline
snapshots keep no expectations, so without-skill runs carry only their counts. Skipped
expectations (`passed: null`) are left out of `grading.json`'s `expectations` (skill-creator's
`passed` is a boolean) and listed under `user_notes_summary.uncertainties`. Runs that ended in a
runtime error are written (with the error as a note) but left out of the benchmark statistics,
as evolve leaves them out of pass rates.

Suite cases (AgentEvals/AgentV evaluators, `grading.suite_expectations`) keep each evaluator's
score and weight at the head of its evidence (`score 0.85 w=2 …`): the case score is their
weighted mean over the top-level evaluators (an expectation named `<parent>/<member> (type)` is a
composite member or rubric criterion and is not counted again), and the verdict uses the spec's
bands. Evolve-format cases score their pass rate; their verdict is `pass` or `fail` as `passed`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolve_action import encoding, redact
from evolve_action.errors import SpecError, UsageError
from evolve_action.flows._export_skill_creator import (
    WITH,
    WITHOUT,
    _ordered,
    _seconds,
    benchmark_json,
    benchmark_markdown,
    eval_metadata_json,
    grading_json,
    timing_json,
)
from evolve_action.repo import Repository
from evolve_action.results import (
    EvalResult,
    EvalsEntry,
    ResultsFile,
    load_results,
)
from evolve_action.specs import load_evals

__all__ = [
    "EXPORT_FORMATS",
    "ExportOptions",
    "ExportOutcome",
    "ExportedSkill",
    "agentevals_rows",
    "check_formats",
    "run_export",
]

EXPORT_FORMATS = ("agentevals", "skill-creator")
"""What `export` can write: AgentEvals JSONL rows, skill-creator workspace artefacts."""

PASS_BAND = 0.8
BORDERLINE_BAND = 0.6
"""The AgentEvals verdict bands (`verdicts.mdx`): pass ≥ 0.8, borderline ≥ 0.6, else fail."""


_SCORE = re.compile(r"^score (\d+(?:\.\d+)?)(?: w=([0-9.eE+-]+))?")
_TYPED = re.compile(r"^(?P<name>.*) \((?P<type>[A-Za-z_][\w-]*)\)$")

_OUTPUTS_NOTE = (
    "evolve-action keeps no agent output files: the grades of this run (grading.json) and its\n"
    "timing (timing.json) come from the skill's committed results file ({source}).\n"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportOptions:
    """What to export and where."""

    out_dir: Path
    """Where the `agentevals/` and `skill-creator/` trees are written."""
    repo: Repository | None = None
    """The repository whose results files are exported (every eval set's `results.<ext>`)."""
    results_files: tuple[Path, ...] = ()
    """Explicit results files (instead of, or beside, the repository's)."""
    formats: tuple[str, ...] = EXPORT_FORMATS
    skills: tuple[str, ...] = ()
    """Only these skills (empty: all)."""
    models: tuple[str, ...] = ()
    """Only these models: `provider/id` keys or bare ids (empty: all)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportedSkill:
    """One skill × model exported."""

    skill_path: str
    model: str
    cases: int
    baseline_cases: int
    written: tuple[Path, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportOutcome:
    """What `run_export` wrote."""

    exported: tuple[ExportedSkill, ...]
    notes: tuple[str, ...] = ()

    @property
    def written(self) -> tuple[Path, ...]:
        """Every file written, in writing order."""
        return tuple(p for e in self.exported for p in e.written)


# ---------------------------------------------------------------------------------------------
# Scores and verdicts of stored cases


@dataclass(frozen=True, slots=True)
class _Item:
    """One stored expectation as an evaluator result."""

    name: str
    type: str
    score: float | None
    weight: float
    passed: bool | None
    evidence: str
    top: bool


def _is_suite_case(result: EvalResult) -> bool:
    """A suite case: its id is `<suite>::<case>`, or an expectation carries a score head."""
    return "::" in result.id or any(_SCORE.match(e.evidence) for e in result.expectations)


def _items(result: EvalResult) -> list[_Item]:
    suite = _is_suite_case(result)
    out: list[_Item] = []
    for e in result.expectations:
        m = _SCORE.match(e.evidence) if suite else None
        typed = _TYPED.match(e.text) if m is not None else None
        name, etype = (typed["name"], typed["type"]) if typed else (e.text, e.type)
        if m is not None:
            score: float | None = float(m.group(1))
            weight = _float(m.group(2), 1.0)
        else:
            score = 1.0 if e.passed else 0.0
            weight = 1.0
        if e.passed is None:
            score = None
        out.append(
            _Item(
                name=name,
                type=etype,
                score=score,
                weight=weight,
                passed=e.passed,
                evidence=e.evidence,
                # a suite case's top level: its evaluators (`name (type)` with a score head, not
                # `parent/member`); composite members and rubric criteria are below them
                top=not suite or (m is not None and typed is not None and "/" not in name),
            )
        )
    return out


def _float(text: str | None, default: float) -> float:
    try:
        value = float(text) if text is not None else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def _weighted(result: EvalResult) -> float | None:
    """A suite case's weighted mean over its scored top-level evaluators (None: none stored, as
    in a baseline snapshot, which keeps no expectations)."""
    if not _is_suite_case(result):
        return None
    tops = [i for i in _items(result) if i.top and i.score is not None and i.weight > 0]
    total = sum(i.weight for i in tops)
    return sum((i.score or 0.0) * i.weight for i in tops) / total if total > 0 else None


def case_score(result: EvalResult) -> float | None:
    """The case's score: a suite case's weighted evaluator mean, else its pass rate (None: none)."""
    if result.runtime_error:
        return None
    weighted = _weighted(result)
    if weighted is not None:
        return weighted
    if result.summary is not None and result.summary.pass_rate is not None:
        return result.summary.pass_rate
    if result.passed is not None:
        return 1.0 if result.passed else 0.0
    return None


def case_verdict(result: EvalResult, score: float | None) -> str:
    """`pass`/`fail` as evolve's `passed`; `borderline` for a suite case that did not pass with an
    evaluator score in the spec's band (0.6–0.8); `skip` for a runtime error."""
    if result.runtime_error or result.passed is None:
        return "skip"
    if result.passed:
        return "pass"
    weighted = _weighted(result)
    if weighted is not None and BORDERLINE_BAND <= weighted < PASS_BAND:
        return "borderline"
    return "fail"


def _verdict_of(item: _Item) -> str:
    if item.passed is None:
        return "skip"
    return "pass" if item.passed else "fail"


# ---------------------------------------------------------------------------------------------
# AgentEvals rows


def _trace_summary(result: EvalResult) -> dict[str, Any] | None:
    """AgentV's `TraceSummary` from what the results file measured (None: nothing measured).

    `eventCount`, `toolNames`, `toolCallsByName` and `errorCount` (required in AgentV's type) are
    present when the tool calls were counted (never a made-up 0 when they were not);
    `tokenUsage{input, output, cached?}` (input: fresh input tokens; cached: cache reads and
    writes) only when both input and output are known.
    """
    em = result.execution_metrics
    m = result.measured
    secs = _seconds(result)
    if em is None and m is None and secs is None:
        return None
    out: dict[str, Any] = {}
    if em is not None:
        calls = dict(sorted(em.tool_calls.items()))
        out["eventCount"] = (
            em.total_tool_calls if em.total_tool_calls is not None else sum(calls.values())
        )
        out["toolNames"] = sorted(calls)
        out["toolCallsByName"] = calls
        out["errorCount"] = em.errors_encountered or 0
    if m is not None and m.input_tokens is not None and m.output_tokens is not None:
        usage = {"input": m.input_tokens, "output": m.output_tokens}
        if m.cache_read_input_tokens is not None or m.cache_creation_input_tokens is not None:
            usage["cached"] = (m.cache_read_input_tokens or 0) + (
                m.cache_creation_input_tokens or 0
            )
        out["tokenUsage"] = usage
    if m is not None and m.cost_usd is not None:
        out["costUsd"] = m.cost_usd
    if secs is not None:
        out["durationMs"] = round(secs * 1000)
    if em is not None and em.total_steps is not None:
        out["llmCallCount"] = em.total_steps
    return out


def _evaluator_result(item: _Item, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "type": item.type,
        "score": round(item.score, 4) if item.score is not None else 0.0,
        "weight": item.weight,
        "verdict": _verdict_of(item),
        "hits": [name] if item.passed is True else [],
        "misses": [name] if item.passed is False else [],
        "reasoning": item.evidence,
    }


def _evaluator_results(items: Sequence[_Item]) -> list[dict[str, Any]]:
    """AgentV's `evaluatorResults`: a composite's members and a rubric's criteria (stored as
    `parent/member`) nested in their parent's own `evaluatorResults`."""
    top: list[dict[str, Any]] = []
    by_path: dict[str, dict[str, Any]] = {}
    for item in items:
        parent_path, _, leaf = item.name.rpartition("/")
        parent = by_path.get(parent_path) if not item.top else None
        entry = _evaluator_result(item, item.name if parent is None else leaf)
        if parent is None:
            top.append(entry)
        else:
            parent.setdefault("evaluatorResults", []).append(entry)
        by_path[item.name] = entry
    return top


def _row(
    result: EvalResult,
    *,
    rf: ResultsFile,
    model: str,
    ran_at: str,
    configuration: str,
) -> dict[str, Any]:
    score = case_score(result)
    verdict = case_verdict(result, score)
    items = _items(result)
    dataset, _, _case = result.id.rpartition("::")
    row: dict[str, Any] = {
        "timestamp": ran_at,
        "evalId": result.id,
        "dataset": dataset or rf.skill,
    }
    if dataset and "/" in result.name:
        row["conversationId"] = result.name.rsplit("/", 1)[0]
    row["score"] = round(score, 4) if score is not None else 0.0
    row["verdict"] = verdict
    row["executionStatus"] = (
        "execution_error" if result.runtime_error else "ok" if result.passed else "quality_failure"
    )
    row["hits"] = [i.name for i in items if i.top and i.passed is True]
    row["misses"] = [i.name for i in items if i.top and i.passed is False]
    row["candidateAnswer"] = ""  # not stored in results files
    row["target"] = model
    if result.runtime_error:
        row["error"] = result.runtime_error
    trace = _trace_summary(result)
    if trace is not None:
        row["traceSummary"] = trace
    row["evaluatorResults"] = _evaluator_results(items)
    row["evolve"] = {
        "plugin": rf.plugin,
        "skill": rf.skill,
        "configuration": configuration,
        "passed": result.passed,
    }
    return row


def agentevals_rows(
    rf: ResultsFile, model: str, entry: EvalsEntry
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """AgentEvals result rows of one evals entry: (with-skill rows, without-skill rows).

    Row keys follow AgentV's `EvaluationResult` at the spec's time (AV-FEB `evaluation/types.ts`:
    `timestamp`, `evalId`, `dataset`, `conversationId`, `score`, `hits`, `misses`,
    `candidateAnswer` (empty: not stored), `target`, `error`, `traceSummary`, `evaluatorResults`
    with `name`/`type`/`score`/`weight`/`verdict`/`hits`/`misses`/`reasoning` and nested
    members), the spec's case `verdict` and AgentV's later `executionStatus`, plus an `evolve`
    object (plugin, skill, `with_skill`/`without_skill`, evolve's `passed`).
    """
    with_rows = [
        _row(r, rf=rf, model=model, ran_at=entry.header.ran_at, configuration=WITH)
        for r in entry.results
    ]
    base = entry.baseline
    without_rows = (
        [
            _row(r, rf=rf, model=model, ran_at=base.ran_at, configuration=WITHOUT)
            for r in base.results
        ]
        if base is not None
        else []
    )
    return with_rows, without_rows


def jsonl(rows: Iterable[Mapping[str, Any]]) -> str:
    """One compact JSON object per line (each redacted as JSON), newline-terminated."""
    return "".join(
        redact.redact_structured(json.dumps(r, ensure_ascii=False, separators=(",", ":")), "json")
        + "\n"
        for r in rows
    )


# ---------------------------------------------------------------------------------------------
# The flow


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return slug[:60] or "case"


def _model_matches(key: str, wanted: Sequence[str]) -> bool:
    return not wanted or key in wanted or key.split("/", 1)[-1] in wanted


@dataclass(frozen=True, slots=True)
class _Source:
    path: Path
    """The results file."""
    shown: str
    """How notes and outputs name it."""
    plugin: str | None
    skill: str | None
    """The names the results are filed under (None: the names stored in the file)."""
    evals_path: Path | None
    fixture_bases: tuple[Path, ...]


_RESULTS_NAMES = tuple(f"results.{ext}" for ext in ("json", "jsonc", "yaml", "yml"))


def check_formats(formats: Sequence[str]) -> None:
    """Raise `UsageError` for a format `export` cannot write."""
    unknown = [f for f in formats if f not in EXPORT_FORMATS]
    if unknown:
        raise UsageError(
            f"--format {unknown[0]!r}: unknown export format",
            hint=f"use one of {', '.join(EXPORT_FORMATS)}",
        )


def _stored_names(path: Path) -> tuple[str | None, str | None]:
    try:
        doc = encoding.decode_path(path)
    except SpecError:
        return None, None  # `load_results` reports it, naming the file
    if not isinstance(doc, Mapping):
        return None, None
    plugin, skill = doc.get("plugin"), doc.get("skill")
    return (
        plugin if isinstance(plugin, str) else None,
        skill if isinstance(skill, str) else None,
    )


def _sources(opts: ExportOptions) -> list[_Source]:
    found: list[_Source] = []
    if opts.repo is not None:
        for es in opts.repo.eval_sets():
            path = encoding.find_results(es.results_dir)
            if path is not None:
                found.append(
                    _Source(
                        path,
                        opts.repo.rel(path),
                        es.plugin,
                        es.skill,
                        es.evals_path,
                        tuple(es.fixture_bases),
                    )
                )
    for path in opts.results_files:
        if not path.is_file():
            raise UsageError(
                f"--results {path}: no such file", hint="pass a skill's results.<ext> file"
            )
        if path.name not in _RESULTS_NAMES:
            raise UsageError(
                f"--results {path}: not a results file",
                hint=f"pass a skill's results file ({', '.join(_RESULTS_NAMES)})",
            )
        plugin, skill = _stored_names(path)
        found.append(_Source(path, path.as_posix(), plugin, skill, None, ()))
    return found


def _prompts(src: _Source, notes: list[str]) -> dict[str, str]:
    """Eval id → prompt from the skill's evolve-format evals file (empty when there is none)."""
    if src.evals_path is None:
        return {}
    try:
        spec = load_evals(src.evals_path, fixture_bases=src.fixture_bases)
    except SpecError as exc:
        notes.append(f"note: {src.shown}: prompts not shown ({exc.message})")
        return {}
    return {c.id: c.prompt for c in spec.evals}


def _write(path: Path, text: str, written: list[Path]) -> None:
    encoding.atomic_write_text(path, text)
    written.append(path)


def _write_json(path: Path, value: Any, written: list[Path]) -> None:
    _write(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n", written)


def run_export(opts: ExportOptions) -> ExportOutcome:
    """Read every selected results file and write the chosen formats under `opts.out_dir`."""
    check_formats(opts.formats)
    notes: list[str] = []
    exported: list[ExportedSkill] = []
    for src in _sources(opts):
        loaded = load_results(src.path.parent, plugin=src.plugin, skill=src.skill)
        rf = loaded.file
        if rf is None:
            continue
        if opts.skills and rf.skill not in opts.skills:
            continue
        skill_path = "/".join(p for p in (rf.plugin, rf.skill) if p and p != ".") or "skill"
        prompts: dict[str, str] | None = None
        for model, me in sorted(rf.models.items()):
            entry = me.evals
            if entry is None or not _model_matches(model, opts.models):
                continue
            if prompts is None:
                prompts = _prompts(src, notes)
            written: list[Path] = []
            model_dir = Path(*model.split("/"))
            if "agentevals" in opts.formats:
                base = opts.out_dir / "agentevals" / skill_path / model_dir
                with_rows, without_rows = agentevals_rows(rf, model, entry)
                _write(base / f"{WITH}.jsonl", jsonl(with_rows), written)
                if without_rows:
                    _write(base / f"{WITHOUT}.jsonl", jsonl(without_rows), written)
            if "skill-creator" in opts.formats:
                written += _workspace(
                    opts.out_dir / "skill-creator" / skill_path / model_dir,
                    rf=rf,
                    model=model,
                    entry=entry,
                    prompts=prompts,
                    source=src.shown,
                    skill_path=skill_path,
                )
            exported.append(
                ExportedSkill(
                    skill_path=skill_path,
                    model=model,
                    cases=len(entry.results),
                    baseline_cases=len(entry.baseline.results) if entry.baseline else 0,
                    written=tuple(written),
                )
            )
    if not exported:
        notes.append(
            "note: no stored eval results matched (run `evolve-action run evals` first, or check "
            "--skill/--model)"
        )
    return ExportOutcome(exported=tuple(exported), notes=tuple(dict.fromkeys(notes)))


def _workspace(
    root: Path,
    *,
    rf: ResultsFile,
    model: str,
    entry: EvalsEntry,
    prompts: Mapping[str, str],
    source: str,
    skill_path: str,
) -> list[Path]:
    written: list[Path] = []
    iteration = root / f"{rf.skill or 'skill'}-workspace" / "iteration-1"
    for number, rid, with_r, base_r in _ordered(entry):
        eval_dir = iteration / f"eval-{number}-{_slug(rid)}"
        shown = with_r if with_r is not None else base_r
        assert shown is not None
        prompt = prompts.get(rid, "") or f"(prompt of {rid}: see the skill's eval definitions)"
        _write_json(
            eval_dir / "eval_metadata.json", eval_metadata_json(number, shown, prompt), written
        )
        for configuration, r in ((WITH, with_r), (WITHOUT, base_r)):
            if r is None:
                continue
            run_dir = eval_dir / configuration
            _write_json(run_dir / "grading.json", grading_json(r), written)
            _write_json(run_dir / "timing.json", timing_json(r), written)
            _write(run_dir / "outputs" / "NOTE.md", _OUTPUTS_NOTE.format(source=source), written)
    bench = benchmark_json(rf, model, entry, skill_path=skill_path)
    _write_json(iteration / "benchmark.json", bench, written)
    _write(iteration / "benchmark.md", benchmark_markdown(bench), written)
    return written
