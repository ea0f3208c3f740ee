"""The schema-5 results codec: Go `encoding/json` decoding and evolve's exact encoding.

Owns: `from_document` (decode with Go's rules: exact-then-case-insensitive keys, strict kinds,
null → zero value, unknown keys dropped), `probe_schema`, `migrate_document` (schemas 3 and 4 →
5 in memory, report spec §2), `to_document` (evolve's field order and the A/P/Z emission rules of
report spec §1.1) and the `Estimate`/`Measured` object encoders that the rollup reuses
(`estimate_json`, `measured_json`). One decoder and one encoder serve every model struct:
both walk its fields in declaration order, the decoder by field type, the encoder by the
`_model.ALWAYS` mark or else the type (pointer / nested object / omitempty value). For the
files evolve and this tool write (every key canonical) a decoder generated per struct reads
the fields directly; anything else takes the general path, so the two never disagree.

Guarantees: `to_document(from_document(doc))` re-encodes every file evolve 0.7.0 wrote
byte-identically through `encoding.encode_json` (int vs float kinds kept). A value of the wrong
JSON kind raises `ValueError` naming where. Never does: I/O (see `results.load_results`), merging
(see `_merge`).
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from evolve_action.results._model import (
    ALWAYS,
    SCHEMA_VERSION,
    EntryHeader,
    Estimate,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    EvalSummary,
    GradeSummary,
    Measured,
    ModelEntry,
    ResultsFile,
    Timing,
    TriggerResult,
    TriggersEntry,
    TriggerSnapshot,
    TriggerSummary,
)

__all__ = [
    "estimate_json",
    "from_document",
    "measured_json",
    "migrate_document",
    "probe_schema",
    "to_document",
    "with_names",
]


# --------------------------------------------------------------------------------------------
# Decoding (Go encoding/json rules: exact-then-case-insensitive keys, strict kinds, null → zero)
# --------------------------------------------------------------------------------------------


def _is_model(hint: Any) -> bool:
    """Whether a field type is a model value (a nested object), not a scalar or container."""
    return isinstance(hint, type) and issubclass(hint, msgspec.Struct)


class _Malformed(Exception):
    """A value of the wrong JSON kind somewhere in the document (Go fails the whole decode)."""


_T = TypeVar("_T")


class _Obj:
    """A JSON object viewed like Go's struct decoder sees it."""

    __slots__ = ("_folded", "_where")

    def __init__(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _Malformed(f"{where}: expected an object")
        # Later keys win, and a key matches a field exactly or case-insensitively (Go's rule;
        # our field names are lower-case and distinct, so folding alone decides the field).
        self._folded: dict[str, Any] = {}
        for k, v in value.items():
            self._folded[str(k).lower()] = v
        self._where = where

    def raw(self, key: str) -> Any:
        return self._folded.get(key)

    def str_(self, key: str) -> str:
        v = self._folded.get(key)
        if v is None:
            return ""
        if not isinstance(v, str):
            raise _Malformed(f"{self._where}.{key}: expected a string")
        return v

    def bool_(self, key: str) -> bool:
        v = self.opt_bool(key)
        return bool(v)

    def opt_bool(self, key: str) -> bool | None:
        v = self._folded.get(key)
        if v is None:
            return None
        if not isinstance(v, bool):
            raise _Malformed(f"{self._where}.{key}: expected a boolean")
        return v

    def int_(self, key: str) -> int:
        v = self.opt_int(key)
        return 0 if v is None else v

    def opt_int(self, key: str) -> int | None:
        v = self._folded.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Malformed(f"{self._where}.{key}: expected an integer")
        return v

    def opt_float(self, key: str) -> float | None:
        v = self._folded.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise _Malformed(f"{self._where}.{key}: expected a number")
        try:
            if -math.inf < v < math.inf:  # `encoding.decode_path(typed=True)` leaves it to us
                return float(v)
        except OverflowError:  # an integer too large for a float64
            pass
        raise _Malformed(f"{self._where}.{key}: number out of range")

    def opt_obj(self, key: str, build: Callable[[_Obj], _T]) -> _T | None:
        v = self._folded.get(key)
        if v is None:
            return None
        return build(_Obj(v, f"{self._where}.{key}"))

    def obj(self, key: str, build: Callable[[_Obj], _T]) -> _T:
        v = self._folded.get(key)
        return build(_Obj({} if v is None else v, f"{self._where}.{key}"))

    def list_(self, key: str, build: Callable[[_Obj], _T]) -> tuple[_T, ...]:
        v = self._folded.get(key)
        if v is None:
            return ()
        if not isinstance(v, list):
            raise _Malformed(f"{self._where}.{key}: expected an array")
        out: list[_T] = []
        for i, item in enumerate(v):
            # A null element of a []struct decodes to the zero struct.
            out.append(build(_Obj({} if item is None else item, f"{self._where}.{key}[{i}]")))
        return tuple(out)

    def str_list(self, key: str) -> tuple[str, ...]:
        v = self._folded.get(key)
        if v is None:
            return ()
        if not isinstance(v, list) or not all(isinstance(x, str) or x is None for x in v):
            raise _Malformed(f"{self._where}.{key}: expected an array of strings")
        return tuple("" if x is None else x for x in v)

    def int_map(self, key: str) -> dict[str, int]:
        v = self._folded.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise _Malformed(f"{self._where}.{key}: expected an object")
        out: dict[str, int] = {}
        for k, n in v.items():
            if n is None:
                n = 0
            if isinstance(n, bool) or not isinstance(n, int):
                raise _Malformed(f"{self._where}.{key}.{k}: expected an integer")
            out[str(k)] = n
        return out

    def obj_map(self, key: str, build: Callable[[_Obj], _T]) -> dict[str, _T]:
        v = self._folded.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise _Malformed(f"{self._where}.{key}: expected an object")
        return {
            str(k): build(_Obj({} if x is None else x, f"{self._where}.{key}.{k}"))
            for k, x in v.items()
        }


# Every results struct decodes field by field, in declaration order, by the field's type:
# `str`/`bool`/`int` are value fields (null → zero), `X | None` pointer fields, a nested struct
# an object (null → zero struct), `tuple[X, ...]` an array, `dict[str, X]` a map. Two fields are
# not plain: an entry's `header` is inlined in the entry object, and an eval result's `id` also
# accepts an integer (as evolve's spec loader would).
_Field = Callable[[_Obj, str], Any]
_DECODERS: dict[type, Callable[[_Obj], Any]] = {}
_VALUE_FIELDS: dict[Any, _Field] = {
    str: _Obj.str_,
    bool: _Obj.bool_,
    int: _Obj.int_,
    int | None: _Obj.opt_int,
    float | None: _Obj.opt_float,
    bool | None: _Obj.opt_bool,
    tuple[str, ...]: _Obj.str_list,
    dict[str, int]: _Obj.int_map,
}


def _field_reader(hint: Any) -> _Field:
    if hint in _VALUE_FIELDS:
        return _VALUE_FIELDS[hint]
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if _is_model(hint):
        build: Callable[[_Obj], Any] = _decoder(typing.cast(type, hint))
        return lambda o, key: o.obj(key, build)
    if origin is types.UnionType and len(args) == 2 and args[1] is type(None):
        build = _decoder(args[0])
        return lambda o, key: o.opt_obj(key, build)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        build = _decoder(args[0])
        return lambda o, key: o.list_(key, build)
    if origin is dict and args[0] is str:
        build = _decoder(args[1])
        return lambda o, key: o.obj_map(key, build)
    raise TypeError(f"no results decoder for {hint!r}")  # pragma: no cover - a model change


def _eval_id(o: _Obj, key: str) -> str:
    v = o.raw(key)
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return o.str_(key)


def _inline_header(o: _Obj, _key: str) -> EntryHeader:
    return _decoder(EntryHeader)(o)


def _decoder(cls: type[_T]) -> Callable[[_Obj], _T]:
    """The decoder of one results struct (built once from its field types, then cached)."""
    cached = _DECODERS.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls)
    readers: list[tuple[str, _Field]] = []
    for f in msgspec.structs.fields(cls):  # type: ignore[arg-type]
        if f.name == "header":
            readers.append((f.name, _inline_header))
        elif cls is EvalResult and f.name == "id":
            readers.append((f.name, _eval_id))
        else:
            readers.append((f.name, _field_reader(hints[f.name])))

    def decode(o: _Obj) -> _T:
        return cls(**{name: read(o, name) for name, read in readers})

    _DECODERS[cls] = decode
    return decode


# The fast decoder. Evolve and this tool write every key in its canonical lower-case form and no
# others, so for the files they write Go's folding changes nothing: a generated function per
# struct reads its fields straight from the dict, with no wrapper per object and no key
# folding. Anything else — a key that is not a field name in canonical form (so folding or
# dropping decides), a value of another kind, a non-dict object — raises `_Slow`, and
# `from_document` decodes the whole document again through `_Obj` above, which gives the
# general answer or the exact error. So both paths give the same result for every input; the
# fast one is only quicker (about 4x on real files).


class _Slow(Exception):
    """The fast decoder met something only `_Obj`'s decoder handles (or reports)."""


_FAST: dict[tuple[type, bool], Callable[[Any], Any]] = {}


def _str_tuple(v: list[Any]) -> tuple[str, ...]:
    if not all(x.__class__ is str or x is None for x in v):
        raise _Slow
    return tuple("" if x is None else x for x in v)


def _int_map(v: dict[Any, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, n in v.items():
        if n is None:
            n = 0
        elif n.__class__ is not int:
            raise _Slow
        out[str(k)] = n
    return out


_FAST_VALUES: dict[Any, str] = {
    str: "if v is None: {a} = ''\nelif v.__class__ is str: {a} = v\nelse: raise _Slow",
    bool: "if v is None: {a} = False\nelif v is True or v is False: {a} = v\nelse: raise _Slow",
    int: "if v is None: {a} = 0\nelif v.__class__ is int: {a} = v\nelse: raise _Slow",
    int | None: "if v is None or v.__class__ is int: {a} = v\nelse: raise _Slow",
    float | None: (
        "if v is None: {a} = None\n"
        "elif v.__class__ is float and -_INF < v < _INF: {a} = v\n"
        "elif v.__class__ is int and -_INF < v < _INF: {a} = float(v)\nelse: raise _Slow"
    ),
    bool | None: "if v is None or v is True or v is False: {a} = v\nelse: raise _Slow",
    tuple[str, ...]: (
        "if v is None: {a} = ()\nelif v.__class__ is list: {a} = _str_tuple(v)\nelse: raise _Slow"
    ),
    dict[str, int]: (
        "if v is None: {a} = {{}}\nelif v.__class__ is dict: {a} = _int_map(v)\nelse: raise _Slow"
    ),
}


def _fast(cls: type[_T], *, inline: bool = False) -> Callable[[Any], _T]:
    """The generated fast decoder of `cls` (`inline`: an entry header read from its entry dict)."""
    cached = _FAST.get((cls, inline))
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls)
    ns: dict[str, Any] = {
        "_Slow": _Slow,
        "_INF": math.inf,
        "_str_tuple": _str_tuple,
        "_int_map": _int_map,
    }
    body: list[str] = []
    keys: set[str] = set()
    call: list[str] = []
    for i, f in enumerate(msgspec.structs.fields(cls)):  # type: ignore[arg-type]
        a = f"a{i}"
        call.append(f"{f.name}={a}")
        hint = hints[f.name]
        if f.name == "header":
            ns["_header"] = _fast(EntryHeader, inline=True)
            keys.update(h.name for h in msgspec.structs.fields(EntryHeader))
            body.append(f"{a} = _header(d)")
            continue
        keys.add(f.name)
        body.append(f"v = g({f.name!r})")
        args, origin = typing.get_args(hint), typing.get_origin(hint)
        if cls is EvalResult and f.name == "id":
            code = (
                "if v is None: {a} = ''\nelif v.__class__ is str: {a} = v\n"
                "elif v.__class__ is int: {a} = str(v)\nelse: raise _Slow"
            )
        elif hint in _FAST_VALUES:
            code = _FAST_VALUES[hint]
        elif _is_model(hint):
            ns[f"_f{i}"] = _fast(typing.cast(type, hint))
            code = "{a} = {f}({{}} if v is None else v)"
        elif origin is types.UnionType and len(args) == 2 and args[1] is type(None):
            ns[f"_f{i}"] = _fast(args[0])
            code = "{a} = None if v is None else {f}(v)"
        elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            ns[f"_f{i}"] = _fast(args[0])
            code = (
                "if v is None: {a} = ()\nelif v.__class__ is list: "
                "{a} = tuple([{f}({{}} if x is None else x) for x in v])\nelse: raise _Slow"
            )
        elif origin is dict and args[0] is str:
            ns[f"_f{i}"] = _fast(args[1])
            code = (
                "if v is None: {a} = {{}}\nelif v.__class__ is dict: "
                "{a} = {{str(k): {f}({{}} if x is None else x) for k, x in v.items()}}\n"
                "else: raise _Slow"
            )
        else:  # pragma: no cover - a model change
            raise TypeError(f"no fast results decoder for {hint!r}")
        body.extend(code.format(a=a, f=f"_f{i}").splitlines())
    ns["_cls"] = cls
    ns["_keys"] = frozenset(keys)
    check = (
        ""
        if inline
        else ("    if d.__class__ is not dict or not d.keys() <= _keys:\n        raise _Slow\n")
    )
    src = (
        "def decode(d):\n"
        + check
        + "    g = d.get\n"
        + "".join(f"    {line}\n" for line in body)
        + f"    return _cls({', '.join(call)})\n"
    )
    exec(src, ns)  # our own source, generated from the model's field types
    fast: Callable[[Any], _T] = ns["decode"]
    _FAST[(cls, inline)] = fast
    return fast


_d_header = _decoder(EntryHeader)
_d_estimate = _decoder(Estimate)
_d_measured = _decoder(Measured)
_d_trigger_result = _decoder(TriggerResult)
_d_trigger_summary = _decoder(TriggerSummary)
_d_eval_result = _decoder(EvalResult)
_d_eval_summary = _decoder(EvalSummary)
_d_results_file = _decoder(ResultsFile)
_fast_results_file = _fast(ResultsFile)


def probe_schema(doc: Any) -> int | None:
    """The integer `schema` of a decoded document, or None when absent or not an integer."""
    if not isinstance(doc, dict):
        return None
    folded = {str(k).lower(): v for k, v in doc.items()}
    v = folded.get("schema")
    if isinstance(v, bool) or not isinstance(v, int):
        return None
    return v


def from_document(doc: Any, *, plugin: str = "", skill: str = "") -> ResultsFile:
    """Decode a schema-5 document (a plain JSON data model) into a `ResultsFile`.

    `plugin`/`skill`, when given, overwrite the stored values (evolve takes them from the
    directory names). Raises `ValueError` when a value has the wrong JSON kind (Go fails the
    whole decode; `load_results` turns that into a `SpecError` and leaves the file untouched).
    """
    try:
        file = _fast_results_file(doc)
    except (_Slow, OverflowError):
        try:
            file = _d_results_file(_Obj(doc, "results"))
        except _Malformed as exc:
            raise ValueError(str(exc)) from exc
    return with_names(file, plugin=plugin, skill=skill)


def with_names(file: ResultsFile, *, plugin: str = "", skill: str = "") -> ResultsFile:
    """`file` with its stored `plugin`/`skill` overwritten by the given non-empty names."""
    if plugin and file.plugin != plugin:
        file = msgspec.structs.replace(file, plugin=plugin)
    if skill and file.skill != skill:
        file = msgspec.structs.replace(file, skill=skill)
    return file


# --------------------------------------------------------------------------------------------
# Encoding: field order + A (always) / P (pointer: omit when None) / Z (omit when zero) rules
# --------------------------------------------------------------------------------------------


_POINTER, _OMITEMPTY, _ALWAYS, _INLINE = "pointer", "omitempty", "always", "inline"
_ENCODE_PLANS: dict[type, list[tuple[str, str]]] = {}


def _encode_plan(cls: type) -> list[tuple[str, str]]:
    """(field, rule) in field order: `_model.ALWAYS` marks, else the rule of the type."""
    plan = _ENCODE_PLANS.get(cls)
    if plan is None:
        hints = typing.get_type_hints(cls)
        plan = []
        for f in msgspec.structs.fields(cls):
            hint = hints[f.name]
            if f.name == "header":
                rule = _INLINE
            elif f.name in ALWAYS.get(cls, ()) or _is_model(hint):
                rule = _ALWAYS
            elif typing.get_origin(hint) is types.UnionType:
                rule = _POINTER
            else:
                rule = _OMITEMPTY
            plan.append((f.name, rule))
        _ENCODE_PLANS[cls] = plan
    return plan


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Types whose values are their own JSON data model (`_encode` returns them as they are)."""


def _encode(value: Any) -> Any:
    """The JSON data model of a results value (struct, tuple, map or scalar)."""
    if isinstance(value, msgspec.Struct):
        d: dict[str, Any] = {}
        for name, rule in _encode_plan(type(value)):
            v = getattr(value, name)
            if rule == _INLINE:
                d.update(_encode(v))
            elif rule == _ALWAYS or (v is not None if rule == _POINTER else bool(v)):
                d[name] = v if type(v) in _SCALARS else _encode(v)
        return d
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(value[k]) for k in sorted(value)}
    return value


def estimate_json(e: Estimate | None) -> dict[str, Any] | None:
    """An `estimate` object (`input_cost_usd` omitted when unknown); None for None."""
    return None if e is None else typing.cast(dict[str, Any], _encode(e))


def measured_json(m: Measured | None) -> dict[str, Any] | None:
    """A `measured` object (each absent field omitted); None for None."""
    return None if m is None else typing.cast(dict[str, Any], _encode(m))


def to_document(file: ResultsFile) -> dict[str, Any]:
    """The JSON data model of `file` in evolve's field order, ready for `encoding.encode_json`.

    Floats stay `float` (encoded with Go's shortest form, `10.0` → `10`), counts stay `int`;
    maps (`models`, `tool_calls`) are sorted by key; pointer fields are omitted only when `None`,
    omitempty value fields when zero/empty, and always-fields are written (`pricing: null` for
    unpriced models).
    """
    return typing.cast(dict[str, Any], _encode(file))


# --------------------------------------------------------------------------------------------
# Migrations (report spec §2)
# --------------------------------------------------------------------------------------------


def _m_trigger_snapshot(o: _Obj) -> TriggerSnapshot:
    cases = o.obj_map("cases", lambda c: c)
    results = tuple(
        TriggerResult(
            query=q,
            should_trigger=False,
            hits=c.opt_int("hits"),
            runs=c.opt_int("runs"),
            passed=c.opt_bool("passed"),
            avg_run_seconds=c.opt_float("avg_run_seconds"),
            estimate=c.opt_obj("estimate", _d_estimate),
        )
        for q, c in sorted(cases.items())
    )
    return TriggerSnapshot(
        ran_at=o.str_("ran_at"), summary=o.obj("summary", _d_trigger_summary), results=results
    )


def _m_eval_case(eid: str, c: _Obj) -> EvalResult:
    secs = c.opt_float("avg_run_seconds")
    return EvalResult(
        id=eid,
        runtime_error="errored" if c.bool_("errored") else "",
        passed=c.opt_bool("passed"),
        estimate=c.opt_obj("estimate", _d_estimate),
        measured=c.opt_obj("measured", _d_measured),
        summary=GradeSummary(
            passed=c.int_("assert_passed"),
            failed=0,
            total=c.int_("assert_total"),
            pass_rate=c.opt_float("pass_rate"),
        ),
        timing=Timing(executor_duration_seconds=secs) if secs is not None else None,
        fingerprint=c.str_("fingerprint"),
    )


def _m_eval_snapshot(o: _Obj) -> EvalSnapshot:
    cases = o.obj_map("cases", lambda c: c)
    results = tuple(_m_eval_case(k, c) for k, c in sorted(cases.items()))
    return EvalSnapshot(
        ran_at=o.str_("ran_at"), summary=o.obj("summary", _d_eval_summary), results=results
    )


def _m_triggers_entry(o: _Obj) -> TriggersEntry:
    return TriggersEntry(
        header=_d_header(o),
        results=o.list_("results", _d_trigger_result),
        summary=o.obj("summary", _d_trigger_summary),
        previous=o.opt_obj("previous", _m_trigger_snapshot),
    )


def _m_evals_entry(o: _Obj) -> EvalsEntry:
    return EvalsEntry(
        header=_d_header(o),
        results=o.list_("results", _d_eval_result),
        summary=o.obj("summary", _d_eval_summary),
        baseline=o.opt_obj("baseline", _m_eval_snapshot),
        previous=o.opt_obj("previous", _m_eval_snapshot),
    )


def migrate_document(doc: Any, *, plugin: str = "", skill: str = "") -> ResultsFile:
    """Migrate a schema 3/4 document (tier-major `triggers`/`evals` maps) to schema 5.

    Snapshot `cases` maps become `results` arrays sorted by query/id; trigger cases get
    `should_trigger: false` (unknown); eval cases turn `errored` into `runtime_error: "errored"`,
    their rates into a grade summary and `avg_run_seconds` into `timing`. Live `results` and
    `summary` are carried unchanged. Raises `ValueError` on a malformed document.
    """
    try:
        o = _Obj(doc, "results")
        trig = o.obj_map("triggers", _m_triggers_entry)
        evs = o.obj_map("evals", _m_evals_entry)
        models: dict[str, ModelEntry] = {}
        for key in sorted(set(trig) | set(evs)):
            models[key] = ModelEntry(triggers=trig.get(key), evals=evs.get(key))
        return ResultsFile(
            schema=SCHEMA_VERSION,
            plugin=plugin or o.str_("plugin"),
            skill=skill or o.str_("skill"),
            models=models,
        )
    except _Malformed as exc:
        raise ValueError(str(exc)) from exc
