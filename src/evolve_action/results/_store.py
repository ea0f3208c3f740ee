"""The schema-5 results file (`<plugin>/evals/<skill>/results.<ext>`): the facade, I/O and recording.

Owns: reading a results file from disk (`load_results`: first of `results.{json,jsonc,yaml,yml}`,
in-memory migration of schemas 3 and 4, an error for anything else: `shape_problem`), writing it
(`write_results`, `results_path`), the advisory lock of a results file (`lock_results`), the
`--overwrite-unreadable-results` removal (`discard_unusable`), `report --migrate`
(`migrate_in_place`) and the write-after-each-unit path (`ResultsWriter`, `TriggerUnitRecord`,
`EvalUnitRecord`). The model (`_model`), the codec (`_codec`) and the pure operations (`_merge`)
are its siblings; the package `__init__` exports them all.

Guarantees:
- `to_document(from_document(doc))` re-encodes every file evolve 0.7.0 wrote byte-identically
  through `encoding.encode_json`; unknown keys are dropped on read, exactly as evolve drops them.
- Writes are atomic and link-safe (`encoding.atomic_write_text`: never through a symbolic link in the
  checkout, an error naming the file instead) and remove `results.*` siblings of other formats.
- Only `load_results`, `write_results`, `lock_results`, `discard_unusable`, `migrate_in_place` and
  `ResultsWriter` touch the disk.
- A results file is decoded at most once per version per process: `load_results` keeps what it
  decoded, keyed by path and names, and reuses it while the file's stamp (device, inode, size,
  mtime, ctime; plus a content digest while the file is too fresh to trust its stamp) is
  unchanged. Planning, the report, the gate and the writer's re-reads share one decode.
- Stored results are never destroyed because of a typo. `load_results` distinguishes:
  * the file does not parse (a syntax error, a git merge-conflict marker, not UTF-8, unreadable
    on disk) → `SpecError` naming `file:line` with a hint; the file is left untouched and the run
    stops before writing anything. (Deliberate deviation from evolve, which starts fresh and so
    overwrites the stored results of a file someone merely broke.)
  * it parses and claims schema 3, 4 or 5 but a value has the wrong JSON kind → `SpecError`
    naming the offending key, file untouched (same reason: it is our file, hand-damaged);
  * it parses but is not a schema-5 (or migratable 3/4) document of the right shape (a JSON
    array, `null`, `{}`, `"schema": "5"`, `{"schema": true}`, a schema older than 3, a schema-4
    file holding a `models` field, …) → `SpecError` naming the file and the first wrong field,
    file untouched. (Deliberate deviation from evolve, which starts fresh.) Only an explicit
    `--overwrite-unreadable-results` (`discard_unusable`) removes such a file;
  * schema newer than 5 → `SpecError`, file untouched (even with that flag);
  * a `results.<ext>` path that exists but is not a regular file (a directory) → `SpecError`.

Never does: decide which cases run (see `plan`), run agents, or print (warnings are returned).

Write-after-each-unit contract (DESIGN §3 "record"). Engines keep, per (skill, model, tier) unit,
the entry as stored when the unit started (`old`) and the fresh results finished so far. After
**every** finished query / case they call `TriggerUnitRecord.add` / `EvalUnitRecord.add` (which
re-runs the pure merge against `old`, so `previous` is always the snapshot of the unit-start
entry) and hand the entry to `ResultsWriter.put_triggers` / `put_evals`, which remembers it as one of *its*
entries and then, holding an advisory lock (`fcntl.flock` on the results directory), re-reads
the file on disk, swaps all of its entries into what it read, and rewrites the file atomically.
So concurrent `evolve-action run` processes writing one results file (triggers and evals tiers,
other models, other skills) serialise and never drop each other's entries; a writer that has to
wait says so ("waiting for lock on <file> held by another evolve-action run") through its
`on_wait` callback (engines route it to the reporter). Two processes running the *same* unit
(skill × model × tier) at once still race on that one entry: the last write wins. Within one
process, `put_*` are synchronous and never await, so coroutines on one event loop cannot
interleave; never call them from another thread (two locks on one directory from one process
would block each other). A killed run loses at most the cases still in flight.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from evolve_action import encoding
from evolve_action.errors import SpecError, display_path
from evolve_action.results._bytes import decode_canonical_json
from evolve_action.results._codec import (
    from_document,
    migrate_document,
    probe_schema,
    to_document,
    with_names,
)
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
    "LOCK_TIMEOUT_SECONDS",
    "OVERWRITE_FLAG",
    "EvalUnitRecord",
    "LoadedResults",
    "ResultsWriter",
    "TriggerUnitRecord",
    "check_writable",
    "discard_unusable",
    "load_results",
    "lock_results",
    "migrate_in_place",
    "results_path",
    "shape_problem",
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
    """Always None since issue 9 (nothing "starts fresh" any more); kept for callers."""
    migrated_from: int | None
    """3 or 4 when the file was migrated in memory."""


def results_path(results_dir: Path, fmt: encoding.Format) -> Path:
    """`<results_dir>/results.<fmt>`."""
    return results_dir / f"results.{fmt}"


def _names(results_dir: Path, plugin: str | None, skill: str | None) -> tuple[str, str]:
    sk = skill if skill is not None else results_dir.name
    pl = plugin if plugin is not None else results_dir.parent.parent.name
    return pl, sk


OVERWRITE_FLAG = "--overwrite-unreadable-results"
"""The run flag that lets `discard_unusable` remove a results file that cannot be used."""

_UNTOUCHED_HINT = (
    "fix the file, or re-run with " + OVERWRITE_FLAG + " to replace it (its stored results "
    "are lost); the file is left untouched"
)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 20 else value[:20] + "…"
        return f'a string ("{shown}")'
    if isinstance(value, list):
        return "an array"
    return "an object"


def shape_problem(doc: Any) -> str | None:
    """The first wrong field of a decoded results document, or None when its shape is usable.

    Checks the top level only (the codec checks every nested kind): an object with an integer
    `schema` of 3, 4 or 5 (newer schemas are reported by `load_results`), and no schema-5
    `models` field in a schema 3/4 document.
    """
    if not isinstance(doc, dict):
        return f"the top level is {_kind(doc)}, not an object"
    folded = {str(k).lower(): v for k, v in doc.items()}
    if "schema" not in folded:
        return "schema: missing"
    n = folded["schema"]
    if isinstance(n, bool) or not isinstance(n, int):
        return f"schema: expected an integer, found {_kind(n)}"
    if n < min(MIGRATABLE):
        return f"schema: {n} is too old to read (schemas 3 and 4 migrate, 5 is current)"
    if n in MIGRATABLE and folded.get("models") is not None:
        return f"models: a schema-{n} file has no models field (found {_kind(folded['models'])})"
    return None


def _check_not_directory(results_dir: Path) -> None:
    for ext in encoding.EXTENSIONS:
        candidate = results_dir / f"results.{ext}"
        if candidate.exists() and not candidate.is_file():
            what = "a directory" if candidate.is_dir() else "not a regular file"
            raise SpecError(
                f"the results path is {what}, not a results file",
                path=candidate,
                hint="move it out of the way and re-run",
            )


def load_results(
    results_dir: Path,
    *,
    plugin: str | None = None,
    skill: str | None = None,
    root: Path | None = None,
) -> LoadedResults:
    """Read the results file of an eval directory (report spec §1.6).

    `plugin`/`skill` overwrite the stored names (default: the directory names
    `<plugin>/evals/<skill>`). Schema 5 is decoded; 3 and 4 are migrated in memory. Anything
    else raises `SpecError` naming the file and the first wrong field, and the file must never
    be overwritten (see the module docstring): a newer schema, a file that does not parse, a
    document of the wrong shape (`shape_problem`), a value of the wrong kind, a `results.<ext>`
    directory. Returns an empty result when there is no results file. (`root` is kept for
    callers; `warning` is always None now that nothing "starts fresh".)
    """
    del root
    _check_not_directory(results_dir)
    path = encoding.find_results(results_dir)
    if path is None:
        return LoadedResults(None, None, None, None)
    pl, sk = _names(results_dir, plugin, skill)
    stamp = _stamp(path)
    cached = _CACHE.get((path, pl, sk))
    if (
        cached is not None
        and stamp is not None
        and cached.stamp == stamp
        and (cached.digest is None or cached.digest == _digest(path))
    ):
        return cached.loaded
    data = _stored(path, encoding.read_capped)
    loaded = _load(path, data, pl, sk)
    if stamp is not None:
        racy = time.time_ns() - stamp[-1] < _racy_window_ns(stamp)
        _CACHE[(path, pl, sk)] = _Cached(stamp, _content_digest(data) if racy else None, loaded)
    return loaded


_Stamp = tuple[int, int, int, int, int]


class _Cached(NamedTuple):
    stamp: _Stamp
    """The file's stamp when it was read."""
    digest: bytes | None
    """The content's digest, for a file changed too recently for its stamp to be trusted."""
    loaded: LoadedResults


_CACHE: dict[tuple[Path, str, str], _Cached] = {}
"""Every results file this process decoded, by path and the names it was loaded with: a file is
decoded once per version.

Planning (every tier), the report, the gate and the results writer all read results files
through `load_results`; in one `run all` the same file used to be decoded four times. Entries
are immutable (frozen structs; their maps are never mutated), so sharing one decoded value
is safe. The cache keeps what it decoded for the life of the process: about as much memory as
the report, which holds every file at once anyway, needs.
"""

_RACY_NS = 2_000_000_000
"""A file whose status changed less than this long before it was read is "racy" (git's word):
another write in the same clock tick could leave its stamp unchanged, so its content digest
is kept and compared too. Older files are trusted by their stamp alone. This is the window for
a file system that keeps whole seconds (FAT keeps even ones); see `_racy_window_ns`."""

_RACY_FINE_NS = 100_000_000
"""The racy window where the file system keeps sub-second times: those advance at least every
clock tick (at most 10 ms on Linux), so a write made 100 ms after the last one gets a new ctime."""


def _racy_window_ns(stamp: _Stamp) -> int:
    """How long after its last change a file's stamp cannot yet be trusted alone.

    A stamp whose times both fall on whole seconds comes from a file system that may keep only
    seconds (or two): the long window. Any sub-second part shows finer times: the short one
    (a fine-grained stamp lands on a whole second once in a billion: then the long window, which
    is only slower). A fresh checkout or copy read within two seconds is thus digested once, not
    on every read of the same file (three times in `run all`).
    """
    second = 1_000_000_000
    if stamp[3] % second == 0 and stamp[4] % second == 0:
        return _RACY_NS
    return _RACY_FINE_NS


def _stamp(path: Path) -> _Stamp | None:
    """What identifies one version of a file on disk: device, inode, size, mtime and ctime (ns).

    Taken *before* the file is read, so a change made while it is read gives the next call a
    new stamp. Every write of ours is an atomic rename (a new inode); another program's
    in-place rewrite changes the size or the times (and within the racy window the digest).
    """
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _digest(path: Path) -> bytes | None:
    try:
        return _content_digest(path.read_bytes())
    except OSError:
        return None


def _content_digest(data: bytes) -> bytes:
    """What tells two contents apart (not a security boundary: a guard against a rewrite in the
    same clock tick, so the quickest strong-enough hash)."""
    return hashlib.sha1(data, usedforsecurity=False).digest()


def forget_loaded() -> None:
    """Empty the per-process cache of decoded results files (`load_results`)."""
    _CACHE.clear()


def _load(path: Path, data: bytes, pl: str, sk: str) -> LoadedResults:
    """Decode `data`, the bytes of the results file at `path` (see `load_results`; never cached
    here; the cache's digest is of these very bytes).

    A canonical JSON file (what evolve and this tool write) is decoded straight from its bytes
    (`decode_canonical_json`); anything else, and every error, takes the general path.
    """
    if path.suffix.lower() == ".json":
        quick = decode_canonical_json(data)
        if quick is not None:
            return LoadedResults(with_names(quick, plugin=pl, skill=sk), path, None, None)
    doc = _stored(path, lambda p: encoding.decode_bytes(data, p, typed=True))
    n = probe_schema(doc)
    if n is not None and n > SCHEMA_VERSION:
        raise SpecError(
            f"results file is schema {n}, written by a newer evolve (this tool writes schema "
            f"{SCHEMA_VERSION}); upgrade evolve-action",
            path=path,
            hint="the file is left untouched",
        )
    problem = shape_problem(doc)
    if problem is not None:
        raise SpecError(
            f"not a schema-{SCHEMA_VERSION} results file: {problem}",
            path=path,
            hint=_UNTOUCHED_HINT,
        )
    try:
        if n == SCHEMA_VERSION:
            return LoadedResults(from_document(doc, plugin=pl, skill=sk), path, None, None)
        return LoadedResults(migrate_document(doc, plugin=pl, skill=sk), path, None, n)
    except ValueError as exc:
        raise SpecError(
            f"schema {n} results hold a value of the wrong kind: {exc}",
            path=path,
            hint=_UNTOUCHED_HINT,
        ) from None


def discard_unusable(
    results_dir: Path,
    *,
    on_wait: Callable[[str], None] | None = None,
) -> Path | None:
    """`--overwrite-unreadable-results`: delete the results file of `results_dir` if unusable.

    Returns the path removed, or None when there is no file or it is usable. A file of a newer
    schema is never removed (a newer tool can read it): its `SpecError` propagates. Holds the
    results lock, so a concurrent run's fresh write is never removed by mistake.
    """
    with lock_results(results_dir, on_wait=on_wait):
        path = encoding.find_results(results_dir)
        if path is None:
            return None
        try:
            load_results(results_dir)
        except SpecError:
            if _newer_schema(path):
                raise
            path.unlink()
            return path
    return None


def _newer_schema(path: Path) -> bool:
    try:
        n = probe_schema(encoding.decode_path(path))
    except SpecError:
        return False
    return n is not None and n > SCHEMA_VERSION


def check_writable(results_dir: Path, fmt: encoding.Format, *, root: Path | None = None) -> None:
    """Raise `SpecError` unless `results.<fmt>` in `results_dir` can be (re)written.

    Engines call it for every eval set they will write before the first agent session starts,
    so a read-only results file or directory stops the run with a clear message instead of
    failing after minutes of agent time. An existing read-only results file is refused rather
    than replaced (the atomic rename would otherwise overwrite it silently). A missing results
    directory is created (its definitions may live elsewhere, as in skill-creator's layout).
    """
    where = display_path(results_dir, root)
    if not os.path.lexists(results_dir):
        # skill-creator's layout keeps its definitions in the skill: its results directory
        # (`<plugin>/evals/<skill>/`) may not exist yet.
        with contextlib.suppress(OSError):
            encoding.ensure_dir(results_dir)
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


_V = TypeVar("_V")


def _stored(path: Path, step: Callable[[Path], _V]) -> _V:
    """`step(path)` (reading or decoding a stored results file), its `SpecError` reworded.

    A file that cannot be read or does not parse is an error, never "start fresh". Decoding is
    `typed` (see `encoding.decode_path`): `from_document`/`migrate_document` read the value
    through the typed model (fixed depth, every kept number checked), so the JSON decoder may
    skip its own walks.
    """
    try:
        return step(path)
    except SpecError as exc:
        marker = _conflict_marker_line(path) if _within_cap(path) else None
        raise SpecError(
            "stored results hold an unresolved git merge conflict"
            if marker
            else f"stored results do not parse: {exc.message}",
            path=exc.path or path,
            line=marker or exc.line,
            hint=(
                "fix the file (resolve any git merge conflict), or re-run with "
                f"{OVERWRITE_FLAG} to replace it (its stored results are lost); "
                "it is left untouched"
            ),
        ) from None


def _within_cap(path: Path) -> bool:
    try:
        return path.stat().st_size <= encoding.MAX_FILE_BYTES
    except OSError:
        return False


def _conflict_marker_line(path: Path) -> int | None:
    """The 1-based line of the first git conflict marker (`<<<<<<< `) in `path`, if any.

    Reads at most `encoding.MAX_FILE_BYTES` (a huge file is reported as too large by the
    decoder before this is called, but never read whole here either).
    """
    try:
        with path.open("rb") as f:
            data = f.read(encoding.MAX_FILE_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    for i, line in enumerate(text.splitlines(), start=1):
        if line.startswith(("<<<<<<<", "=======", ">>>>>>>")):
            return i
    return None


LOCK_TIMEOUT_SECONDS = 600.0
"""How long a writer waits for another run's lock before giving up with an error."""
_LOCK_POLL_SECONDS = 0.05


@contextlib.contextmanager
def lock_results(
    results_dir: Path,
    *,
    on_wait: Callable[[str], None] | None = None,
    timeout: float = LOCK_TIMEOUT_SECONDS,
) -> Iterator[None]:
    """Hold the advisory lock of the results file in `results_dir` (`flock` on the directory).

    The directory, not the file, is locked: the file is replaced by an atomic rename on every
    write (a lock on the old inode would protect nothing) and may change format, and no lock
    file is left in the user's repository. When another process holds the lock, `on_wait` gets
    "waiting for lock on <file> held by another evolve-action run" once, then the lock is
    polled; after `timeout` seconds a `SpecError` says so. Not re-entrant within one process.
    """
    try:
        fd = os.open(results_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError as exc:
        raise SpecError(
            f"cannot open results directory: {exc.strerror or exc}", path=results_dir
        ) from None
    try:
        deadline: float | None = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is None:
                    deadline = time.monotonic() + timeout
                    shown = encoding.find_results(results_dir) or results_dir / "results.*"
                    if on_wait is not None:
                        on_wait(
                            f"waiting for lock on {display_path(shown, Path.cwd())} "
                            "held by another evolve-action run"
                        )
                elif time.monotonic() >= deadline:
                    raise SpecError(
                        f"another evolve-action run held the results lock for over "
                        f"{timeout:.0f} seconds",
                        path=results_dir,
                        hint="wait for the other run to finish (or stop it) and re-run",
                    ) from None
                time.sleep(_LOCK_POLL_SECONDS)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def write_results(results_dir: Path, file: ResultsFile, fmt: encoding.Format) -> Path:
    """Write `file` atomically as `results.<fmt>` and delete other-format siblings; return the path.

    json = Go `MarshalIndent` + `\\n`; jsonc/yaml start with the
    `Maintained by evolve run; do not edit by hand.` comment line. Takes no lock: callers that
    read before writing hold `lock_results` (as `ResultsWriter` does).
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
    is already schema 5. Raises `SpecError` (from `load_results`) for a file it cannot use (no
    or an old schema, the wrong shape, unreadable, newer than 5); the file is then left
    untouched. Holds the results lock while it reads and rewrites.
    """
    if encoding.find_results(results_dir) is None:
        return None
    with lock_results(results_dir):  # a concurrent run may be writing this file
        loaded = load_results(results_dir, plugin=plugin, skill=skill)
        if loaded.file is None or loaded.migrated_from is None or loaded.path is None:
            return None
        write_results(results_dir, loaded.file, fmt)
        return loaded.migrated_from


# --------------------------------------------------------------------------------------------
# The write-after-each-unit path
# --------------------------------------------------------------------------------------------


_CONTINUE_HINT = (
    "results written before this point are on disk; fix the problem and re-run with --new "
    "to continue"
)


class ResultsWriter:
    """This run's entries of one results file plus the locked read-merge-write that stores them.

    One instance per results file, shared by every unit (model × tier) of this process that
    writes it. `put_*` record the entry as this writer's own, then under `lock_results` re-read
    the file on disk (another process may have written since), swap every entry this writer
    owns into it and rewrite it atomically; entries it does not own (other tiers, models, runs)
    are kept as found on disk. They never await, so coroutines on one event loop cannot
    interleave a read-merge-write. Never call them from worker threads.
    """

    def __init__(
        self,
        results_dir: Path,
        file: ResultsFile | None,
        fmt: encoding.Format,
        *,
        plugin: str = "",
        skill: str = "",
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        pl, sk = _names(results_dir, plugin or None, skill or None)
        self.results_dir = results_dir
        self.fmt: encoding.Format = fmt
        self._plugin, self._skill = pl, sk
        self._file = file if file is not None else ResultsFile(plugin=pl, skill=sk)
        self._mine: dict[str, tuple[TriggersEntry | None, EvalsEntry | None]] = {}
        self._on_wait = on_wait
        self.writes = 0
        """How many times the file was written (tests and progress use it)."""

    @property
    def file(self) -> ResultsFile:
        """The current in-memory file (what was last written, or loaded)."""
        return self._file

    def put_triggers(self, model_key: str, entry: TriggersEntry) -> Path:
        """Store `entry` as `model_key`'s triggers entry and rewrite the file (locked merge)."""
        _, ev = self._mine.get(model_key, (None, None))
        self._mine[model_key] = (entry, ev)
        return self._write()

    def put_evals(self, model_key: str, entry: EvalsEntry) -> Path:
        """Store `entry` as `model_key`'s evals entry and rewrite the file (locked merge)."""
        tr, _ = self._mine.get(model_key, (None, None))
        self._mine[model_key] = (tr, entry)
        return self._write()

    def replace_file(self, file: ResultsFile) -> Path:
        """Replace the whole file (e.g. after `drop_models`) and write it, under the lock.

        No merge: what is on disk is replaced by `file` plus this writer's own entries.
        """
        self._file = file
        return self._write(merge=False)

    def _merged(self, base: ResultsFile) -> ResultsFile:
        out = base
        for key, (tr, ev) in self._mine.items():
            out = with_entry(out, key, triggers=tr, evals=ev)
        return out

    def _write(self, *, merge: bool = True) -> Path:
        try:
            encoding.ensure_dir(self.results_dir)
            with lock_results(self.results_dir, on_wait=self._on_wait):
                base = self._file
                if merge:
                    # What is on disk now (another run may have written); when the file is
                    # gone, what this writer last wrote or loaded, so no stored row is lost.
                    on_disk = load_results(
                        self.results_dir, plugin=self._plugin, skill=self._skill
                    ).file
                    base = on_disk if on_disk is not None else self._file
                merged = self._merged(base)
                path = write_results(self.results_dir, merged, self.fmt)
        except OSError as exc:
            target = results_path(self.results_dir, self.fmt)
            raise SpecError(
                f"cannot write results: {exc.strerror or exc}",
                path=target,
                hint=_CONTINUE_HINT,
            ) from exc
        except SpecError as exc:  # what is on disk now cannot be used (it is left untouched)
            raise SpecError(
                f"cannot write results: {exc.message}",
                path=exc.path,
                line=exc.line,
                hint=f"{exc.hint}; {_CONTINUE_HINT}" if exc.hint else _CONTINUE_HINT,
            ) from None
        self._file = merged
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
