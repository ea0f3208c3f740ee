"""Power on demand: more trigger runs for a touched skill whose comparison is still undecided.

Owns: `PowerOptions` (config's `BaseMode` and the cap), `PowerJob` (what one job's power on demand
works with, triggers and evals alike: one value, with the comparison's fingerprints), `more_runs`
(the sequential loop of one job), the ledger rules both loops share (`resume`, `record_look`,
`settled`) and `materialise_base` (the base commit's tree in a scratch directory, extracted by
`extract_tar`, which refuses members that could leave it on every Python 3.11+). For each touched
skill × model whose triggers tier the PR re-ran, the loop looks at the evidence (report's
`compare_skill`, the one rule), and while the look says "run more" it adds runs in rounds of
`step`: **paired base runs** (the base commit's version of the repository, materialised from git
into a scratch directory, run in this job against the same model) and **extra head runs** (a
scratch copy of the head's working tree), one run of each per query in turn (base, head, base,
head, …) so model drift and time of day fall on both sides alike. With paired base runs, each
round after the first block (stored base or the fresh base's first run of each query, against the
head's sweep)
is **selective**: it runs only the queries whose pooled runs so far are not all alike, plus the
spot-checked share of the rest (`report.selected`: it reads the pooled runs, never which are the
head's), and its runs are recorded per round (`QueryRuns.rounds`) so the test treats each round as
a block of its own and stays exact (docs/pr-comment.md, "The rule"); a round that passes every
query by makes no look. It stops when a look decides, when both sides reach `max_runs` runs per
query, or when the budget stops scheduling; the last look spends the rest of the alpha (`_stats`:
the false-alarm rate stays ≤ 5 % over every look).

With `stored` the base is the stored results and is never re-run (only the head gets more runs);
with `rerun` the base side is this job's fresh runs only; with `auto` it is fresh runs only when the
stored evidence is missing, thin (a sweep planned with fewer than `triggers.DEFAULT_RUNS` runs per
query, or a fixed-size one that made fewer; an early-stopped sweep of the default runs is not
thin: the test weighs its records exactly) or made by another harness or tool version, and
otherwise the stored runs with paired reruns appended (bench/noise.py's default-path table).

With the PR's ledger (`flows._ledger`: the runs and looks of earlier workflow runs) the loop
starts from the runs whose fingerprints match this comparison (base and head content, query,
model, tool), counts them against `max_runs`, continues the alpha from the last look's
information fraction, and starts nothing for a closed comparison (decided, or final at the cap:
the same look again). Every look rests on one head sweep: the first attempt's, kept in the
ledger with the look; a later attempt of the same content tests that sweep, not the one it made
itself (`Reruns.head_sweep`), so a decided verdict is final for its evidence (`resume`, the one
rule, shared with the eval loop), and the planner starts no sweep for a comparison closed this
way (`settled`). Stopped short of
the cap (the budget, errors) with a ledger, the last look spends only its share: a later attempt
continues. The runs and looks this job made come back as
`PowerOutcome.recorded`; the caller stores them.

Guarantees: nothing here writes into the repository: every run happens in scratch copies, so the
committed results files never hold base runs (nor the extra head runs: evidence for the comparison
only). The runs come back as `Reruns` per skill × model for the comparison, the comment, the
summary and the artifact file (`reruns_document`). A skill absent from the base commit, or a base
commit the clone lacks, gets no base runs (a note says why).

Never does: post, commit, print, read or write the ledger's store, decide labels itself
(`report.compare_skill` does).
"""

from __future__ import annotations

import asyncio
import io
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import msgspec

from evolve_action import events, triggers
from evolve_action.config import DEFAULT_BASE_MODE, DEFAULT_MAX_RUNS, BaseMode, resolve_repository
from evolve_action.errors import EvolveError
from evolve_action.flows._ledger import (
    SWEEP,
    Fingerprints,
    Ledger,
    LedgerLook,
    LedgerRun,
    Prior,
    runs_of,
)
from evolve_action.flows._tiers import trigger_options
from evolve_action.harness import Budget, agent_harness
from evolve_action.plan import Tier, skill_content_hash
from evolve_action.report import (
    Label,
    Plan,
    QueryRuns,
    Reruns,
    SkillEvidence,
    compare_skill,
    early_stopped,
    information,
    selected,
)
from evolve_action.results import EntryHeader, TriggerResult, TriggersEntry
from evolve_action.triggers import passes

__all__ = [
    "DECIDED",
    "NOTHING_TO_DO",
    "TESTED",
    "PowerJob",
    "PowerOptions",
    "PowerOutcome",
    "Scratch",
    "SideRuns",
    "conclude",
    "copy_worktree",
    "extract_tar",
    "look_slice",
    "materialise_base",
    "more_runs",
    "record_look",
    "reruns_document",
    "resume",
    "settled",
    "skill_hash",
    "sweep_entry",
]

DECIDED = (Label.REGRESSION, Label.IMPROVEMENT, Label.NO_CHANGE)
TESTED = (*DECIDED, Label.UNDECIDED)
NOTHING_TO_DO = (Label.NOT_RERUN, Label.AUTHORING_ERROR, Label.NOT_EVALUATED, Label.REMOVED)


@dataclass(frozen=True, slots=True, kw_only=True)
class PowerOptions:
    """How a job adds runs (the `base` and `max_runs` inputs, config keys and flags)."""

    base: BaseMode = DEFAULT_BASE_MODE
    max_runs: int = DEFAULT_MAX_RUNS
    """Cap of runs per query per side; at or under the head's sweep, no extra head runs."""
    step: int = triggers.DEFAULT_RUNS
    """Runs added per side between two looks."""
    jobs: int = 1
    timeout: int | None = None


@dataclass(slots=True, kw_only=True)
class PowerOutcome:
    """What `more_runs` did."""

    reruns: dict[str, dict[str, Reruns]] = field(default_factory=dict)
    """Skill key → model key → the runs added and the last look."""
    sessions: int = 0
    """Agent sessions started (base and head)."""
    base_sessions: int = 0
    """Of `sessions`, those that ran the base's version."""
    notes: list[str] = field(default_factory=list)
    """Why a skill got no base runs, and similar facts for the comment."""
    why: dict[str, str] = field(default_factory=dict)
    """`skill key model key` → why the base was re-run (auto) or "rerun" / "stored"."""
    runs: list[LedgerRun] = field(default_factory=list)
    """The runs this job made, for the ledger (`flows._ledger`)."""
    looks: list[LedgerLook] = field(default_factory=list)
    """The last look this job made of each comparison, for the ledger."""
    reused: int = 0
    """Runs taken from the ledger (made by earlier workflow runs) instead of started."""
    fingerprints: dict[tuple[str, str], Fingerprints] = field(default_factory=dict)
    """(skill key, model) → the fingerprints of the comparison the loop tested."""

    @property
    def recorded(self) -> Ledger:
        """What this job adds to the PR's ledger."""
        return Ledger(runs=tuple(self.runs), looks=tuple(self.looks))


@dataclass(slots=True, kw_only=True)
class PowerJob:
    """What one job's power on demand works with, triggers and evals alike: the checkout, the
    base commit, the environments, the options, the budget, the PR's ledger and this attempt's
    name, and the scratch copies (made on first use; `close` removes them). One value, built
    once per job by the caller and read by the planner and both loops."""

    top: Path
    prefix: str
    """The repository root relative to `top`."""
    base_sha: str | None
    environ: Mapping[str, str]
    """The agents' environment."""
    genv: Mapping[str, str]
    """Git's environment."""
    options: PowerOptions
    budget: Budget
    reporter: events.Reporter
    ledger: Ledger | None = None
    """The PR's runs over earlier workflow runs (None: this job's runs only)."""
    attempt: str = ""
    judge_model: str | None = None
    """Evals: the judge."""
    max_turns: int | None = None
    """Evals: the agent's turn cap."""
    scratch: Scratch = field(init=False)

    def __post_init__(self) -> None:
        self.scratch = Scratch(self.top, self.prefix, self.base_sha, self.genv)

    def close(self) -> None:
        self.scratch.close()

    def fingerprints(
        self,
        base_hash: Callable[[Path | None], str],
        stored: EntryHeader | None,
        head: str,
        tool: str,
    ) -> tuple[Fingerprints, bool]:
        """One comparison's fingerprints as its loop tests them (base content, head content,
        tool), and whether the base is re-run beside the head (paired). Paired (`base` not
        `stored`) the base content is `base_hash` of the base commit's version; when that has
        no such skill or the clone lacks the commit, or with `stored`, the stored base's
        recorded content hash ("" when there is none)."""
        paired = self.options.base != "stored"
        base_fp = base_hash(self.scratch.base()) if paired else ""
        if not base_fp:
            paired = False
            base_fp = stored.content_hash if stored is not None else ""
        return (base_fp, head, tool), paired


@dataclass(slots=True)
class SideRuns:
    """Runs this job made of one side of one skill × model: query → [hits, runs], and of those,
    query → round → [hits, runs] for the selective rounds."""

    runs: dict[str, list[int]] = field(default_factory=dict)
    expect: dict[str, bool] = field(default_factory=dict)
    rounds: dict[str, dict[int, list[int]]] = field(default_factory=dict)

    def _put(
        self, query: str, should_trigger: bool, hits: int, runs: int, round_no: int = 0
    ) -> int:
        got = self.runs.setdefault(query, [0, 0])
        got[0] += hits
        got[1] += runs
        if round_no:
            block = self.rounds.setdefault(query, {}).setdefault(round_no, [0, 0])
            block[0] += hits
            block[1] += runs
        self.expect[query] = should_trigger
        return runs

    def add(self, outcome: triggers.TriggersOutcome, round_no: int = 0) -> int:
        return sum(
            self._put(q.query, q.should_trigger, q.hits, q.completed, round_no)
            for unit in outcome.units
            for q in unit.queries
        )

    def extend(self, queries: Sequence[QueryRuns]) -> int:
        """Runs from the ledger: their totals, and each selective round's block in its round."""
        total = 0
        for q in queries:
            total += self._put(q.query, q.should_trigger, q.hits, q.runs)
            for round_no, (hits, runs) in enumerate(q.rounds, start=1):
                if runs:
                    block = self.rounds.setdefault(q.query, {}).setdefault(round_no, [0, 0])
                    block[0] += hits
                    block[1] += runs
        return total

    def most(self) -> float:
        """Runs of the query run most (one run in every round so far, selective or not)."""
        return float(max((n for _, n in self.runs.values()), default=0))

    def per_query(self) -> float:
        return sum(r for _, r in self.runs.values()) / len(self.runs) if self.runs else 0.0

    def frozen(self, last_round: int = 0) -> tuple[QueryRuns, ...]:
        return tuple(
            QueryRuns(
                query=q,
                should_trigger=self.expect[q],
                hits=h,
                runs=n,
                rounds=tuple(
                    (b[0], b[1]) if (b := self.rounds.get(q, {}).get(r)) else (0, 0)
                    for r in range(1, last_round + 1)
                ),
            )
            for q, (h, n) in self.runs.items()
        )


def _runs_per_query(entry: TriggersEntry) -> float:
    valid = [r.runs for r in entry.results if r.runs]
    return sum(valid) / len(valid) if valid else 0.0


def _stopped(entry: TriggersEntry) -> bool:
    planned = entry.header.runs_per_query
    records = [
        ((r.hits if r.should_trigger else r.runs - r.hits), r.runs, r.should_trigger)
        for r in entry.results
        if r.runs and r.hits is not None
    ]
    return planned > 1 and bool(records) and early_stopped(records, planned)


def _auto_reason(base: TriggersEntry | None, head: TriggersEntry, known: bool) -> str:
    """Why `auto` re-runs the base ("" when the stored base is good evidence).

    Thin means a sweep planned with fewer than `triggers.DEFAULT_RUNS` runs per query, or a
    fixed-size one that made fewer. An early-stopped sweep of the default runs is not thin: it is
    the measurement the head's sweep is, its records are weighed exactly by the test, and it
    costs no session (re-running it fresh — one run per query, then rounds — cost more and
    called a 20-point drop on 10 queries 74 % of the time instead of 87 %: BENCHMARKS.md,
    "The default path")."""
    if base is None:
        return "the base's stored results could not be read" if not known else "no stored base"
    planned = base.header.runs_per_query or triggers.DEFAULT_RUNS
    if planned < triggers.DEFAULT_RUNS or (
        _runs_per_query(base) < triggers.DEFAULT_RUNS and not _stopped(base)
    ):
        return f"thin stored base ({_runs_per_query(base):g} runs per query)"
    if base.header.harness and head.header.harness and base.header.harness != head.header.harness:
        return f"stored base made by {base.header.harness}"
    if base.header.tool_version != head.header.tool_version:
        return f"stored base made by version {base.header.tool_version or 'unknown'}"
    return ""


def materialise_base(top: Path, base_sha: str, environ: Mapping[str, str], into: Path) -> bool:
    """Extract the tree of `base_sha` (`git archive`) under `into`; False when git cannot."""
    proc = subprocess.run(
        ["git", "-C", str(top), "archive", "--format=tar", base_sha],
        capture_output=True,
        env=dict(environ),
        check=False,
    )
    if proc.returncode != 0:
        return False
    into.mkdir(parents=True, exist_ok=True)
    try:
        extract_tar(proc.stdout, into)
    except tarfile.TarError:
        return False  # a member that would leave `into`: no base runs rather than a risky tree
    return True


def extract_tar(data: bytes, into: Path) -> None:
    """Extract the tar archive `data` under `into`, refusing what could leave it or is not a file.

    With `tarfile`'s `data` filter where this Python has it (3.11.4+, 3.12+); on older 3.11
    releases the same checks by hand, one member at a time and in order, so a link extracted
    earlier is followed when a later member is checked: no absolute or `..` name, no symbolic or
    hard link whose target resolves outside `into`, no device or FIFO; modes lose setuid/setgid
    and group/other write. A refused member raises `tarfile.TarError` naming it.
    """
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if getattr(tarfile, "data_filter", None) is not None:
            tar.extractall(into, filter="data")
            return
        root = into.resolve()
        for member in tar.getmembers():
            _check_member(member, root)
            member.mode &= 0o755
            tar.extract(member, root, set_attrs=True)


def _check_member(member: tarfile.TarInfo, root: Path) -> None:
    """Raise `tarfile.TarError` when extracting `member` under `root` could leave it."""

    def inside(path: Path) -> bool:
        resolved = path.resolve()
        return resolved == root or root in resolved.parents

    name = member.name
    if name.startswith(("/", "\\")) or ".." in Path(name).parts or not inside(root / name):
        raise tarfile.TarError(f"{name}: leaves the extraction directory")
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        raise tarfile.TarError(f"{name}: not a file, directory or link")
    if member.issym():
        target = member.linkname
        if target.startswith("/") or not inside((root / name).parent / target):
            raise tarfile.TarError(f"{name}: links to {target}, outside the extraction directory")
    if member.islnk() and (member.linkname.startswith("/") or not inside(root / member.linkname)):
        raise tarfile.TarError(f"{name}: hard link to {member.linkname}, outside the directory")


def copy_worktree(top: Path, into: Path, environ: Mapping[str, str]) -> None:
    """The working tree of `top` as git sees it — tracked files as they are on disk and untracked
    ones git does not ignore — copied under `into` (no `.git`, no ignored `.venv` or outputs)."""
    proc = subprocess.run(
        ["git", "-C", str(top), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        env=dict(environ),
        check=False,
    )
    into.mkdir(parents=True, exist_ok=True)
    for rel in dict.fromkeys(proc.stdout.decode("utf-8", "surrogateescape").split("\0")):
        src = top / rel
        if not rel or not (src.is_file() or src.is_symlink()):
            continue  # deleted in the working tree, or a submodule directory
        dst = into / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(src.readlink())
        else:
            shutil.copy2(src, dst)


class Scratch:
    """The two scratch repositories of one job (made on first use, removed at the end)."""

    def __init__(
        self, top: Path, prefix: str, base_sha: str | None, environ: Mapping[str, str]
    ) -> None:
        self._made: Path | None = None
        self.top, self.prefix, self.base_sha, self.environ = top, prefix, base_sha, environ
        self._base: Path | Literal[False] | None = None
        self._head: Path | None = None

    @property
    def _tmp(self) -> Path:
        if self._made is None:  # made on first use: a job that copies nothing makes nothing
            self._made = Path(tempfile.mkdtemp(prefix="evolve-power."))
        return self._made

    def base(self) -> Path | None:
        if self._base is None:
            where = self._tmp / "base"
            ok = self.base_sha is not None and materialise_base(
                self.top, self.base_sha, self.environ, where
            )
            self._base = (where / self.prefix) if ok else False
        return self._base or None

    def head(self) -> Path:
        if self._head is None:
            copy_worktree(self.top, self._tmp / "head", self.environ)
            self._head = self._tmp / "head" / self.prefix
        return self._head

    def close(self) -> None:
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            self._made = None
        self._base = self._head = None


def _one_round(
    root: Path,
    plugin: str,
    skill: str,
    model: str,
    environ: Mapping[str, str],
    options: PowerOptions,
    budget: Budget,
    reporter: events.Reporter,
    only: frozenset[str] | None = None,
) -> triggers.TriggersOutcome | None:
    """One run of every query of `plugin/skill` on `model` in the scratch repository `root`
    (of the queries in `only` when given)."""
    repo, config = resolve_repository(root, root, None, environ)
    built = trigger_options(
        repo,
        config,
        environ,
        plugins=(plugin,),
        skills=(skill,),
        models=(model,),
        runs=1,
        jobs=options.jobs,
        timeout=options.timeout,
        early_stop=False,
        budget=budget,
    )
    made = triggers.make_plan(built.options)
    if only is not None:
        units = tuple(
            replace(u, cases=tuple(c for c in u.cases if c.case in only)) for u in made[0].units
        )
        made = (replace(made[0], units=units), made[1], made[2])
    if not any(u.cases for u in made[0].units):
        return None
    return asyncio.run(triggers.run(built.options, reporter, agent_harness(environ), planned=made))


def skill_hash(root: Path | None, plugin: str, skill: str, environ: Mapping[str, str]) -> str:
    """The trigger content hash of `plugin/skill` under `root` ("" when it has no triggers
    there: a skill the base does not have)."""
    if root is None or not root.is_dir():
        return ""
    try:
        repo, _ = resolve_repository(root, root, None, environ)
        for es in repo.eval_sets():
            if es.plugin == plugin and es.skill == skill and es.triggers_path is not None:
                return skill_content_hash(es.skill_dir / "SKILL.md")
    except EvolveError:
        return ""
    return ""


def more_runs(evidence: Sequence[SkillEvidence], job: PowerJob) -> PowerOutcome:
    """The sequential loop over the touched skills' undecided trigger comparisons (module doc).

    `evidence` is the base and head evidence as the job has it (stored base, head results just
    written). With the PR's ledger (`job.ledger`, `flows._ledger`) the loop starts from the runs
    whose fingerprints match and from the last look's alpha, starts nothing for a closed
    comparison, counts those runs against `max_runs`, keeps the rest of the alpha when it stops
    short of the cap (a later attempt continues), and returns this job's runs and looks as
    `recorded` (stamped `job.attempt`). The scratch copies stay for the caller's `job.close()`.
    """
    out = PowerOutcome()
    plan = Plan(cap=job.options.max_runs)
    for ev in evidence:
        if ev.head is None or Tier.TRIGGERS in ev.refused:
            continue
        key = f"{ev.plugin}/{ev.skill}"
        for model, entry in sorted(ev.head.models.items()):
            if entry.triggers is None or not entry.triggers.header.executed:
                continue
            stored = ev.base.models.get(model) if ev.base is not None else None
            track = _track(ev, model, entry.triggers, stored.triggers if stored else None, key)
            track.ledger, track.attempt = job.ledger, job.attempt
            got = track.run(job, plan, out)
            if got is not None:
                out.reruns.setdefault(key, {})[model] = got
    return out


@dataclass(slots=True, kw_only=True)
class _Track:
    """One skill × model through the looks."""

    ev: SkillEvidence
    model: str
    head_entry: TriggersEntry
    base_entry: TriggersEntry | None
    key: str
    base: SideRuns = field(default_factory=SideRuns)
    head: SideRuns = field(default_factory=SideRuns)
    fresh: bool = False
    """The base side is this job's runs only (the stored base is not tested)."""
    ledger: Ledger | None = None
    """The PR's runs over earlier workflow runs (None: this job's runs only)."""
    attempt: str = ""
    new_base: SideRuns = field(default_factory=SideRuns)
    new_head: SideRuns = field(default_factory=SideRuns)
    """Of `base`/`head`, the runs this job made (the rest came from the ledger)."""
    round_no: int = 0
    """Selective rounds made so far."""
    sweep_from: str = ""
    """The attempt whose head sweep the looks rest on (this one's, or the ledger's)."""
    adopted: TriggersEntry | None = None
    """The ledger's head sweep, when the looks rest on an earlier attempt's (`head_entry` then)."""

    def look(self, plan: Plan, t_prev: float, t: float, final: bool) -> tuple[Label, Reruns]:
        rr = Reruns(
            base=self.base.frozen(self.round_no),
            base_fresh=self.fresh,
            head=self.head.frozen(self.round_no),
            t_prev=t_prev,
            t=t,
            final=final,
            head_sweep=self.adopted,
        )
        ev = replace(self.ev, reruns={self.model: rr})
        rows = compare_skill(ev, models={self.model}, plan=plan)
        tier = rows[0].triggers if rows else None
        return (tier.label if tier is not None else Label.NOT_RERUN), rr

    def _record(
        self, out: PowerOutcome, fp: tuple[str, str, str], label: Label, rr: Reruns
    ) -> None:
        """This job's runs and its last look, for the ledger."""
        record_look(
            out,
            fp,
            label,
            rr,
            attempt=self.attempt,
            key=self.key,
            model=self.model,
            made=(self.new_base, self.new_head),
            round_no=self.round_no,
            sweep=self.sweep_from,
            kept=_sweep_queries(self.head_entry),
            planned=self.head_entry.header.runs_per_query,
        )

    def pooled(self) -> dict[str, tuple[int, ...]]:
        """Query → its pooled runs so far, base and head together (1: a hit), in no side's order:
        all the selection may read."""
        counts: dict[str, list[int]] = {}
        entries = [self.head_entry] + (
            [self.base_entry] if self.base_entry and not self.fresh else []
        )
        sources: list[Sequence[tuple[str, int, int]]] = [
            [(r.query, r.hits, r.runs) for r in e.results if r.runs and r.hits is not None]
            for e in entries
        ]
        for side in (self.base, self.head):
            sources.append([(q, h, n) for q, (h, n) in side.runs.items()])
        heads = {q for q, _, _ in sources[0]}
        for source in sources:
            for q, h, n in source:
                if q in heads:
                    got = counts.setdefault(q, [0, 0])
                    got[0] += h
                    got[1] += n
        return {q: (1,) * h + (0,) * (n - h) for q, (h, n) in counts.items()}

    def select(self) -> frozenset[str]:
        """The queries the next selective round runs (`report.selected`, module doc)."""
        return frozenset(
            q for q, pooled in self.pooled().items() if selected(q, pooled, self.round_no)
        )

    def run(self, job: PowerJob, plan: Plan, out: PowerOutcome) -> Reruns | None:
        plugin, skill = self.ev.plugin, self.ev.skill
        options, budget = job.options, job.budget
        sweep = _runs_per_query(self.head_entry)
        cap = options.max_runs
        label, _ = self.look(plan, 0.0, 1.0, True)  # what the stored evidence says at one look
        if label in NOTHING_TO_DO:
            return None
        mode = options.base
        why = "rerun" if mode == "rerun" else ""
        if mode == "auto":
            why = _auto_reason(self.base_entry, self.head_entry, self.ev.base_known)
        rerun_base = bool(why)  # the base side is fresh runs only
        header = self.head_entry.header
        fp, paired = job.fingerprints(  # paired: base runs may be added beside the head's
            lambda root: skill_hash(root, plugin, skill, job.environ),
            self.base_entry.header if self.base_entry else None,
            header.content_hash,
            f"{header.harness} {header.tool_version}".strip(),
        )
        if mode != "stored" and not paired:
            if job.scratch.base() is None:
                out.notes.append(
                    f"{self.key}: the base was not re-run: the clone lacks the base commit "
                    "(check out with fetch-depth: 0)"
                )
            rerun_base = False  # a skill the base does not have is new: nothing to re-run
        if not rerun_base and (self.base_entry is None or label not in TESTED):
            return None  # new, base unknown or not comparable, and nothing to re-run
        stored = 0.0 if rerun_base else _runs_per_query(self.base_entry)  # type: ignore[arg-type]
        if not rerun_base and cap <= max(sweep, stored):
            return None  # one look with the whole alpha: the comparison as stored
        out.why[f"{self.key} {self.model}"] = why or ("paired" if paired else "stored")
        self.fresh = rerun_base
        out.fingerprints[(self.key, self.model)] = fp
        prior, self.sweep_from = resume(
            self.ledger,
            key=self.key,
            model=self.model,
            fp=fp,
            with_base=paired,
            attempt=self.attempt,
        )
        out.reused += self.base.extend(prior.base) + self.head.extend(prior.head)
        if self.sweep_from != self.attempt:  # the sweep the earlier looks rested on
            self.adopted = self.head_entry = sweep_entry(self.head_entry, prior.sweep)
            sweep = _runs_per_query(self.head_entry)
        self.round_no = prior.rounds  # earlier attempts' selective rounds: blocks of their own
        full_b, full_h = stored + self.base.most(), sweep + self.head.most()
        if prior.look is not None and prior.look.closed:  # the test is over: the same look again
            lk = prior.look
            return self.look(plan, lk.t_prev, lk.t, lk.final)[1]
        t_prev = prior.look.t if prior.look is not None else 0.0
        b_runs = stored
        last: Reruns | None = None
        if not rerun_base and prior.look is None:  # look 0: the stored base against the sweep
            t = information(b_runs, sweep, cap)
            label, last = self.look(plan, 0.0, t, False)
            if label in DECIDED:
                self._record(out, fp, label, last)
                return last
            t_prev = t
        # full_b/full_h: runs per query of a query run in every selective round so far
        for _ in range(2 * cap + 2):  # bounded even when every run of a query errors
            h_runs = sweep + self.head.per_query()
            b_runs = stored + self.base.per_query()
            only: frozenset[str] | None = None
            if rerun_base and not self.base.runs and not self.round_no:
                # A fresh base first runs every query once: the first block, whose pooled runs tell
                # the selective rounds where more runs can move the test.
                n_b, n_h = 1, 0
            elif paired and full_b + 1 <= cap:
                # A selective round: a block of paired runs for the queries that can move. (A base
                # side already at the cap — its runs reused from the PR's ledger — gets none: the
                # head then catches up alone, below, as against a stored base.)
                if not self.round_no:
                    full_b, full_h = b_runs, h_runs
                n_b = n_h = min(options.step, int(cap - full_b), int(cap - full_h))
                if n_b > 0:
                    self.round_no += 1
                    only = self.select()
                    full_b, full_h = full_b + n_b, full_h + n_h
            else:
                n_b, n_h = 0, min(options.step, int(cap - h_runs))
            if n_b <= 0 and n_h <= 0:
                break
            added = self.batch(job, n_b, n_h, only, out)
            if only is None:
                full_b, full_h = stored + self.base.most(), sweep + self.head.most()
            at_cap = (not paired or full_b + 1 > cap) and full_h + 1 > cap
            final = at_cap or budget.stopped or (added == 0 and only is None)
            if not final and added == 0:
                continue  # the round passed every query by: no new runs, no look
            t = look_slice(
                t_prev, full_b, full_h, cap, at_cap=at_cap, spend_all=final and self.ledger is None
            )
            label, last = self.look(plan, t_prev, t, final)
            if final or label in DECIDED:
                break
            t_prev = t
        return conclude(
            lambda a, b, final: self.look(plan, a, b, final),
            lambda lbl, rr: self._record(out, fp, lbl, rr),
            label,
            last,
            t_prev,
            prior,
        )

    def batch(
        self, job: PowerJob, n_b: int, n_h: int, only: frozenset[str] | None, out: PowerOutcome
    ) -> int:
        """`n_b` base and `n_h` head runs of each query (of `only` when given: a selective
        round's block), interleaved base, head, base, head, …; the runs completed."""
        if only is not None and not only:
            return 0
        plugin, skill = self.ev.plugin, self.ev.skill
        scratch, budget = job.scratch, job.budget
        round_no = self.round_no if only is not None else 0
        added = 0
        for i in range(max(n_b, n_h)):
            for side, root, n in ((self.base, scratch.base, n_b), (self.head, scratch.head, n_h)):
                if i >= n or budget.stopped:
                    continue
                where = root()
                assert where is not None
                got = _one_round(
                    where,
                    plugin,
                    skill,
                    self.model,
                    job.environ,
                    job.options,
                    budget,
                    job.reporter,
                    only,
                )
                if got is not None:
                    added += side.add(got, round_no)
                    (self.new_base if side is self.base else self.new_head).add(got, round_no)
                    out.sessions += got.sessions
                    if side is self.base:
                        out.base_sessions += got.sessions
        return added


def look_slice(
    t_prev: float, full_b: float, full_h: float, cap: int, *, at_cap: bool, spend_all: bool
) -> float:
    """The information fraction a look spends up to (triggers and evals alike): the runs per
    query (case) so far over the cap (`report.information`), never below the last look's; the
    rest of the alpha (1.0) at the cap, or when the loop stops with no ledger to continue it
    (`spend_all`; with a ledger the rest is kept for a later attempt)."""
    if at_cap or spend_all:
        return 1.0
    return max(t_prev, information(full_b, full_h, cap))


def conclude(
    look: Callable[[float, float, bool], tuple[Label, Reruns]],
    record: Callable[[Label, Reruns], None],
    label: Label,
    last: Reruns | None,
    t_prev: float,
    prior: Prior,
) -> Reruns | None:
    """The end of one comparison's loop (triggers and evals alike): the ledger's runs filling
    the cap already get the last look; no look at all (nothing could be added) leaves the stored
    comparison as it is (None); a loop that ran dry undecided closes the plan with the rest of
    the alpha; the last look and this job's runs are recorded (`record`)."""
    if last is None and prior.look is not None:  # the ledger's runs fill the cap already
        label, last = look(t_prev, 1.0, True)
    if last is None:  # nothing could be added: the stored look with the whole alpha
        return None
    if not last.final and label not in DECIDED:  # the loop ran dry: close the plan
        label, last = look(t_prev, 1.0, True)
    record(label, last)
    return last


def resume(
    ledger: Ledger | None,
    *,
    key: str,
    model: str,
    fp: Fingerprints,
    with_base: bool,
    attempt: str,
) -> tuple[Prior, str]:
    """What the PR's ledger holds for one comparison (triggers and evals alike), and the attempt
    whose head sweep its looks rest on: an earlier attempt's when the ledger kept the sweep its
    furthest look tested (`Prior.sweep`: the comparison then tests that sweep, not this job's,
    so a decided verdict is final for its evidence), else `attempt` (this job's own sweep)."""
    if ledger is None:
        return Prior(), attempt
    prior = ledger.prior(
        skill=key, model=model, base=fp[0], head=fp[1], tool=fp[2], with_base=with_base
    )
    if prior.sweep and prior.look is not None:
        return prior, prior.look.sweep
    return prior, attempt


def settled(job: PowerJob, *, key: str, model: str, fp: Fingerprints) -> Prior | None:
    """What the PR's ledger holds for this exact comparison when it is closed (decided, or final
    at the cap) with the head sweep its look tested kept: the test is over and rests on that
    sweep, so a job of the same content needs neither a head sweep nor more runs for it (the
    planner starts none: `flows._pr_evaluate`). None: no ledger, the comparison is still open,
    or the ledger predates kept sweeps."""
    if job.ledger is None:
        return None
    prior = job.ledger.prior(skill=key, model=model, base=fp[0], head=fp[1], tool=fp[2])
    if prior.look is None or not prior.look.closed or not prior.sweep:
        return None
    return prior


def record_look(
    out: PowerOutcome,
    fp: Fingerprints,
    label: Label,
    rr: Reruns,
    *,
    attempt: str,
    key: str,
    model: str,
    made: tuple[SideRuns, SideRuns],
    round_no: int,
    sweep: str = "",
    kept: Sequence[QueryRuns] = (),
    planned: int = 0,
) -> None:
    """One comparison's runs made by this job (base, head) and its last look, into `out` for
    the ledger (triggers and evals alike). `sweep` names the attempt whose head sweep the look
    rested on; when it is this one, that sweep (`kept`: per query or case its hits and runs,
    `planned` runs each) is kept too (block `SWEEP`), so later attempts test it (`resume`)."""
    base_fp, head_fp, tool = fp
    for side, content, runs in (("base", base_fp, made[0]), ("head", head_fp, made[1])):
        out.runs.extend(
            runs_of(
                attempt,
                key,
                model,
                side,  # type: ignore[arg-type]
                content,
                tool,
                runs.frozen(round_no),
            )
        )
    out.looks.append(
        LedgerLook(
            skill=key,
            model=model,
            base=base_fp,
            head=head_fp,
            tool=tool,
            attempt=attempt,
            t_prev=rr.t_prev,
            t=rr.t,
            final=rr.final,
            label=label.value,
            closed=label in DECIDED or rr.t >= 1.0,
            sweep=sweep,
        )
    )
    if sweep and sweep == attempt:  # the head sweep these looks rested on: kept
        out.runs.extend(
            LedgerRun(
                attempt=attempt,
                skill=key,
                model=model,
                side="head",
                query=q.query,
                should_trigger=q.should_trigger,
                content=head_fp,
                tool=tool,
                hits=q.hits,
                runs=q.runs,
                block=SWEEP,
                planned=planned,
            )
            for q in kept
        )


def _sweep_queries(entry: TriggersEntry) -> tuple[QueryRuns, ...]:
    """The head sweep `entry` per query (an invalid query: 0 runs), as the ledger keeps it."""
    return tuple(
        QueryRuns(
            query=r.query,
            should_trigger=r.should_trigger,
            hits=r.hits if r.runs and r.hits is not None else 0,
            runs=r.runs if r.runs and r.hits is not None else 0,
        )
        for r in entry.results
    )


def sweep_entry(head: TriggersEntry, kept: Sequence[LedgerRun]) -> TriggersEntry:
    """`head` with the results of the ledger's sweep `kept` (its header otherwise; `head` may be
    a header alone: the planner's stand-in when it ran no sweep)."""
    planned = max((r.planned for r in kept), default=0) or head.header.runs_per_query
    results = tuple(
        TriggerResult(
            query=r.query,
            should_trigger=r.should_trigger,
            hits=r.hits if r.runs else None,
            runs=r.runs or None,
            passed=passes(r.hits, r.runs, r.should_trigger) if r.runs else None,
        )
        for r in kept
    )
    header = msgspec.structs.replace(head.header, runs_per_query=planned)
    return msgspec.structs.replace(head, header=header, results=results)


def _track(
    ev: SkillEvidence,
    model: str,
    head: TriggersEntry,
    base: TriggersEntry | None,
    key: str,
) -> _Track:
    return _Track(ev=ev, model=model, head_entry=head, base_entry=base, key=key)


def reruns_document(
    outcome: PowerOutcome, *, base_sha: str, head_sha: str, options: PowerOptions
) -> dict[str, Any]:
    """The artifact (`.evolve-action/base-runs.json`): every run this job added, per skill ×
    model and query, with why and the last look. Never a results file."""
    skills: dict[str, Any] = {}
    for key, models in sorted(outcome.reruns.items()):
        skills[key] = {
            model: {
                "why": outcome.why.get(f"{key} {model}", ""),
                "base_runs": [
                    {
                        "query": q.query,
                        "should_trigger": q.should_trigger,
                        "hits": q.hits,
                        "runs": q.runs,
                        "rounds": [list(r) for r in q.rounds],
                    }
                    for q in rr.base
                ],
                "extra_head_runs": [
                    {
                        "query": q.query,
                        "should_trigger": q.should_trigger,
                        "hits": q.hits,
                        "runs": q.runs,
                        "rounds": [list(r) for r in q.rounds],
                    }
                    for q in rr.head
                ],
                "base_side": "fresh runs only" if rr.base_fresh else "stored runs + these",
                "look": {"t_prev": round(rr.t_prev, 6), "t": round(rr.t, 6), "final": rr.final},
            }
            for model, rr in sorted(models.items())
        }
    return {
        "base": base_sha,
        "head": head_sha,
        "mode": options.base,
        "max_runs": options.max_runs,
        "sessions": outcome.sessions,
        "base_sessions": outcome.base_sessions,
        "skills": skills,
    }
