"""Loading authored Tier 1/Tier 2 definitions: `triggers.<ext>` and `evals.<ext>`.

Owns: decoding and normalizing them with evolve's rules (engine spec §4.2.1: integer ids become
strings, expectations expand to `llm` assertions first, bare-string assertions are `llm`
assertions) into the values of `_model` (exported by the package: `TriggerSpec`, `EvalsSpec`,
`EvalCase`, `Assertion`, `FixtureRef`, the staging rule and `model_allowed`), RE2 compilation with
Go-worded errors, the Go-rule field decoding helpers shared with `_validation` (`decode_fields`,
`describe_value`, `json_pointer`, `line_for`, `LoadProblem`), and a lenient parse that collects
every problem for `_validation` (which owns the JSON Schemas and the §4.2.2 rules,
`validation.validate_triggers`/`validate_evals`).

Guarantees: loaders raise only `SpecError` (file, line and what to fix), never a traceback. Values
are decoded with Go's rules (exact key match first, then case-insensitive; later keys win; `null` is
the zero value; a wrong type is an error), so a file means here what it means to evolve. A file is
decoded once per content (`decode_spec`: Tier 0, planning and the loaders share it; an edit is
decoded again), and what is parsed or checked from a decoded file is worked out once per content
too (`derived`). Never does: printing, running anything, writing files.

Deliberate difference from evolve: an assertion *object* without a `type` but with a `text` (the shape
skill-creator writes, `{"id": "assertion-1", "text": "…"}`) is an `llm` assertion here, so a verbatim
skill-creator `evals.json` loads, validates and grades; it still hashes as evolve hashes it
(`"type":""`), so fingerprints agree with evolve's.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from evolve_action import encoding
from evolve_action.errors import SpecError
from evolve_action.specs._model import (
    Assertion,
    EvalCase,
    EvalsSpec,
    FixtureRef,
    Source,
    TriggerQuery,
    TriggerSpec,
    clean_ref,
    is_local,
    resolve_fixture,
)

__all__ = [
    "EVAL_FIELDS",
    "LoadProblem",
    "decode_fields",
    "describe_value",
    "go_json_text",
    "has_control_char",
    "json_pointer",
    "line_for",
    "load_evals",
    "load_triggers",
    "parse_evals",
    "parse_evals_lenient",
    "parse_triggers",
    "parse_triggers_lenient",
    "value_kind",
]

_T = TypeVar("_T")

# --------------------------------------------------------------------------------------------
# Go-style decoding of the raw document


class LoadProblem(Exception):
    """A decode/normalization problem at a JSON pointer (surfaced as `SpecError` or a `Finding`)."""

    def __init__(self, message: str, pointer: str) -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer


def value_kind(value: Any) -> str:
    """The JSON type name of a decoded value (`string`, `integer`, `number`, `object`, …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def describe_value(value: Any) -> str:
    """`string "yes"`, `null`, `array [1,2]`: the offending value for messages (truncated)."""
    if value is None:
        return "null"
    text = go_json_text(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{value_kind(value)} {text}"


def go_json_text(value: Any) -> str:
    """Compact Go JSON text of a value, for messages (`id 1.5: …`)."""
    try:
        return encoding.encode_json_compact(value)
    except (TypeError, ValueError):
        return repr(value)


def decode_fields(obj: Mapping[str, Any], names: Sequence[str]) -> dict[str, tuple[str, Any]]:
    """Go struct decoding of `obj`: per JSON key, exact field name first, else case-insensitive.

    Returns `field → (authored key, value)`; later keys win, as in Go.
    """
    lowered = {n.lower(): n for n in names}
    out: dict[str, tuple[str, Any]] = {}
    for key, value in obj.items():
        name = key if key in names else lowered.get(key.lower())
        if name is not None:
            out[name] = (key, value)
    return out


def json_pointer(*parts: str | int) -> str:
    """RFC 6901 pointer from reference tokens: `json_pointer("evals", 2, "id") == "/evals/2/id"`.

    `encoding.pointer_join` over the tokens, written out: loading builds one for every value."""
    return "".join(["/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts])


_SINK: contextvars.ContextVar[list[LoadProblem] | None] = contextvars.ContextVar(
    "_SINK", default=None
)
"""When set (validation), decode problems are collected there and parsing goes on with zero values."""


def _fail(problem: LoadProblem) -> None:
    """Raise `problem`, or record it when a lenient parse is collecting problems."""
    sink = _SINK.get()
    if sink is None:
        raise problem
    sink.append(problem)


# The `_want_*` helpers read one value; a problem's pointer is `pointer` joined with `tokens`
# (built only when there is a problem: most values are fine).


def _want_str(value: Any, label: str, pointer: str, *tokens: str | int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        _fail(
            LoadProblem(
                f"{label}: must be a string (got {describe_value(value)})",
                pointer + json_pointer(*tokens),
            )
        )
        return ""
    return value


def _want_bool(value: Any, label: str, pointer: str, *tokens: str | int) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        _fail(
            LoadProblem(
                f"{label}: must be true or false (got {describe_value(value)})",
                pointer + json_pointer(*tokens),
            )
        )
        return False
    return value


def _want_int(value: Any, label: str, pointer: str, *tokens: str | int) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(
            LoadProblem(
                f"{label}: must be an integer (got {describe_value(value)})",
                pointer + json_pointer(*tokens),
            )
        )
        return 0
    return value


def _want_list(value: Any, label: str, pointer: str, *tokens: str | int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        _fail(
            LoadProblem(
                f"{label}: must be a list (got {describe_value(value)})",
                pointer + json_pointer(*tokens),
            )
        )
        return []
    return value


def _want_obj(value: Any, label: str, pointer: str, *tokens: str | int) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(
            LoadProblem(
                f"{label}: must be an object (got {describe_value(value)})",
                pointer + json_pointer(*tokens),
            )
        )
        return {}
    return value


def _yaml_ints(value: Any) -> Any:
    """YAML values reach evolve through `json.Marshal`, which writes `5.0` as `5`: mirror that."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, list):
        return [_yaml_ints(v) for v in value]
    if isinstance(value, dict):
        return {k: _yaml_ints(v) for k, v in value.items()}
    return value


def _prepare(raw: Any, path: Path) -> Any:
    return _yaml_ints(raw) if path.suffix.lower() in (".yaml", ".yml") else raw


def _parse_triggers(raw: Any, path: Path) -> TriggerSpec:
    if isinstance(raw, list):  # skill-creator's trigger eval set: a bare array of queries
        return TriggerSpec(path=path, queries=_trigger_queries(raw, "", "[{i}]"))
    if not isinstance(raw, dict):
        _fail(LoadProblem(f"top level: {TRIGGERS_SHAPE} (got {describe_value(raw)})", ""))
    doc = _want_obj(raw, "top level", "")
    f = decode_fields(doc, ("skill_name", "triggers"))
    skill_name = _want_str(f.get("skill_name", ("", None))[1], "skill_name", "/skill_name")
    tkey, traw = f.get("triggers", ("triggers", None))
    items = _want_list(traw, "triggers", "", tkey)
    queries = _trigger_queries(items, json_pointer(tkey), "triggers[{i}]")
    return TriggerSpec(path=path, skill_name=skill_name, queries=queries)


TRIGGERS_SHAPE = (
    'must be an object with a "triggers" list, or a bare array of '
    '{"query": …, "should_trigger": true|false} objects (skill-creator\'s trigger eval set)'
)
"""What a triggers file must be, as messages say it."""


def _trigger_queries(items: list[Any], pointer: str, label: str) -> tuple[TriggerQuery, ...]:
    """`{query, should_trigger}` objects; `label` names item `i` in messages (`triggers[{i}]`)."""
    queries: list[TriggerQuery] = []
    for i, item in enumerate(items):
        base = label.format(i=i)
        entry = _want_obj(item, base, pointer, i)
        ef = decode_fields(entry, ("query", "should_trigger", "prompt"))
        if "query" not in ef and "prompt" in ef:
            _fail(
                LoadProblem(
                    f'{base}: has "prompt" but no "query": rename it to "query" (a trigger '
                    'query is {"query": …, "should_trigger": true|false})',
                    pointer + json_pointer(i),
                )
            )
        qk, qv = ef.get("query", ("query", None))
        sk, sv = ef.get("should_trigger", ("should_trigger", None))
        queries.append(
            TriggerQuery(
                query=_want_str(qv, f"{base}.query", pointer, i, qk),
                should_trigger=_want_bool(sv, f"{base}.should_trigger", pointer, i, sk),
                index=i,
            )
        )
    return tuple(queries)


_ASSERTION_STR_FIELDS = ("type", "path", "pattern", "run", "cwd", "tool", "requires", "text")
EVAL_FIELDS = (
    "id",
    "name",
    "prompt",
    "expected_output",
    "files",
    "expectations",
    "assertions",
    "max_turns",
    "timeout_seconds",
)


def _eval_id(value: Any, pointer: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return str(value)
    # A float id shows as authored (`1.0`, not Go's re-encoded `1`), so the message makes sense.
    shown = repr(value) if isinstance(value, float) else go_json_text(value)
    _fail(LoadProblem(f"id {shown}: must be a string or an integer", pointer))
    return go_json_text(value)


def has_control_char(text: str) -> bool:
    """Whether `text` holds a C0 control character (NUL, newline, tab, …) or DEL."""
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def _control_message(label: str, value: str) -> str:
    return (
        f"{label}: path {go_json_text(value)} contains a control character (NUL, newline, tab, "
        "…); file paths cannot"
    )


def _parse_assertion(item: Any, label: str, pointer: str) -> Assertion:
    if isinstance(item, str):
        return Assertion(type="llm", text=item)
    obj = _want_obj(item, label, pointer)
    f = decode_fields(obj, (*_ASSERTION_STR_FIELDS, "expect_exit"))
    values: dict[str, Any] = {}
    for name in _ASSERTION_STR_FIELDS:
        key, value = f.get(name, (name, None))
        values[name] = _want_str(value, f"{label}: {name}", pointer, key)
    ek, ev = f.get("expect_exit", ("expect_exit", None))
    expect_exit = None if ev is None else _want_int(ev, f"{label}: expect_exit", pointer, ek)
    for name in ("path", "cwd"):
        if has_control_char(values[name]):
            key = f.get(name, (name, None))[0]
            _fail(
                LoadProblem(
                    _control_message(f"{label}: {name}", values[name]), pointer + json_pointer(key)
                )
            )
            values[name] = ""
    implied = values["type"] == "" and "type" not in f and values["text"] != ""
    if implied:
        values["type"] = "llm"
    return Assertion(expect_exit=expect_exit, implied_type=implied, **values)


def _parse_eval(
    item: Any, i: int, evals_dir: Path, pointer: str, bases: tuple[Path, ...] = ()
) -> EvalCase:
    obj = _want_obj(item, f"evals[{i}]", pointer)
    f = decode_fields(obj, EVAL_FIELDS)

    def get(name: str) -> tuple[str, Any]:
        return f.get(name, (name, None))

    ik, iv = get("id")
    eid = _eval_id(iv, pointer + json_pointer(ik))
    label = f'eval "{eid}"'

    def s(name: str) -> str:
        k, v = get(name)
        return _want_str(v, f"{label}: {name}", pointer, k)

    name, prompt, expected = s("name"), s("prompt"), s("expected_output")

    fk, fv = get("files")
    fptr = pointer + json_pointer(fk)
    if isinstance(fv, dict):
        _fail(
            LoadProblem(
                f"{label}: files: inline file content is not supported; "
                "list fixture paths relative to the evals file instead",
                fptr,
            )
        )
        fv = None
    elif fv is not None and not isinstance(fv, list):
        _fail(LoadProblem(f"{label}: files: must be a list of fixture paths", fptr))
        fv = None
    files: list[str] = []
    for j, ref in enumerate(fv or []):
        if ref is None:
            ref = ""
        if not isinstance(ref, str):
            _fail(
                LoadProblem(
                    f"{label}: files: must be a fixture path (a string)", fptr + json_pointer(j)
                )
            )
            ref = ""
        files.append(ref)

    xk, xv = get("expectations")
    expectations: list[str] = []
    for j, e in enumerate(_want_list(xv, f"{label}: expectations", pointer, xk)):
        expectations.append(_want_str(e, f"{label}: expectations[{j}]", pointer, xk, j))

    ak, av = get("assertions")
    authored: list[Assertion] = []
    for j, a in enumerate(_want_list(av, f"{label}: assertions", pointer, ak)):
        authored.append(
            _parse_assertion(a, f"{label}: assertions[{j}]", pointer + json_pointer(ak, j))
        )

    mk, mv = get("max_turns")
    tk, tv = get("timeout_seconds")
    max_turns = _want_int(mv, f"{label}: max_turns", pointer, mk)
    timeout = _want_int(tv, f"{label}: timeout_seconds", pointer, tk)

    fixtures: list[FixtureRef] = []
    for j, ref in enumerate(files):
        if has_control_char(ref):
            _fail(
                LoadProblem(_control_message(f"{label}: files[{j}]", ref), fptr + json_pointer(j))
            )
            continue
        rel = clean_ref(ref)
        if not is_local(rel):
            _fail(
                LoadProblem(
                    f'{label}: files[{j}] "{ref}" escapes the evals directory',
                    fptr + json_pointer(j),
                )
            )
            continue
        fixtures.append(resolve_fixture(ref, evals_dir, bases))

    assertions = [Assertion(type="llm", text=e, source=Source.EXPECTATION) for e in expectations]
    assertions.extend(authored)
    return EvalCase(
        id=eid,
        name=name,
        prompt=prompt,
        expected_output=expected,
        files=tuple(files),
        fixtures=tuple(fixtures),
        expectations=tuple(expectations),
        assertions=tuple(assertions),
        max_turns=max_turns,
        timeout_seconds=timeout,
        index=i,
    )


def _parse_evals(raw: Any, path: Path, fixture_bases: tuple[Path, ...] = ()) -> EvalsSpec:
    doc = _want_obj(raw, "top level", "")
    f = decode_fields(doc, ("skill_name", "models", "evals"))
    sk, sv = f.get("skill_name", ("skill_name", None))
    skill_name = _want_str(sv, "skill_name", "", sk)
    mk, mv = f.get("models", ("models", None))
    models = tuple(
        _want_str(m, f"models[{j}]", "", mk, j)
        for j, m in enumerate(_want_list(mv, "models", "", mk))
    )
    ek, ev = f.get("evals", ("evals", None))
    evals_dir = path.parent
    cases = tuple(
        _parse_eval(item, i, evals_dir, json_pointer(ek, i), fixture_bases)
        for i, item in enumerate(_want_list(ev, "evals", "", ek))
    )
    return EvalsSpec(
        path=path, skill_name=skill_name, models=models, evals=cases, fixture_bases=fixture_bases
    )


def _abs(path: Path) -> Path:
    return Path(os.path.abspath(path))  # noqa: PTH100 - like Go's filepath.Abs: no symlink resolution


def line_for(pointer: str, line_of: encoding.LineOf | None) -> int | None:
    """Line of `pointer`, or of its nearest ancestor the lookup knows."""
    if line_of is None:
        return None
    p = pointer
    while True:
        try:
            line = line_of(p)
        except Exception:  # a lookup problem must never hide the finding itself
            line = None
        if line is not None:
            return line
        if not p:
            return None
        p = p.rsplit("/", 1)[0]


def _as_spec_error(problem: LoadProblem, path: Path, line_of: encoding.LineOf | None) -> SpecError:
    line = line_for(problem.pointer, line_of) if line_of else None
    return SpecError(problem.message, path=path, line=line)


def parse_triggers(raw: Any, path: Path) -> TriggerSpec:
    """Build a `TriggerSpec` from a decoded document (Go decoding rules); `SpecError` on bad shape."""
    try:
        return _parse_triggers(_prepare(raw, path), _abs(path))
    except LoadProblem as problem:
        raise _as_spec_error(problem, path, None) from None


def parse_evals(raw: Any, path: Path) -> EvalsSpec:
    """Build a normalized `EvalsSpec` from a decoded document; `SpecError` on the first problem."""
    try:
        return _parse_evals(_prepare(raw, path), _abs(path))
    except LoadProblem as problem:
        raise _as_spec_error(problem, path, None) from None


_DECODED: dict[tuple[str, bytes], encoding.Decoded] = {}
"""`(path, SHA-256 of its bytes) → decoded value`: a definition file is decoded once per process
however often Tier 0, each tier's planning and the loaders read it. Keyed by content, so an edited
file is decoded again."""

_DECODED_MAX = 4096


def decode_spec(path: Path) -> encoding.Decoded:
    """`encoding.decode_with_lines` of a definition file, decoded once per content (the value is
    shared: callers never change it). Raises `SpecError` as the decoder does (never cached)."""
    data = encoding.read_capped(path)
    key = (str(path), hashlib.sha256(data).digest())
    found = _DECODED.get(key)
    if found is None:
        found = encoding.decode_bytes_with_lines(data, path)
        if len(_DECODED) >= _DECODED_MAX:
            _DECODED.clear()
            _SHARED.clear()
            _DERIVED.clear()
        _DECODED[key] = found
        _SHARED[id(found.value)] = found.value
    return found


_SHARED: dict[int, Any] = {}
"""The values `_DECODED` holds, by id: the ones `derived` may remember things about."""

_DERIVED: dict[tuple[str, int, Hashable], Any] = {}
"""`(what, id of a decoded value, arguments) → what was derived from it`: a parse or a schema
check of a definition file done once per content, however often Tier 0, each tier's planning
and the loaders ask for it."""


def derived(what: str, raw: Any, args: Hashable, make: Callable[[], _T]) -> _T:
    """`make()` for the definition value `raw`, computed once per `(what, raw, args)`.

    Only a value `decode_spec` returned is remembered: it is shared, never changed, and kept
    alive by the decode cache (so its id is not reused while the entry exists). A caller's own
    document (which its owner may change) is derived afresh each time, and an exception from
    `make` is never remembered.
    """
    if _SHARED.get(id(raw)) is not raw:
        return make()
    key = (what, id(raw), args)
    if key in _DERIVED:
        return cast(_T, _DERIVED[key])
    out = make()
    _DERIVED[key] = out
    return out


def load_triggers(path: Path) -> TriggerSpec:
    """Decode and load a `triggers.<ext>` file (no validation: runs execute unvalidated specs).

    The strict parse is the lenient one (which Tier 0's validation of the same content shares)
    stopped at its first problem: `_fail` raises exactly where the lenient parse records."""
    decoded = decode_spec(path)
    spec, problems = parse_triggers_lenient(decoded.value, path)
    if problems:
        raise _as_spec_error(problems[0], path, decoded.line_of)
    return spec


def load_evals(path: Path, *, fixture_bases: Sequence[Path] = ()) -> EvalsSpec:
    """Decode, normalize (§4.2.1) and resolve fixtures of an `evals.<ext>` file.

    `files` resolve beside the file; one not found there is looked for under `fixture_bases`
    (`EvalSet.fixture_bases`: skill-creator's skill root, then the repository root).

    Errors are `SpecError`s naming the file and line (`eval "x": files[0] "../a" escapes the evals
    directory`); like evolve, only the first problem is reported.
    """
    decoded = decode_spec(path)
    spec, problems = parse_evals_lenient(decoded.value, path, fixture_bases)
    if problems:  # the lenient parse's first problem is where the strict parse stops
        raise _as_spec_error(problems[0], path, decoded.line_of)
    return spec


def _lenient(
    parse: Callable[[Any, Path], _T], raw: Any, path: Path
) -> tuple[_T, list[LoadProblem]]:
    sink: list[LoadProblem] = []
    token = _SINK.set(sink)
    try:
        return parse(_prepare(raw, path), _abs(path)), sink
    finally:
        _SINK.reset(token)


def parse_triggers_lenient(raw: Any, path: Path) -> tuple[TriggerSpec, list[LoadProblem]]:
    """Like `parse_triggers`, but collect every problem (wrong-typed values become zero values)."""
    spec, problems = derived(
        "triggers-lenient", raw, _abs(path), lambda: _lenient(_parse_triggers, raw, path)
    )
    return spec, list(problems)


def parse_evals_lenient(
    raw: Any, path: Path, fixture_bases: Sequence[Path] = ()
) -> tuple[EvalsSpec, list[LoadProblem]]:
    """Like `parse_evals`, but collect every problem; escaping `files` entries are left out of
    `fixtures` (still listed in `files`)."""
    bases = tuple(_abs(b) for b in fixture_bases)
    spec, problems = derived(
        "evals-lenient",
        raw,
        (_abs(path), bases),
        lambda: _lenient(lambda r, p: _parse_evals(r, p, bases), raw, path),
    )
    return spec, list(problems)
