"""The reporter seam: engines emit events, front ends render them.

Owns: the event dataclasses, the `Reporter` protocol and the plain front ends (line, JSON lines,
recording, null). Guarantees: engines never print; every front end sees the same events in the same
order. Reporters are called from the event-loop thread only, so they need no lock.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TextIO

from evolve_action.sanitise import clean_line, write_trusted


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepStarted:
    """A tier's sweep is planned and starts: how much it will run (for progress and estimates)."""

    tier: str
    units: int
    """Units with something to run."""
    items: int
    """Items those units will finish (`ItemDone` events): trigger queries, eval cases and baselines."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitStarted:
    """A unit (one skill × model × tier) begins."""

    plugin: str
    skill: str
    model: str
    tier: str
    items: int
    """Number of planned items (queries × runs, or evals)."""
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitSkipped:
    """A unit that had nothing to run, with the reason."""

    plugin: str
    skill: str
    model: str
    tier: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemStarted:
    """One agent session or case starts."""

    skill: str
    model: str
    tier: str
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemDone:
    """One item (a trigger query, an eval case) finished."""

    skill: str
    model: str
    tier: str
    label: str
    status: str
    """`passed`, `failed` or `errored`."""
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitFinished:
    """A unit finished; its results are already written."""

    plugin: str
    skill: str
    model: str
    tier: str
    passed: int
    total: int
    errored: int = 0
    results_path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunWarning:
    """Something the user should know that does not stop the run.

    Named so it does not shadow the builtin `Warning`; JSON lines still call it `Warning`.
    """

    EVENT: ClassVar[str] = "Warning"
    """The event's name in JSON lines (kept from before the rename)."""

    message: str
    path: str | None = None
    line: int | None = None


Event = (
    SweepStarted | UnitStarted | UnitSkipped | ItemStarted | ItemDone | UnitFinished | RunWarning
)


class Reporter(Protocol):
    """Receives engine events; implementations decide how (or whether) to show them."""

    def emit(self, event: Event) -> None:
        """Handle one event."""


class NullReporter:
    """Discards every event."""

    def emit(self, event: Event) -> None:
        """Ignore the event."""


class RecordingReporter:
    """Keeps every event in a list; tests assert on it."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        """Record the event."""
        self.events.append(event)

    def of(self, kind: type[Any]) -> list[Any]:
        """Return the recorded events of one type."""
        return [e for e in self.events if isinstance(e, kind)]


class JsonLinesReporter:
    """Writes one JSON object per event: machine-readable and replayable."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def emit(self, event: Event) -> None:
        """Write the event as a JSON line tagged with its type."""
        name = getattr(type(event), "EVENT", type(event).__name__)
        record = {"event": name, **dataclasses.asdict(event)}
        self._stream.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        self._stream.flush()


class Progress:
    """Where a run stands across its sweeps: units and items done of those planned, time elapsed,
    an estimate of the rest (elapsed per finished item × items left) and the spend so far.

    Pure bookkeeping over events and an injected clock; `line()` renders it."""

    def __init__(
        self, *, clock: Callable[[], float], spent: Callable[[], float] | None = None
    ) -> None:
        self._clock = clock
        self._spent = spent
        self._start: float | None = None
        self.units = self.units_done = self.items = self.items_done = 0

    def add(self, event: Event) -> None:
        """Count one event."""
        if isinstance(event, SweepStarted):
            if self._start is None:
                self._start = self._clock()
            self.units += event.units
            self.items += event.items
        elif isinstance(event, ItemDone):
            self.items_done += 1
        elif isinstance(event, UnitFinished):
            self.units_done += 1

    @property
    def elapsed(self) -> float:
        """Seconds since the first sweep started (0 before)."""
        return 0.0 if self._start is None else self._clock() - self._start

    def remaining(self) -> float | None:
        """Estimated seconds left, or None before the first item finished."""
        if not self.items_done:
            return None
        left = max(self.items - self.items_done, 0)
        return self.elapsed / self.items_done * left

    def line(self) -> str:
        """`12/84 cases · 3/24 units · 1m12s elapsed · ~2m30s left · $0.42 spent`."""
        parts = [
            f"{self.items_done}/{self.items} cases",
            f"{self.units_done}/{self.units} units",
            f"{_duration(self.elapsed)} elapsed",
        ]
        left = self.remaining()
        if left is not None:
            parts.append(f"~{_duration(left)} left")
        if self._spent is not None:
            parts.append(f"${self._spent():.2f} spent")
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class LineReporter:
    """Plain progress lines; on a terminal (`live=True`) a single rewritten progress line per unit
    that also shows the whole run's progress; elsewhere (CI, Actions) a `progress:` line at most
    every `every` seconds while items finish — never one per item or per percent."""

    def __init__(
        self,
        stream: TextIO,
        *,
        live: bool = False,
        clock: Callable[[], float] = time.monotonic,
        every: float = 30.0,
        spent: Callable[[], float] | None = None,
    ) -> None:
        self._stream = stream
        self._live = live
        self._done = 0
        self._total = 0
        self._progress_shown = False
        self.progress = Progress(clock=clock, spent=spent)
        self._clock = clock
        self._every = every
        self._last_line: float | None = None

    def _clear_progress(self) -> None:
        if self._progress_shown:
            write_trusted(self._stream, "\r\x1b[2K")  # our own control, past the gate
            self._progress_shown = False

    def emit(self, event: Event) -> None:
        """Render the event as human-readable lines."""
        out = self._stream
        self.progress.add(event)
        if isinstance(event, SweepStarted):
            if self._last_line is None:
                self._last_line = self._clock()
            return
        if isinstance(event, UnitStarted):
            self._clear_progress()
            self._done, self._total = 0, event.items
            detail = f" ({event.detail})" if event.detail else ""
            out.write(
                f"\n=== {clean_line(event.skill)} / {event.model} [{event.tier}]{detail} ===\n"
            )
        elif isinstance(event, UnitSkipped):
            skill = clean_line(event.skill)
            out.write(f"  skip {skill} / {event.model} [{event.tier}]: {event.reason}\n")
        elif isinstance(event, ItemStarted):
            return
        elif isinstance(event, ItemDone):
            self._done += 1
            label = clean_line(event.label)  # a query or eval id: one line on the console
            if self._live:
                self._clear_progress()
                if event.status != "passed":
                    out.write(f"  {event.status.upper():7} {label}{_suffix(event.detail)}\n")
                whole = self.progress.line() if self.progress.units > 1 else ""
                out.write(f"  [{self._done}/{self._total}] {label[:40]}{_suffix(whole)}")
                self._progress_shown = True
            else:
                out.write(f"  {event.status.upper():7} {label}{_suffix(event.detail)}\n")
                self._periodic(out)
        elif isinstance(event, UnitFinished):
            self._clear_progress()
            errored = f", {event.errored} errored" if event.errored else ""
            out.write(f"  {event.passed}/{event.total} passed{errored}\n")
            if event.results_path:
                out.write(f"  -> {event.results_path}\n")
            if not self._live:
                self._periodic(out)
        elif isinstance(event, RunWarning):
            self._clear_progress()
            where = ""
            if event.path:
                where = f"{event.path}:{event.line}: " if event.line else f"{event.path}: "
            tag, message = "warn", event.message
            for prefix in ("WARN", "warn"):  # already tagged by its producer: keep that tag
                if message.startswith(f"{prefix}: "):
                    tag, message = prefix, message[len(prefix) + 2 :]
            out.write(f"{tag}: {where}{message}\n")
        out.flush()

    def _periodic(self, out: TextIO) -> None:
        now = self._clock()
        if self._last_line is not None and now - self._last_line >= self._every:
            self._last_line = now
            out.write(f"progress: {self.progress.line()}\n")


def _suffix(detail: str) -> str:
    return f" — {detail}" if detail else ""
