"""Fingerprints: the hashes that decide which stored results are still current.

Owns: trigger `content_hash` (SKILL.md frontmatter, engine spec §6.1), eval `content_hash` (whole
skill directory walk, §6.2), trigger `spec_hash` (§6.3), the normalized eval spec JSON (§6.4),
`eval_fingerprint` (stored as eval `spec_hash` and baseline `fingerprint`, §6.5) and the
"modified" predicate (§6.7). `go_compact_json` (Go `json.Marshal`) is `encode.encode_json_compact`,
used here for the hashing callers.

Guarantees: every hash is lowercase hex SHA-256, byte-for-byte the value evolve computes for the same
inputs (the §6.6 vectors are unit tests), so `--modified` agrees with evolve on results it wrote.
Pure apart from reading the files being hashed. Never does: writing, printing, starting processes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evolve_action.encoding import encode_json_compact as go_compact_json
from evolve_action.encoding import trim_space
from evolve_action.errors import SpecError

if TYPE_CHECKING:
    from evolve_action.specs import EvalCase, SuiteCase

__all__ = [
    "NO_FRONTMATTER",
    "eval_content_hash",
    "eval_fingerprint",
    "eval_spec_hash",
    "eval_spec_json",
    "eval_spec_object",
    "is_modified",
    "skill_content_hash",
    "suite_fingerprint",
    "trigger_content_hash",
    "trigger_spec_hash",
]

NO_FRONTMATTER = b"\x00evolve:no-frontmatter\x00"
"""What the trigger `content_hash` hashes when SKILL.md has no terminated frontmatter block."""

_FIXTURE_ERROR = b"\x00evolve:fixture-error:"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _split_lines_bytes(data: bytes) -> list[bytes]:
    """Go `SplitLines` on bytes (`\\r\\n`/`\\r` → `\\n`, one trailing `\\n` dropped)."""
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if data.endswith(b"\n"):
        data = data[:-1]
    if not data:
        return []
    return data.split(b"\n")


def _is_fence(line: bytes) -> bool:
    return trim_space(line.decode("utf-8", "surrogateescape")) == "---"


def trigger_content_hash(skill_md: bytes) -> str:
    """§6.1: sha256 of the SKILL.md frontmatter block (lines between the `---` fences, LF-joined).

    No or unterminated frontmatter hashes the sentinel `NO_FRONTMATTER`; body edits never change it.
    """
    lines = _split_lines_bytes(skill_md)
    if lines and _is_fence(lines[0]):
        for k in range(1, len(lines)):
            if _is_fence(lines[k]):
                return _sha(b"\n".join(lines[1:k]))
    return _sha(NO_FRONTMATTER)


def skill_content_hash(skill_md_path: Path) -> str:
    """`trigger_content_hash` of the file at `skill_md_path`; `SpecError` if it cannot be read."""
    try:
        data = Path(skill_md_path).read_bytes()
    except OSError as exc:
        raise SpecError(
            f"fingerprinting skill: {_go_os_error('open', skill_md_path, exc)}",
            path=skill_md_path,
            hint="every evals/<skill>/ needs a matching skills/<skill>/SKILL.md",
        ) from None
    return trigger_content_hash(data)


def _go_os_error(op: str, path: Path | str, exc: OSError) -> str:
    """Go `*PathError` text: `<op> <path>: <lower-case errno text>`."""
    if exc.errno is not None:
        text = os.strerror(exc.errno)
        text = text[:1].lower() + text[1:]
    else:
        text = str(exc)
    return f"{op} {os.fsdecode(path)}: {text}"


def _walk(skill_dir: str, skip: tuple[str, ...] = ()) -> list[tuple[bytes, str]]:
    """`(rel path bytes, absolute path)` of every hashed file (§6.2 rules), unsorted."""
    out: list[tuple[bytes, str]] = []
    st = os.lstat(skill_dir)
    if not stat.S_ISDIR(st.st_mode):  # Go's WalkDir does not follow a symlinked root
        return out
    stack = [("", skill_dir)]
    while stack:
        rel_dir, abs_dir = stack.pop()
        with os.scandir(abs_dir) as it:
            entries = list(it)
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if entry.is_dir(follow_symlinks=False):
                if not name.startswith("."):
                    stack.append((rel, entry.path))
                continue
            if name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            if skip and rel.startswith(skip):
                continue
            out.append((os.fsencode(rel), entry.path))
    return out


def eval_content_hash(skill_dir: Path, *, skip: tuple[str, ...] = ()) -> str:
    """§6.2: sha256 over every regular, non-hidden file below `skill_dir` (`rel NUL bytes NUL`).

    `skip`: prefixes of `/`-separated relative paths left out: the files this tool writes when
    the skill directory is a repository's or plugin's root (`EvalSet.content_skips`); empty, the
    hash is evolve's.

    Hidden directories are skipped whole, symlinks and other non-regular entries are ignored, paths
    are `/`-separated and sorted bytewise. Walk or read errors raise `SpecError`.
    """
    root = os.fspath(skill_dir)
    h = hashlib.sha256()
    try:
        files = sorted(_walk(root, skip))
    except OSError as exc:
        raise SpecError(
            f"fingerprinting skill under test: {_go_os_error('lstat', exc.filename or root, exc)}",
            path=skill_dir,
        ) from None
    for rel, abs_path in files:
        try:
            with open(abs_path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise SpecError(
                f"fingerprinting skill under test: {_go_os_error('open', abs_path, exc)}",
                path=abs_path,
            ) from None
        h.update(rel)
        h.update(b"\0")
        h.update(data)
        h.update(b"\0")
    return h.hexdigest()


def trigger_spec_hash(query: str, should_trigger: bool) -> str:
    """§6.3: sha256 of Go JSON `{"query":…,"should_trigger":…}`."""
    payload = go_compact_json({"query": query, "should_trigger": bool(should_trigger)})
    return _sha(payload.encode("utf-8", "surrogatepass"))


def eval_spec_object(case: EvalCase) -> dict[str, Any]:
    """§6.4: the normalized eval as the ordered JSON object evolve hashes (omission rules applied)."""
    obj: dict[str, Any] = {"id": case.id}
    if case.name:
        obj["name"] = case.name
    obj["prompt"] = case.prompt
    if case.expected_output:
        obj["expected_output"] = case.expected_output
    if case.files:
        obj["files"] = list(case.files)
    if case.expectations:
        obj["expectations"] = list(case.expectations)
    if case.assertions:
        obj["assertions"] = [a.spec_object() for a in case.assertions]
    if case.max_turns:
        obj["max_turns"] = case.max_turns
    if case.timeout_seconds:
        obj["timeout_seconds"] = case.timeout_seconds
    return obj


def eval_spec_json(case: EvalCase) -> bytes:
    """§6.4: `go_compact_json(eval_spec_object(case))` as UTF-8 bytes."""
    return go_compact_json(eval_spec_object(case)).encode("utf-8", "surrogatepass")


def eval_spec_hash(case: EvalCase) -> str:
    """sha256 hex of `eval_spec_json(case)` (an intermediate; the stored value is `eval_fingerprint`)."""
    return _sha(eval_spec_json(case))


def _read_fixture(source: Path) -> bytes:
    """The fixture's bytes, or evolve's error marker with Go's error text when unreadable."""
    src = os.fspath(source)
    try:
        fd = os.open(src, os.O_RDONLY)
    except OSError as exc:
        return (
            _FIXTURE_ERROR
            + _go_os_error("open", src, exc).encode("utf-8", "surrogateescape")
            + b"\0"
        )
    try:
        with os.fdopen(fd, "rb") as fh:
            return fh.read()
    except OSError as exc:
        return (
            _FIXTURE_ERROR
            + _go_os_error("read", src, exc).encode("utf-8", "surrogateescape")
            + b"\0"
        )


def eval_fingerprint(case: EvalCase) -> str:
    """§6.5: hash of the eval spec hash plus every fixture (`dest NUL bytes NUL`, sorted by dest).

    Stored as the eval result `spec_hash` and the baseline `fingerprint`. A fixture that cannot be
    read contributes `\\x00evolve:fixture-error:<Go error text>\\x00` (e.g. `open /abs/x: no such
    file or directory`), exactly as evolve does; it never raises. A suite case hashes with
    `suite_fingerprint` instead.
    """
    if case.suite is not None:
        return suite_fingerprint(case.suite)
    h = hashlib.sha256()
    h.update(eval_spec_hash(case).encode("ascii"))
    h.update(b"\0")
    for ref in sorted(case.fixtures, key=lambda r: r.dest.encode("utf-8", "surrogateescape")):
        h.update(ref.dest.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
        h.update(_read_fixture(ref.source))
        h.update(b"\0")
    return h.hexdigest()


SUITE_DOMAIN = b"evolve-action:suite-case:1\x00"
"""Domain tag of a suite case's fingerprint (never equal to an evolve-format eval's)."""


def suite_fingerprint(case: SuiteCase) -> str:
    """A suite case's fingerprint: the case with its suite defaults and rendered prompt (compact
    JSON), then every file it references (`rel NUL bytes NUL`, sorted by path) — input files,
    judge scripts and prompt templates, so editing any of them makes the case `modified`."""
    h = hashlib.sha256()
    h.update(SUITE_DOMAIN)
    h.update(go_compact_json(dict(case.spec)).encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    for rel, source in sorted(case.refs, key=lambda r: r[0].encode("utf-8", "surrogateescape")):
        h.update(rel.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
        h.update(_read_fixture(source))
        h.update(b"\0")
    return h.hexdigest()


def is_modified(stored_spec: str, stored_content: str, fresh_spec: str, fresh_content: str) -> bool:
    """§6.7: `stored_spec != ""` and (spec differs, or both content hashes known and different).

    Empty stored hashes (legacy results) never count as modified.
    """
    if not stored_spec:
        return False
    return stored_spec != fresh_spec or (stored_content != "" and stored_content != fresh_content)
