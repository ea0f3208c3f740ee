"""The ledger of a pull request's comparison runs: kept across workflow runs, merged on write.

Owns: `Ledger` (every base rerun and extra head run power on demand made for a PR, and every
look of its sequential test, each stamped with the fingerprints of what ran and the workflow
run that made it, and the head sweep each look rested on), `LedgerRun`, `LedgerLook`, `Prior`
(what one skill × model comparison already has), the JSON codec (`ledger_json`, `parse_ledger`)
and the two stores: `FileStore` (`pr --local`: `.evolve-action/ledger.json`) and `RefStore` (a
GitHub PR: one JSON blob on the ref `refs/evolve-action/ledger/pr-<number>`, written with the
Git Data API; see docs/pr-comment.md, "Runs across workflow runs").

A run is reusable when its fingerprints match what this job would run: the skill × model, the
side, the query and its expectation, the skill's trigger content hash on that side (evolve's
`content_hash`: its frontmatter) and the harness and tool version that ran it. A look belongs to
one comparison: skill × model × base content × head content × tool. Looks carry the
information fraction they spent (`t_prev` → `t`): a later attempt continues from the last `t`,
so alpha spending continues across attempts and re-running cannot spend it twice.

Finality. A look also names the attempt whose **head sweep** it rested on (`LedgerLook.sweep`),
and that attempt's sweep is kept as runs of block `SWEEP` (per query: hits, runs and the sweep's
planned runs). A later workflow run of the same content gets that sweep back (`Prior.sweep`) and
tests it instead of its own: the comparison is one test on one body of evidence, so a decided
verdict is final for its evidence, and "Re-run jobs" (whose checkout lacks the results commit)
can neither flip it nor re-open it, nor re-run that sweep: the planner starts no session for a
comparison closed with its sweep kept (`flows._power.settled`). Eval comparisons (`skill`
`plugin/skill#evals`) keep their head run the same way, one run per case. Only new content
(another fingerprint) starts another comparison.

Guarantees: the model, merge and codec are pure; merging is a union keyed by (attempt, what ran)
in which the larger count wins (one attempt writes cumulative counts), so two writers who each
merge what they read never lose each other's runs. The stores never write on the default branch
nor into a results file; `RefStore` re-reads, merges and retries when the ref moved under it,
and writes nothing when told the token is read-only.

Never does: run sessions, decide labels (report's `compare_skill` does), post or commit results.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from evolve_action.encoding import write_text
from evolve_action.errors import EvolveError
from evolve_action.report import QueryRuns

__all__ = [
    "LEDGER_REF",
    "SWEEP",
    "FileStore",
    "Fingerprints",
    "Ledger",
    "LedgerLook",
    "LedgerRun",
    "LedgerStore",
    "Prior",
    "RefStore",
    "history",
    "ledger_json",
    "parse_ledger",
    "runs_of",
]

LEDGER_VERSION = 1
LEDGER_REF = "evolve-action/ledger/pr-{number}"
"""The ref (under `refs/`, outside `refs/heads`) holding a PR's ledger; `{number}` is the PR."""
LEDGER_PATH = "ledger.json"
"""The ledger's file name, in the ref's tree and under `.evolve-action/` locally."""
WRITE_ATTEMPTS = 5
"""Read-merge-write attempts when the ref moves under us (concurrent workflow runs)."""

Side = Literal["base", "head"]

SWEEP = -1
"""The block of a head sweep's records (the committed-results sweep a look rested on), kept so a
later workflow run tests the same evidence (module doc, "Finality"); never extra runs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerRun:
    """The runs one attempt made of one query on one side, and what they ran."""

    skill: str
    """`plugin/skill`."""
    model: str
    side: Side
    query: str
    should_trigger: bool
    content: str
    """The side's skill trigger content hash (evolve's `content_hash`)."""
    tool: str
    """Harness and tool version (`claude-code 2.0.1`)."""
    attempt: str
    """The workflow run and attempt that made them (`<run id>.<attempt>`, or `local …`)."""
    hits: int
    runs: int
    block: int = 0
    """0: runs outside the selective rounds (a fresh base's first runs, extra head runs against a
    stored base); n ≥ 1: the attempt's n-th selective round, a stratum of its own in the test
    (docs/pr-comment.md, "The rule": pooling rounds would not be exact); `SWEEP`: the head's
    sweep this attempt's look rested on (not extra runs)."""
    planned: int = 0
    """`SWEEP` records only: the sweep's planned runs per query (it may have stopped early)."""

    def key(self) -> tuple[str, ...]:
        return (
            self.attempt,
            self.skill,
            self.model,
            self.side,
            self.query,
            str(self.should_trigger),
            self.content,
            self.tool,
            str(self.block),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerLook:
    """The last look one attempt made of one comparison: the alpha slice and the label."""

    skill: str
    model: str
    base: str
    """The base side's content hash ("" when the base was not re-run: the stored base)."""
    head: str
    tool: str
    attempt: str
    t_prev: float
    t: float
    final: bool
    label: str
    closed: bool
    """Decided, or final at the cap: the test is over, no run is added for this comparison."""
    sweep: str = ""
    """The attempt whose head sweep (`SWEEP` runs) this look tested ("": not recorded, a ledger
    written before sweeps were kept)."""

    def key(self) -> tuple[str, ...]:
        return (self.attempt, self.skill, self.model, self.base, self.head, self.tool)


@dataclass(frozen=True, slots=True, kw_only=True)
class Prior:
    """What the ledger already holds for one comparison."""

    base: tuple[QueryRuns, ...] = ()
    head: tuple[QueryRuns, ...] = ()
    rounds: int = 0
    """Earlier attempts' selective rounds (each its own stratum: `QueryRuns.rounds` 1…`rounds`)."""
    look: LedgerLook | None = None
    """The furthest look (largest `t`; a closed one first)."""
    sweep: tuple[LedgerRun, ...] = ()
    """The head sweep `look` rested on (`SWEEP` runs of `look.sweep`): the comparison tests it
    instead of this job's sweep (module doc, "Finality"); empty when not recorded."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ledger:
    """A PR's runs and looks over every workflow run that recorded some."""

    runs: tuple[LedgerRun, ...] = ()
    looks: tuple[LedgerLook, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.runs and not self.looks

    def merge(self, other: Ledger) -> Ledger:
        """The union of both (per attempt and what ran, the larger count; per attempt and
        comparison, the further look)."""
        runs: dict[tuple[str, ...], LedgerRun] = {}
        for r in (*self.runs, *other.runs):
            old = runs.get(r.key())
            if old is None or (r.runs, r.hits) > (old.runs, old.hits):
                runs[r.key()] = r
        looks: dict[tuple[str, ...], LedgerLook] = {}
        for lk in (*self.looks, *other.looks):
            prev = looks.get(lk.key())
            if prev is None or (lk.closed, lk.t) > (prev.closed, prev.t):
                looks[lk.key()] = lk
        return Ledger(
            runs=tuple(sorted(runs.values(), key=LedgerRun.key)),
            looks=tuple(sorted(looks.values(), key=LedgerLook.key)),
        )

    def prior(
        self, *, skill: str, model: str, base: str, head: str, tool: str, with_base: bool = True
    ) -> Prior:
        """The runs whose fingerprints match this comparison, summed over attempts, and its
        furthest look. `with_base` False: base runs are not wanted (the stored base is used)."""

        def matching(which: Side, content: str) -> list[LedgerRun]:
            return [
                r
                for r in self.runs
                if (r.skill, r.model, r.side, r.content, r.tool)
                == (skill, model, which, content, tool)
            ]

        wanted = [*(matching("base", base) if with_base and base else []), *matching("head", head)]
        # Every earlier selective round, over both sides, gets one round number here.
        numbers = {
            key: i
            for i, key in enumerate(
                sorted({(r.attempt, r.block) for r in wanted if r.block > 0}), 1
            )
        }

        def side(which: Side, content: str) -> tuple[QueryRuns, ...]:
            got: dict[tuple[str, bool], list[int]] = {}
            blocks: dict[tuple[str, bool], dict[int, tuple[int, int]]] = {}
            for r in matching(which, content):
                if r.block == SWEEP:
                    continue  # the sweep's own records, not extra runs (`Prior.sweep`)
                acc = got.setdefault((r.query, r.should_trigger), [0, 0])
                acc[0] += r.hits
                acc[1] += r.runs
                if r.block > 0:
                    blocks.setdefault((r.query, r.should_trigger), {})[
                        numbers[(r.attempt, r.block)]
                    ] = (r.hits, r.runs)
            return tuple(
                QueryRuns(
                    query=q,
                    should_trigger=s,
                    hits=h,
                    runs=n,
                    rounds=tuple(
                        blocks.get((q, s), {}).get(i, (0, 0)) for i in range(1, len(numbers) + 1)
                    ),
                )
                for (q, s), (h, n) in sorted(got.items())
            )

        looks = [
            lk
            for lk in self.looks
            if (lk.skill, lk.model, lk.base, lk.head, lk.tool) == (skill, model, base, head, tool)
        ]
        look = max(looks, key=lambda lk: (lk.closed, lk.t, lk.attempt), default=None)
        sweep = tuple(
            r
            for r in matching("head", head)
            if r.block == SWEEP and look is not None and look.sweep and r.attempt == look.sweep
        )
        return Prior(
            base=side("base", base) if with_base and base else (),
            head=side("head", head),
            rounds=len(numbers),
            look=look,
            sweep=sweep,
        )


Fingerprints = tuple[str, str, str]
"""A comparison's base content, head content and tool."""


def history(
    ledger: Ledger, comparisons: Mapping[tuple[str, str], Fingerprints]
) -> tuple[int, tuple[str, ...]]:
    """How many workflow runs contributed runs or looks to these comparisons (skill × model →
    fingerprints), and, per comparison whose earlier attempts' labels differ from its latest
    look's, one line saying so."""
    attempts: set[str] = set()
    differed: list[str] = []
    for (skill, model), (base, head, tool) in sorted(comparisons.items()):
        looks = [
            lk
            for lk in ledger.looks
            if (lk.skill, lk.model, lk.base, lk.head, lk.tool) == (skill, model, base, head, tool)
        ]
        attempts.update(lk.attempt for lk in looks)
        attempts.update(
            r.attempt
            for r in ledger.runs
            if (r.skill, r.model, r.tool) == (skill, model, tool)
            and r.content == (base if r.side == "base" else head)
        )
        if not looks:
            continue
        latest = max(looks, key=lambda lk: (lk.closed, lk.t, lk.attempt))
        earlier = {lk.label for lk in looks if lk.attempt != latest.attempt} - {latest.label}
        if earlier:
            differed.append(
                f"{skill} ({model}): an earlier workflow run said {', '.join(sorted(earlier))}"
            )
    return len(attempts), tuple(differed)


_KEYS: dict[type[LedgerRun | LedgerLook], tuple[str, ...]] = {
    LedgerRun: (
        *("attempt", "skill", "model", "side", "query", "should_trigger", "content", "tool"),
        *("hits", "runs", "block", "planned"),
    ),
    LedgerLook: (
        *("attempt", "skill", "model", "base", "head", "tool"),
        *("t_prev", "t", "final", "label", "closed", "sweep"),
    ),
}
"""Each entry kind's fields in the order the JSON writes them: the one list both directions read
(a field with a default is optional when read; `planned` and `sweep` are written only when set)."""
_E = TypeVar("_E", LedgerRun, LedgerLook)
_WRITTEN_WHEN_SET = frozenset({"planned", "sweep"})
_CASTS: dict[str, Any] = {"str": str, "Side": str, "int": int, "float": float, "bool": bool}


def _encode(entry: LedgerRun | LedgerLook) -> dict[str, Any]:
    defaults = {f.name: f.default for f in dataclasses.fields(entry)}
    return {
        k: v
        for k in _KEYS[type(entry)]
        if (v := getattr(entry, k)) != defaults[k] or k not in _WRITTEN_WHEN_SET
    }


def _decode(kind: type[_E], d: Mapping[str, Any]) -> _E:
    fields = {f.name: f for f in dataclasses.fields(kind)}
    values = {}
    for k in _KEYS[kind]:
        f = fields[k]
        raw = d[k] if f.default is dataclasses.MISSING else d.get(k, f.default)
        values[k] = _CASTS[str(f.type)](raw)
    return kind(**values)


def ledger_json(ledger: Ledger) -> str:
    """The ledger as stable, sorted JSON text (one run or look per line)."""
    runs = [_encode(r) for r in ledger.runs]
    looks = [_encode(lk) for lk in ledger.looks]
    lines = ['{"version": 1,', ' "runs": [']
    lines.append(",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in runs))
    lines.append(' ],\n "looks": [')
    lines.append(",\n".join("  " + json.dumps(lk, ensure_ascii=False) for lk in looks))
    lines.append(" ]}")
    return "\n".join(line for line in lines if line) + "\n"


def parse_ledger(text: str | bytes, *, where: str) -> Ledger:
    """A ledger from its JSON; `EvolveError` naming `where` when it is not one."""
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("version") != LEDGER_VERSION:
            raise ValueError(f"not a version {LEDGER_VERSION} ledger")
        runs = tuple(_run(r) for r in doc.get("runs", []))
        looks = tuple(_look(lk) for lk in doc.get("looks", []))
    except (ValueError, TypeError, KeyError) as exc:
        raise EvolveError(
            f"{where}: unreadable ledger of runs ({exc})",
            hint="delete it to start the PR's comparison afresh (its runs are then not reused)",
        ) from None
    return Ledger().merge(Ledger(runs=runs, looks=looks))


def _run(d: Mapping[str, Any]) -> LedgerRun:
    if d["side"] not in ("base", "head"):
        raise ValueError(f"side {d['side']!r}")
    return _decode(LedgerRun, d)


def _look(d: Mapping[str, Any]) -> LedgerLook:
    return _decode(LedgerLook, d)


def runs_of(
    attempt: str,
    skill: str,
    model: str,
    side: Side,
    content: str,
    tool: str,
    queries: Iterable[QueryRuns],
) -> tuple[LedgerRun, ...]:
    """This attempt's runs of one side as ledger entries: per query, its runs outside the
    selective rounds (block 0) and each selective round's block (`QueryRuns.rounds`)."""
    out: list[LedgerRun] = []
    for q in queries:
        blocks = [(0, q.hits - sum(h for h, _ in q.rounds), q.runs - sum(n for _, n in q.rounds))]
        blocks += [(i, h, n) for i, (h, n) in enumerate(q.rounds, start=1)]
        out += [
            LedgerRun(
                attempt=attempt,
                skill=skill,
                model=model,
                side=side,
                query=q.query,
                should_trigger=q.should_trigger,
                content=content,
                tool=tool,
                hits=h,
                runs=n,
                block=block,
            )
            for block, h, n in blocks
            if n
        ]
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# Stores (the I/O edge)
# ------------------------------------------------------------------------------------------------


class LedgerStore(Protocol):
    """Where a PR's ledger lives."""

    writable: bool
    where: str

    def load(self) -> Ledger: ...

    def save(self, ours: Ledger) -> Ledger:
        """Merge `ours` into what is stored now and write it; return the merged ledger."""
        ...


@dataclass(slots=True)
class FileStore:
    """`pr --local`: `.evolve-action/ledger.json` (git-ignored), merged on write."""

    path: Path
    writable: bool = True
    where: str = field(init=False)

    def __post_init__(self) -> None:
        self.where = str(self.path)

    def load(self) -> Ledger:
        if not self.path.is_file():
            return Ledger()
        return parse_ledger(self.path.read_bytes(), where=str(self.path))

    def save(self, ours: Ledger) -> Ledger:
        merged = self.load().merge(ours)
        if self.writable:
            write_text(self.path, ledger_json(merged))
        return merged


class RefFiles(Protocol):
    """The Git Data API calls `RefStore` needs (`github.RepositoryClient` has them)."""

    def read_ref_file(self, ref: str, path: str) -> tuple[bytes | None, str | None]: ...

    def write_ref_file(
        self, ref: str, path: str, data: bytes, *, parent: str | None, message: str
    ) -> bool: ...


@dataclass(slots=True)
class RefStore:
    """A GitHub PR's ledger: `ledger.json` in the one-commit-per-write history of
    `refs/evolve-action/ledger/pr-<number>` (never a branch, never the default branch)."""

    api: RefFiles
    number: int
    writable: bool = True
    where: str = field(init=False)

    def __post_init__(self) -> None:
        self.where = "refs/" + LEDGER_REF.format(number=self.number)

    @property
    def ref(self) -> str:
        return LEDGER_REF.format(number=self.number)

    def _read(self) -> tuple[Ledger, str | None]:
        data, tip = self.api.read_ref_file(self.ref, LEDGER_PATH)
        if data is None:
            return Ledger(), tip
        return parse_ledger(data, where=f"{self.where}:{LEDGER_PATH}"), tip

    def load(self) -> Ledger:
        return self._read()[0]

    def save(self, ours: Ledger) -> Ledger:
        merged = ours
        for _ in range(WRITE_ATTEMPTS):
            stored, tip = self._read()
            merged = stored.merge(ours)
            if not self.writable or merged == stored:
                return merged
            message = f"evolve-action: ledger of PR #{self.number}"
            data = ledger_json(merged).encode("utf-8")
            if self.api.write_ref_file(self.ref, LEDGER_PATH, data, parent=tip, message=message):
                return merged
        raise EvolveError(
            f"{self.where}: the ledger moved under {WRITE_ATTEMPTS} writes in a row",
            hint="another workflow run of this PR is writing it; re-run this job",
        )
