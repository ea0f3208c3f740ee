"""The quick decode of a canonical schema-5 results file straight from its JSON bytes.

Owns: `decode_canonical_json`, which parses the bytes with msgspec into mirror structs (one per
model dataclass, with the entry header's fields inline as in the file), then builds the model's
frozen dataclasses from them through a converter generated per dataclass.

Guarantees: it answers only when its answer is the one `_codec.from_document` gives for the
same file, and returns None otherwise, so the caller decodes the file the general way (which
also words every error). The mirrors refuse what only the general decoder handles or reports:
an unknown or non-canonical key (Go's case folding decides those), `null` where Go would keep
a zero value, a number of another kind or out of float64 range, a non-string eval id, a
byte-order mark, invalid UTF-8, a lone surrogate escape (msgspec refuses it), and any syntax
error (a duplicate key is no reason: both take the last value, as Go does). A JSON `-0` (which msgspec reads as `0.0`, the general path
as `-0.0` where a float is declared) sends the file to the general path before parsing. A
schema other than 5 goes there too (migration and the newer-schema error live there). Never does:
I/O, error reporting, encoding.

Why: a real results file after months of use holds about 1,700 objects; the report and the
gate read every file of the repository. Python's `json` plus the typed decode took about 10 ms
a file; this takes about 2 ms (`bench/sweep.py`).
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from evolve_action.results._model import (
    SCHEMA_VERSION,
    EntryHeader,
    EvalsEntry,
    ResultsFile,
    TriggersEntry,
)

__all__ = ["decode_canonical_json"]

_ENTRIES = (TriggersEntry, EvalsEntry)
"""The entry dataclasses whose `header` field is written inline in the entry object."""

_MINUS_ZERO = re.compile(rb"-0(?![0-9.eE])")


def _has_negative_zero(data: bytes) -> bool:
    """Whether `data` may hold the JSON number `-0`: a hit counts when the nearest non-blank
    byte before it could precede a value (so `tools-0` inside a string rarely does)."""
    for m in _MINUS_ZERO.finditer(data):
        j = m.start() - 1
        while j >= 0 and data[j] in b" \t\r\n":
            j -= 1
        if j < 0 or data[j] in b":[,":
            return True
    return False


_MIRRORS: dict[type, Any] = {}
_CONVERTERS: dict[type, Callable[[Any], Any]] = {}


def _default(f: dataclasses.Field[Any], hint: Any) -> Any:
    """The mirror field's default: the dataclass's, with nested dataclasses as their mirrors."""
    if f.default is not dataclasses.MISSING:
        return f.default
    factory = f.default_factory
    if dataclasses.is_dataclass(hint):
        return msgspec.field(default_factory=_mirror(typing.cast(type, hint)))
    assert factory is not dataclasses.MISSING, f"{f.name} has no default"
    return msgspec.field(default_factory=factory)


def _mirror_type(hint: Any) -> Any:
    """The mirror of a field type: dataclasses become their mirrors, everything else stays."""
    if dataclasses.is_dataclass(hint):
        return _mirror(typing.cast(type, hint))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is types.UnionType:
        return typing.Union[tuple(_mirror_type(a) for a in args)]  # noqa: UP007 - built at run time
    if origin is tuple:
        return types.GenericAlias(tuple, (_mirror_type(args[0]), ...))
    if origin is dict:
        return types.GenericAlias(dict, (args[0], _mirror_type(args[1])))
    return hint


def _mirror(cls: type) -> Any:
    """The msgspec struct with `cls`'s JSON fields (an entry's header fields inline)."""
    cached = _MIRRORS.get(cls)
    if cached is not None:
        return cached
    fields: list[tuple[str, Any, Any]] = []
    owners = [EntryHeader, cls] if cls in _ENTRIES else [cls]
    for owner in owners:
        hints = typing.get_type_hints(owner)
        for f in dataclasses.fields(owner):
            if f.name == "header" and owner in _ENTRIES:
                continue
            hint = hints[f.name]
            default: Any = (
                msgspec.NODEFAULT
                if owner is ResultsFile and f.name == "schema"
                else _default(f, hint)
            )
            fields.append((f.name, _mirror_type(hint), default))
    mirror = msgspec.defstruct(
        f"{cls.__name__}Mirror", fields, kw_only=True, forbid_unknown_fields=True, gc=False
    )
    _MIRRORS[cls] = mirror
    return mirror


def _converter(cls: type) -> Callable[[Any], Any]:
    """A generated function building a `cls` from its mirror, without `__init__`.

    Frozen slotted dataclasses set each field through `object.__setattr__` in `__init__`; the
    converter stores each slot through its member descriptor directly (about 2.5x faster), which
    gives the same object: every field is set, and the model has no `__post_init__`.
    """
    cached = _CONVERTERS.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls)
    ns: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body: list[str] = ["o = _new(_cls)"]
    for i, f in enumerate(dataclasses.fields(cls)):
        ns[f"_s{i}"] = cls.__dict__[f.name].__set__
        hint = hints[f.name]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if f.name == "header" and cls in _ENTRIES:
            ns[f"_f{i}"] = _converter(EntryHeader)
            value = f"_f{i}(m)"
        elif dataclasses.is_dataclass(hint):
            ns[f"_f{i}"] = _converter(typing.cast(type, hint))
            value = f"_f{i}(m.{f.name})"
        elif origin is types.UnionType and dataclasses.is_dataclass(args[0]):
            ns[f"_f{i}"] = _converter(typing.cast(type, args[0]))
            value = f"None if (v := m.{f.name}) is None else _f{i}(v)"
        elif origin is tuple and dataclasses.is_dataclass(args[0]):
            ns[f"_f{i}"] = _converter(typing.cast(type, args[0]))
            value = f"tuple([_f{i}(x) for x in m.{f.name}])"
        elif origin is dict and dataclasses.is_dataclass(args[1]):
            ns[f"_f{i}"] = _converter(typing.cast(type, args[1]))
            value = f"{{k: _f{i}(x) for k, x in m.{f.name}.items()}}"
        else:  # a value, a tuple of strings or a map of integers: msgspec built it already
            value = f"m.{f.name}"
        body.append(f"_s{i}(o, {value})")
    src = "def convert(m):\n" + "".join(f"    {line}\n" for line in [*body, "return o"])
    exec(src, ns)  # our own source, generated from the model's field types
    convert: Callable[[Any], Any] = ns["convert"]
    _CONVERTERS[cls] = convert
    return convert


_DECODER = msgspec.json.Decoder(_mirror(ResultsFile))
_CONVERT_FILE = _converter(ResultsFile)


def decode_canonical_json(data: bytes) -> ResultsFile | None:
    """The `ResultsFile` in the JSON `data`, or None when only the general decoder may decide.

    When it answers, the answer equals `from_document` of the same bytes decoded the general
    way (see the module docstring for what makes it decline).
    """
    if b"-0" in data and _has_negative_zero(data):
        return None
    try:
        mirror = _DECODER.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    if mirror.schema != SCHEMA_VERSION:
        return None
    file: ResultsFile = _CONVERT_FILE(mirror)
    return file
