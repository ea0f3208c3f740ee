"""The quick decode of a canonical schema-5 results file straight from its JSON bytes.

Owns: `decode_canonical_json`, which parses the bytes with msgspec straight into the model's
structs (an entry through a struct with its header's fields inline, as the file writes them,
then split into `EntryHeader` and the entry).

Guarantees: it answers only when its answer is the one `_codec.from_document` gives for the
same file, and returns None otherwise, so the caller decodes the file the general way (which
also words every error). The structs refuse what only the general decoder handles or reports:
an unknown or non-canonical key (Go's case folding decides those), `null` where Go would keep
a zero value, a number of another kind or out of float64 range, a non-string eval id, a
byte-order mark, invalid UTF-8, a lone surrogate escape (msgspec refuses it), and any syntax
error (a duplicate key is no reason: both take the last value, as Go does). A JSON `-0` (which msgspec reads as `0.0`, the general path
as `-0.0` where a float is declared) sends the file to the general path before parsing. A
schema other than 5 goes there too (migration and the newer-schema error live there). Never does:
I/O, error reporting, encoding.

Why: a real results file after months of use holds about 1,700 objects; the report and the
gate read every file of the repository. Python's `json` plus the typed decode took about 10 ms
a file; this takes about 0.7 ms (`bench/sweep.py`).
"""

from __future__ import annotations

import typing
from typing import Any

import msgspec

from evolve_action import encoding
from evolve_action.results._model import (
    SCHEMA_VERSION,
    EntryHeader,
    EvalsEntry,
    ModelEntry,
    ResultsFile,
    TriggersEntry,
)

__all__ = ["decode_canonical_json"]


def _flat_entry(cls: type[msgspec.Struct]) -> Any:
    """A struct with the entry's own fields and its header's inline, as the file writes them."""
    fields: list[tuple[str, Any, Any]] = []
    for owner in (EntryHeader, cls):
        hints = typing.get_type_hints(owner)
        for f in msgspec.structs.fields(owner):
            if f.name == "header":
                continue
            default = (
                msgspec.field(default_factory=f.default_factory)
                if f.default_factory is not msgspec.NODEFAULT
                else f.default
            )
            fields.append((f.name, hints[f.name], default))
    return msgspec.defstruct(
        f"{cls.__name__}InFile", fields, kw_only=True, forbid_unknown_fields=True, gc=False
    )


_TriggersInFile = _flat_entry(TriggersEntry)
_EvalsInFile = _flat_entry(EvalsEntry)
_HEADER_FIELDS = tuple(f.name for f in msgspec.structs.fields(EntryHeader))


class _ModelInFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, gc=False):
    triggers: _TriggersInFile | None = None  # type: ignore[valid-type]
    evals: _EvalsInFile | None = None  # type: ignore[valid-type]


class _FileInFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, gc=False):
    schema: int  # required: a file without one is the general path's error
    plugin: str = ""
    skill: str = ""
    models: dict[str, _ModelInFile] = msgspec.field(default_factory=dict)


_DECODER = msgspec.json.Decoder(_FileInFile)


def _header(m: Any) -> EntryHeader:
    return EntryHeader(**{name: getattr(m, name) for name in _HEADER_FIELDS})


def _model_entry(m: _ModelInFile) -> ModelEntry:
    t: Any = m.triggers
    e: Any = m.evals
    return ModelEntry(
        triggers=None
        if t is None
        else TriggersEntry(
            header=_header(t), results=t.results, summary=t.summary, previous=t.previous
        ),
        evals=None
        if e is None
        else EvalsEntry(
            header=_header(e),
            results=e.results,
            summary=e.summary,
            baseline=e.baseline,
            previous=e.previous,
        ),
    )


def decode_canonical_json(data: bytes) -> ResultsFile | None:
    """The `ResultsFile` in the JSON `data`, or None when only the general decoder may decide.

    When it answers, the answer equals `from_document` of the same bytes decoded the general
    way (see the module docstring for what makes it decline).
    """
    if encoding.may_hold_negative_zero(data):
        return None
    try:
        found = _DECODER.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    if found.schema != SCHEMA_VERSION:
        return None
    return ResultsFile(
        schema=found.schema,
        plugin=found.plugin,
        skill=found.skill,
        models={key: _model_entry(m) for key, m in found.models.items()},
    )
