"""The schema-5 results file (`<plugin>/evals/<skill>/results.<ext>`): the facade, I/O and recording.

Owns: reading a results file from disk (`load_results`: first of `results.{json,jsonc,yaml,yml}`,
in-memory migration of schemas 3 and 4, "start fresh" on a file that is too old), writing it
(`write_results`, `results_path`), `report --migrate` (`migrate_in_place`) and the
write-after-each-unit path (`ResultsWriter`, `TriggerUnitRecord`, `EvalUnitRecord`). The model
(`_model`), the codec (`_codec`) and the pure operations (`_merge`) are its siblings; the package
`__init__` exports them all.

Guarantees:
- `to_document(from_document(doc))` re-encodes every file evolve 0.7.0 wrote byte-identically
  through `encoding.encode_json`; unknown keys are dropped on read, exactly as evolve drops them.
- Writes are atomic (`encoding.atomic_write_text`) and remove `results.*` siblings of other formats.
- Only `load_results`, `write_results`, `migrate_in_place` and `ResultsWriter` touch the disk.
- Stored results are never destroyed because of a typo. `load_results` distinguishes:
  * the file does not parse (a syntax error, a git merge-conflict marker, not UTF-8, unreadable
    on disk) → `SpecError` naming `file:line` with a hint; the file is left untouched and the run
    stops before writing anything. (Deliberate deviation from evolve, which starts fresh and so
    overwrites the stored results of a file someone merely broke.)
  * it parses and claims schema 3, 4 or 5 but a value has the wrong JSON kind → `SpecError`
    naming the offending key, file untouched (same reason: it is our file, hand-damaged);
  * it parses but has no integer `schema`, or a schema older than 3 → "starting fresh" warning
    and replaced on the next save, as the spec says (evolve does this for old schemas);
  * schema newer than 5 → `SpecError`, file untouched.

Never does: decide which cases run (see `plan`), run agents, or print (warnings are returned).

Write-after-each-unit contract (DESIGN §3 "record"). Engines keep, per (skill, model, tier) unit,
the entry as stored when the unit started (`old`) and the fresh results finished so far. After
**every** finished query / case they call `TriggerUnitRecord.add` / `EvalUnitRecord.add` (which
re-runs the pure merge against `old`, so `previous` is always the snapshot of the unit-start
entry) and hand the entry to `ResultsWriter.put_triggers` / `put_evals`, which swaps it into the
in-memory file and rewrites the file atomically. `put_*` are synchronous and never await, so on
one event loop the read-modify-write cannot interleave: no lock is needed as long as every unit
of a results file shares one `ResultsWriter` and it is never called from another thread. A killed
run therefore loses at most the cases still in flight.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from evolve_action import encoding
from evolve_action.errors import SpecError, display_path
from evolve_action.results._codec import from_document, migrate_document, probe_schema, to_document
from evolve_action.results._merge import (
    replace_eval_entry,
    replace_trigger_entry,
    with_entry,
)
from evolve_action.results._model import (
    MIGRATABLE,
    SCHEMA_VERSION,
    EntryHeader,
    EvalResult,
    EvalsEntry,
    ResultsFile,
    TriggerResult,
    TriggersEntry,
)

__all__ = [
    "EvalUnitRecord",
    "LoadedResults",
    "ResultsWriter",
    "TriggerUnitRecord",
    "check_writable",
    "load_results",
    "migrate_in_place",
    "results_path",
    "write_results",
]


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


class LoadedResults(NamedTuple):
    """What `load_results` found."""

    file: ResultsFile | None
    """The (possibly migrated) file; None when there is none or it was unreadable."""
    path: Path | None
    """The file read (first of `results.{json,jsonc,yaml,yml}`), if any."""
    warning: str | None
    """Set when an unreadable/too-old file will be replaced ("starting fresh")."""
    migrated_from: int | None
    """3 or 4 when the file was migrated in memory."""


def results_path(results_dir: Path, fmt: encoding.Format) -> Path:
    """`<results_dir>/results.<fmt>`."""
    return results_dir / f"results.{fmt}"


def _names(results_dir: Path, plugin: str | None, skill: str | None) -> tuple[str, str]:
    sk = skill if skill is not None else results_dir.name
    pl = plugin if plugin is not None else results_dir.parent.parent.name
    return pl, sk


def load_results(
    results_dir: Path,
    *,
    plugin: str | None = None,
    skill: str | None = None,
    root: Path | None = None,
) -> LoadedResults:
    """Read the results file of an eval directory (report spec §1.6).

    `plugin`/`skill` overwrite the stored names (default: the directory names
    `<plugin>/evals/<skill>`). Schema 5 is decoded; 3 and 4 are migrated in memory; a newer
    schema, a file that does not parse, or a schema 3-5 file with a value of the wrong kind
    raises `SpecError` (the file must never be overwritten: see the module docstring); a file
    with no schema or one older than 3 is treated as absent with a "starting fresh" `warning`
    (`root` only shortens the path in it). Returns an empty result when there is no results file.
    """
    path = encoding.find_results(results_dir)
    if path is None:
        return LoadedResults(None, None, None, None)
    pl, sk = _names(results_dir, plugin, skill)
    fresh = (
        f"{display_path(path, root)} has an old or unreadable results schema; "
        f"starting fresh (schema {SCHEMA_VERSION})"
    )
    doc = _decode_stored(path)
    n = probe_schema(doc)
    if n is not None and n > SCHEMA_VERSION:
        raise SpecError(
            f"results file is schema {n}, written by a newer evolve (this tool writes schema "
            f"{SCHEMA_VERSION}); upgrade evolve-action",
            path=path,
            hint="the file is left untouched",
        )
    try:
        if n == SCHEMA_VERSION:
            return LoadedResults(from_document(doc, plugin=pl, skill=sk), path, None, None)
        if n in MIGRATABLE:
            return LoadedResults(migrate_document(doc, plugin=pl, skill=sk), path, None, n)
    except ValueError as exc:
        raise SpecError(
            f"schema {n} results hold a value of the wrong kind: {exc}",
            path=path,
            hint="fix the value, or delete it to start fresh; the file is left untouched",
        ) from None
    return LoadedResults(None, path, fresh, None)


def check_writable(results_dir: Path, fmt: encoding.Format, *, root: Path | None = None) -> None:
    """Raise `SpecError` unless `results.<fmt>` in `results_dir` can be (re)written.

    Engines call it for every eval set they will write before the first agent session starts,
    so a read-only results file or directory stops the run with a clear message instead of
    failing after minutes of agent time. An existing read-only results file is refused rather
    than replaced (the atomic rename would otherwise overwrite it silently).
    """
    where = display_path(results_dir, root)
    if not results_dir.is_dir() or not os.access(results_dir, os.W_OK | os.X_OK):
        raise SpecError(
            f"cannot write results: directory {where} is not writable",
            path=results_dir,
            hint="make it writable (chmod u+w) and re-run; nothing was written",
        )
    target = results_path(results_dir, fmt)
    if target.exists() and not target.is_file():
        raise SpecError(
            "cannot write results: the path exists and is not a regular file",
            path=target,
            hint="move it out of the way and re-run; nothing was written",
        )
    for name in (target.name, *(f"results.{e}" for e in encoding.EXTENSIONS)):
        candidate = results_dir / name
        if candidate.is_file() and not os.access(candidate, os.W_OK):
            raise SpecError(
                "cannot write results: the file is read-only",
                path=candidate,
                hint="make it writable (chmod u+w) and re-run; nothing was written",
            )


def _decode_stored(path: Path) -> Any:
    """Decode a stored results file; a file that does not parse is a `SpecError`, never "fresh"."""
    try:
        return encoding.decode_path(path)
    except SpecError as exc:
        marker = _conflict_marker_line(path)
        raise SpecError(
            "stored results hold an unresolved git merge conflict"
            if marker
            else f"stored results do not parse: {exc.message}",
            path=exc.path or path,
            line=marker or exc.line,
            hint=(
                "fix the file (resolve any git merge conflict), or delete it to start fresh; "
                "it is left untouched"
            ),
        ) from None


def _conflict_marker_line(path: Path) -> int | None:
    """The 1-based line of the first git conflict marker (`<<<<<<< `) in `path`, if any."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for i, line in enumerate(text.splitlines(), start=1):
        if line.startswith(("<<<<<<<", "=======", ">>>>>>>")):
            return i
    return None


def write_results(results_dir: Path, file: ResultsFile, fmt: encoding.Format) -> Path:
    """Write `file` atomically as `results.<fmt>` and delete other-format siblings; return the path.

    json = Go `MarshalIndent` + `\\n`; jsonc/yaml start with the
    `Maintained by evolve run; do not edit by hand.` comment line.
    """
    path = results_path(results_dir, fmt)
    text = encoding.encode_document(to_document(file), fmt, encoding.RESULTS_COMMENT)
    encoding.atomic_write_text(path, text)
    encoding.remove_siblings(path)
    return path


def migrate_in_place(
    results_dir: Path,
    fmt: encoding.Format,
    *,
    plugin: str | None = None,
    skill: str | None = None,
) -> int | None:
    """`report --migrate` for one eval directory: rewrite a schema 3/4 file as schema 5.

    Returns the old schema number when the file was upgraded, None when there is no file or it
    is already schema 5. Raises `SpecError` for schemas it cannot migrate (`< 3`, unreadable)
    or newer than 5; the file is then left untouched.
    """
    path = encoding.find_results(results_dir)
    if path is None:
        return None
    doc = _decode_stored(path)
    n = probe_schema(doc)
    if n == SCHEMA_VERSION:
        return None
    if n is not None and n > SCHEMA_VERSION:
        raise SpecError(
            f"results file is schema {n}, written by a newer evolve (this tool writes schema "
            f"{SCHEMA_VERSION}); upgrade evolve-action",
            path=path,
        )
    if n not in MIGRATABLE:
        shown = "no schema" if n is None else f"schema {n}"
        raise SpecError(
            f"{path}: cannot migrate results with {shown} (only schemas 3 and 4 migrate)",
            path=path,
            hint="delete the file to start fresh",
        )
    pl, sk = _names(results_dir, plugin, skill)
    try:
        file = migrate_document(doc, plugin=pl, skill=sk)
    except ValueError as exc:
        raise SpecError(f"{path}: cannot migrate: {exc}", path=path) from exc
    write_results(results_dir, file, fmt)
    return n


# --------------------------------------------------------------------------------------------
# The write-after-each-unit path
# --------------------------------------------------------------------------------------------


class ResultsWriter:
    """The in-memory state of one results file plus its atomic writer.

    One instance per results file, shared by every unit (model × tier) that writes it. `put_*`
    swap an entry in and rewrite the whole file synchronously; they never await, so calls from
    coroutines on one event loop cannot interleave a read-modify-write (that is why there is no
    lock). Never call them from worker threads.
    """

    def __init__(
        self,
        results_dir: Path,
        file: ResultsFile | None,
        fmt: encoding.Format,
        *,
        plugin: str = "",
        skill: str = "",
    ) -> None:
        pl, sk = _names(results_dir, plugin or None, skill or None)
        self.results_dir = results_dir
        self.fmt: encoding.Format = fmt
        self._file = file if file is not None else ResultsFile(plugin=pl, skill=sk)
        self.writes = 0
        """How many times the file was written (tests and progress use it)."""

    @property
    def file(self) -> ResultsFile:
        """The current in-memory file (what was last written, or loaded)."""
        return self._file

    def put_triggers(self, model_key: str, entry: TriggersEntry) -> Path:
        """Store `entry` as `model_key`'s triggers entry and rewrite the file atomically."""
        self._file = with_entry(self._file, model_key, triggers=entry)
        return self._write()

    def put_evals(self, model_key: str, entry: EvalsEntry) -> Path:
        """Store `entry` as `model_key`'s evals entry and rewrite the file atomically."""
        self._file = with_entry(self._file, model_key, evals=entry)
        return self._write()

    def replace_file(self, file: ResultsFile) -> Path:
        """Replace the whole file (e.g. after `drop_models`) and write it."""
        self._file = file
        return self._write()

    def _write(self) -> Path:
        try:
            path = write_results(self.results_dir, self._file, self.fmt)
        except OSError as exc:
            target = results_path(self.results_dir, self.fmt)
            raise SpecError(
                f"cannot write results: {exc.strerror or exc}",
                path=target,
                hint="results written before this point are on disk; fix the problem and "
                "re-run with --new to continue",
            ) from exc
        self.writes += 1
        return path


class TriggerUnitRecord:
    """Accumulates one trigger unit's fresh results; `add` returns the entry to write now.

    `old` is the stored entry at unit start (it stays the source of `previous` for every
    intermediate write). `planned` are the queries this unit will run; the entry is marked
    complete (fresh `content_hash`) once all of them have a fresh result.
    """

    def __init__(
        self,
        old: TriggersEntry | None,
        *,
        header: EntryHeader,
        valid_queries: Sequence[str],
        planned: Iterable[str],
    ) -> None:
        self.old = old
        self.header = header
        self.valid_queries = tuple(valid_queries)
        self.planned = frozenset(planned)
        self.fresh: dict[str, TriggerResult] = {}

    @property
    def complete(self) -> bool:
        """All planned queries have a fresh result."""
        return self.planned.issubset(self.fresh)

    def add(self, result: TriggerResult) -> TriggersEntry:
        """Record one finished query and return the merged entry to store."""
        self.fresh[result.query] = result
        return self.entry()

    def entry(self, *, final: bool = False) -> TriggersEntry:
        """The merged entry for the results so far (`final=True` forces a complete header)."""
        return replace_trigger_entry(
            self.old,
            header=self.header,
            fresh=self.fresh,
            valid_queries=self.valid_queries,
            complete=final or self.complete,
        )


class EvalUnitRecord:
    """Accumulates one eval unit's fresh results (and baselines); `add` returns the entry to write.

    Same contract as `TriggerUnitRecord`; a case's baseline result, when it ran, is passed to
    `add` with the case so that both land in the same write.
    """

    def __init__(
        self,
        old: EvalsEntry | None,
        *,
        header: EntryHeader,
        valid_ids: Sequence[str],
        planned: Iterable[str],
    ) -> None:
        self.old = old
        self.header = header
        self.valid_ids = tuple(valid_ids)
        self.planned = frozenset(planned)
        self.fresh: dict[str, EvalResult] = {}
        self.fresh_baselines: dict[str, EvalResult] = {}

    @property
    def complete(self) -> bool:
        """All planned evals have a fresh result."""
        return self.planned.issubset(self.fresh)

    def add(self, result: EvalResult, baseline: EvalResult | None = None) -> EvalsEntry:
        """Record one finished case (and its fresh baseline, if one ran); return the entry."""
        self.fresh[result.id] = result
        if baseline is not None:
            self.fresh_baselines[result.id] = baseline
        return self.entry()

    def entry(self, *, final: bool = False) -> EvalsEntry:
        """The merged entry for the results so far (`final=True` forces a complete header)."""
        return replace_eval_entry(
            self.old,
            header=self.header,
            fresh=self.fresh,
            valid_ids=self.valid_ids,
            fresh_baselines=self.fresh_baselines,
            complete=final or self.complete,
        )
