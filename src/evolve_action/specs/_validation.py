"""Validation of authored files against our JSON Schemas and evolve's semantic rules.

Owns: the shipped schemas (`schemas/*.schema.json`, package data found with `importlib.resources`,
`$ref`s between them resolved through one `referencing` registry), `schema_validator`, and
`validate_triggers` / `validate_evals` (engine spec §4.1, §4.2.2, §5.5), which turn every problem of
a triggers or evals file into a `Finding`.

Guarantees: validation never raises for bad input: decode errors, schema violations, Go decoding
problems (wrong types) and semantic rules all become findings naming the file relative to the root,
the JSON pointer and the line; semantic messages are evolve's words (`eval "x": duplicate id`), and a
schema error that restates a semantic rule is left to that rule, so each problem is reported once.
`integer` in our schemas means a JSON integer literal (`1.0` is not one, as in Go). A file's content
is checked against its schema once per process (a cache keyed by the decoded value, so Tier 0 and
each tier's planning share one check and an edited file is checked again), and a value the compiled
check (`_schema_check`) finds valid never reaches jsonschema: only an invalid one is walked there,
so every schema finding keeps jsonschema's wording. Never does:
printing, running anything, writing files.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from jsonschema.protocols import Validator

from evolve_action import encoding
from evolve_action.encoding import Re2Error, compile_re2, trim_space
from evolve_action.errors import SpecError, display_path
from evolve_action.specs._findings import Finding, Severity
from evolve_action.specs._load import (
    EVAL_FIELDS,
    TRIGGERS_SHAPE,
    LoadProblem,
    decode_fields,
    decode_spec,
    derived,
    describe_value,
    go_json_text,
    has_control_char,
    json_pointer,
    line_for,
    parse_evals_lenient,
    parse_triggers_lenient,
)
from evolve_action.specs._model import (
    Assertion,
    EvalCase,
    EvalsSpec,
    clean_ref,
    fixture_candidates,
    is_local,
)
from evolve_action.specs._schema_check import Check, compile_check
from evolve_action.specs._suites import read_suite

__all__ = [
    "SCHEMA_BASE",
    "SCHEMA_NAMES",
    "load_schema",
    "schema_validator",
    "validate_evals",
    "validate_suite",
    "validate_triggers",
]

SCHEMA_BASE = "https://raw.githubusercontent.com/evolve-action/evolve-action/main/schemas/"
"""Base URI of our schemas' `$id`s; `$ref`s between them are relative to it."""

SCHEMA_NAMES: tuple[str, ...] = (
    "common",
    "triggers",
    "evals",
    "results",
    "config",
    "rollup",
    "agentevals",
    "agentv-eval",
)
"""The shipped schemas (`schemas/<name>.schema.json`)."""


def _schema_dir() -> Any:
    return resources.files("evolve_action") / "schemas"


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """The shipped schema `schemas/<name>.schema.json` (`name` in `SCHEMA_NAMES`)."""
    text = (_schema_dir() / f"{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _registry() -> referencing.Registry[Any]:
    resources_ = [
        (load_schema(n)["$id"], referencing.Resource.from_contents(load_schema(n)))
        for n in SCHEMA_NAMES
    ]
    return referencing.Registry().with_resources(resources_)


def _is_go_int(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


_GoValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_go_int),
)


@functools.cache
def schema_validator(name: str) -> Validator:
    """A draft 2020-12 validator for one of our schemas, with `$ref`s resolved in our registry.

    `integer` means a JSON integer literal (`1.0` is not one, as in Go).
    """
    validator: Validator = _GoValidator(load_schema(name), registry=_registry())
    return validator


# --------------------------------------------------------------------------------------------
# Validation


def _abs(path: Path) -> Path:
    return Path(os.path.abspath(path))  # noqa: PTH100 - like Go's filepath.Abs: no symlink resolution


def _where(pointer: str) -> str:
    """`/evals/2/assertions/0/type` → `evals[2].assertions[0].type` (for schema messages)."""
    out = ""
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if part.isdigit():
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


_TYPE_WORDS = {
    "string": "a string",
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def _schema_message(err: jsonschema.ValidationError) -> str:
    where = _where("".join(f"/{p}" for p in err.absolute_path))
    prefix = f"{where}: " if where else ""
    v = err.validator
    value: Any = err.validator_value
    instance: Any = err.instance
    if v == "type":
        wants = [value] if isinstance(value, str) else list(value)
        shown = [w for w in wants if w != "null"] or wants
        words = " or ".join(_TYPE_WORDS.get(w, w) for w in shown)
        return f"{prefix}must be {words} (got {describe_value(instance)})"
    if v == "required":
        missing = [r for r in value if r not in instance]
        names = ", ".join(f'"{m}"' for m in missing)
        return f"{prefix}missing required {names}"
    if v == "additionalProperties" and isinstance(instance, dict):
        allowed = set(err.schema.get("properties", {})) if isinstance(err.schema, dict) else set()
        extra = [k for k in instance if k not in allowed]
        names = ", ".join(f'"{k}"' for k in extra)
        return f"{prefix}unknown key{'s' if len(extra) > 1 else ''} {names}"
    if v in ("enum", "const"):
        allowed_values = value if v == "enum" else [value]
        choices = ", ".join(go_json_text(a) for a in allowed_values)
        return f"{prefix}must be one of {choices} (got {go_json_text(instance)})"
    if v == "minLength" and value == 1:
        return f"{prefix}must not be empty"
    if v == "minItems" and value == 1:
        return f"{prefix}must not be an empty list"
    return f"{prefix}{err.message}"


@functools.cache
def _fast_check(name: str) -> Check | None:
    """The compiled yes/no check of schema `name` (None: jsonschema's path only)."""
    schema = load_schema(name)
    return compile_check(schema, _registry().resolver(base_uri=schema["$id"]))


def _schema_errors(name: str, instance: Any) -> list[jsonschema.ValidationError]:
    """jsonschema's errors for `instance` against schema `name`, leaves first, in path order.

    Most files are valid: the compiled check (`_schema_check`) answers that without jsonschema;
    only a value it rejects is walked by jsonschema for the exact errors."""
    check = _fast_check(name)
    try:
        if check is not None and check(instance):
            return []
    except RecursionError:
        pass  # too deep for the shortcut: jsonschema decides
    errors: list[jsonschema.ValidationError] = []
    for err in schema_validator(name).iter_errors(instance):
        errors.extend(_leaves(err))
    errors.sort(key=lambda e: (list(map(str, e.absolute_path)), str(e.validator)))
    return errors


def _leaves(err: jsonschema.ValidationError) -> Iterator[jsonschema.ValidationError]:
    """Descend into `anyOf`/`oneOf`/`if` failures to the most specific errors worth showing."""
    if err.validator in ("anyOf", "oneOf") and err.context:
        # Prefer the branch that got furthest (deepest instance path), as jsonschema's best_match.
        best = jsonschema.exceptions.best_match(err.context)
        if best is not None and len(best.absolute_path) > len(err.absolute_path):
            yield from _leaves(best)
            return
    yield err


def _covered(err: jsonschema.ValidationError) -> bool:
    """Schema errors that restate a semantic rule evolve words itself (that rule reports them).

    Inside `evals[i]`, `triggers[i]` and `models[i]`: missing or empty ids, prompts, queries, texts,
    paths, patterns, runs and tools, unknown assertion types, blank model tokens, and `null` values
    (Go reads `null` as the zero value, so the semantic rule describes the consequence).
    """
    path = list(err.absolute_path)
    if not (len(path) >= 2 and path[0] in ("evals", "triggers", "models")):
        return False
    if not isinstance(path[1], int):
        return False
    if err.validator == "type":
        return err.instance is None
    return err.validator in ("required", "minLength", "minItems", "anyOf", "enum", "pattern")


class _Reporter:
    """Collects findings for one file, rendering `<rel>: <problem>` with pointer and line."""

    def __init__(self, path: Path, root: Path, check: str, line_of: encoding.LineOf | None) -> None:
        self.path = path
        self.root = root
        self.check = check
        self.line_of = line_of
        self.findings: list[Finding] = []
        self.muted_pointers: list[str] = []
        self.wrapped: str = ""
        """A pointer prefix that is not in the file (a bare array validated as `{"triggers": …}`)."""

    @functools.cached_property
    def rel(self) -> str:
        """The file as findings name it (worked out for the first finding: most files have none)."""
        return display_path(_abs(self.path), _abs(self.root))

    def add(
        self,
        problem: str,
        pointer: str | None,
        *,
        line: int | None = None,
        severity: Severity = Severity.ERROR,
        check: str | None = None,
    ) -> None:
        if check is None and pointer is not None and self.muted(pointer):
            return
        if pointer is not None and self.wrapped and pointer.startswith(self.wrapped):
            pointer = pointer[len(self.wrapped) :]
        if line is None and pointer is not None:
            line = line_for(pointer, self.line_of)
        self.findings.append(
            Finding(
                message=f"{self.rel}: {problem}",
                path=self.rel,
                line=line,
                pointer=pointer,
                check=check or self.check,
                severity=severity,
            )
        )

    def mute(self, pointer: str) -> None:
        """Semantic findings at or inside `pointer` are not reported (a structural one already is)."""
        self.muted_pointers.append(pointer)

    def muted(self, pointer: str) -> bool:
        return any(pointer == p or pointer.startswith(p + "/") for p in self.muted_pointers)

    def sorted(self) -> list[Finding]:
        """Findings in line order (stable: same-line findings keep evolve's emission order)."""
        return sorted(self.findings, key=lambda f: f.line if f.line is not None else 0)


def _decode_for_validation(path: Path, rep: _Reporter) -> tuple[Any, bool]:
    try:
        decoded = decode_spec(path)
    except SpecError as exc:
        rep.add(exc.message, None, line=exc.line, check=f"{rep.check}.decode")
        return None, False
    rep.line_of = decoded.line_of
    return decoded.value, True


_SCHEMA_FINDINGS: dict[tuple[str, bytes], tuple[tuple[str, str], ...]] = {}
"""`(schema, pickled value) → (pointer, message)` of its schema findings: a value (a file's content)
is checked against a schema once per process however often Tier 0 and each tier's planning
validate it. Keyed by content, so an edited file is checked again."""

_SCHEMA_FINDINGS_MAX = 10_000


def _schema_findings(name: str, value: Any) -> tuple[tuple[str, str], ...]:
    """`(pointer, message)` of each schema error a semantic rule does not word itself."""
    return derived(f"schema-{name}", value, None, lambda: _schema_findings_of(name, value))


def _schema_findings_of(name: str, value: Any) -> tuple[tuple[str, str], ...]:
    try:
        # Pickle is exact about types (1, 1.0 and True differ), as the schema is.
        key: tuple[str, bytes] | None = (name, pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        key = None
    if key is not None and key in _SCHEMA_FINDINGS:
        return _SCHEMA_FINDINGS[key]
    found = tuple(
        (
            "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in err.absolute_path),
            _schema_message(err),
        )
        for err in _schema_errors(name, value)
        if not _covered(err)
    )
    if key is not None:
        if len(_SCHEMA_FINDINGS) >= _SCHEMA_FINDINGS_MAX:
            _SCHEMA_FINDINGS.clear()
        _SCHEMA_FINDINGS[key] = found
    return found


def _structural_pass(name: str, value: Any, problems: list[LoadProblem], rep: _Reporter) -> None:
    """Schema errors (minus those a semantic rule words itself), then decode problems the schema
    did not already report. Their pointers mute semantic findings inside the same values."""
    for pointer, message in _schema_findings(name, value):
        rep.add(message, pointer, check=f"{name}.schema")
        rep.mute(pointer)
    for problem in problems:
        if not rep.muted(problem.pointer):
            rep.add(problem.message, problem.pointer, check=f"{name}.load")
            rep.mute(problem.pointer)


def validate_triggers(path: Path, root: Path) -> list[Finding]:
    """Schema + §4.1 rules for a triggers file; findings name `path` relative to `root`.

    Semantic messages are evolve's: `triggers[i]: empty query`, `triggers[i]: duplicate query "<q>"`.
    Findings are ordered by line.
    """
    rep = _Reporter(path, root, "triggers", None)
    value, ok = _decode_for_validation(path, rep)
    if not ok:
        return rep.findings
    if isinstance(value, list):  # skill-creator's bare array: validated as the `triggers` list
        value, rep.wrapped = {"triggers": value}, "/triggers"
    elif not isinstance(value, dict):
        rep.add(f"{TRIGGERS_SHAPE} (got {describe_value(value)})", "")
        return rep.findings
    spec, problems = parse_triggers_lenient(value, path)
    _structural_pass("triggers", value, problems, rep)
    doc: Mapping[str, Any] = value if isinstance(value, dict) else {}
    tkey = next((k for k, _ in decode_fields(doc, ("triggers",)).values()), "triggers")
    seen: set[str] = set()
    for q in spec.queries:
        qptr = json_pointer(tkey, q.index, "query")
        if q.query == "":
            rep.add(f"triggers[{q.index}]: empty query", qptr)
        elif q.query in seen:
            rep.add(f"triggers[{q.index}]: duplicate query {_go_quote(q.query)}", qptr)
        seen.add(q.query)
    return rep.sorted()


def _go_quote(s: str) -> str:
    """Go `%q` of a string: double-quoted, Go escapes, printable Unicode kept raw."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\a\b\f\n\r\t\v":
            out.append(
                {
                    "\a": "\\a",
                    "\b": "\\b",
                    "\f": "\\f",
                    "\n": "\\n",
                    "\r": "\\r",
                    "\t": "\\t",
                    "\v": "\\v",
                }[ch]
            )
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def _assertion_pointer(case_ptr: str, keys: Mapping[str, str], case: EvalCase, j: int) -> str:
    n_exp = len(case.expectations)
    if j < n_exp:
        return case_ptr + json_pointer(keys.get("expectations", "expectations"), j)
    return case_ptr + json_pointer(keys.get("assertions", "assertions"), j - n_exp)


def _assertion_problems(a: Assertion) -> list[tuple[str, str]]:
    """`(problem, field)` pairs for one normalized assertion, in evolve's order and wording."""
    t = a.type
    if t in ("file_exists", "file_absent"):
        return [("missing path", "path")] if not a.path else []
    if t in ("regex", "not_regex"):
        if not a.pattern:
            return [("missing pattern", "pattern")]
        err = _re2_problem("(?m)" + a.pattern)
        return [(f"invalid pattern: {err}", "pattern")] if err else []
    if t == "command":
        return [("missing run", "run")] if not a.run else []
    if t == "tool_call":
        if not a.tool:
            return [("missing tool", "tool")]
        err = _re2_problem(a.tool)
        if err:
            return [(f"invalid tool: {err}", "tool")]
        if a.pattern:
            err = _re2_problem(a.pattern)
            if err:
                return [(f"invalid pattern: {err}", "pattern")]
        return []
    if t == "llm":
        return [("missing text", "text")] if not a.text else []
    return [(f"unknown assertion type {_go_quote(t)}", "type")]


def validate_evals(
    path: Path,
    root: Path,
    *,
    known_models: Iterable[tuple[str, str]] | None = None,
    check_fixtures: bool = True,
    fixture_bases: Sequence[Path] = (),
) -> list[Finding]:
    """Schema + §4.2.2 rules (and the models restriction) for an evals file.

    Findings come in evolve's order: load/schema problems, then `models` problems, then per eval:
    id, prompt, assertions present, fixtures, each assertion. `known_models` are `(provider,
    bare id)` pairs; when given, a `models` token matching none of them (nor `all` nor a provider)
    is a warning. `check_fixtures=False` skips the "fixture not found" rule. `fixture_bases`: where
    a `files` entry not beside the file is looked for next (skill-creator's skill root, the
    repository root); a missing fixture names every path really tried, relative to `root`.
    """
    rep = _Reporter(path, root, "evals", None)
    value, ok = _decode_for_validation(path, rep)
    if not ok:
        return rep.findings
    spec, problems = parse_evals_lenient(value, path, fixture_bases)
    _structural_pass("evals", value, problems, rep)
    doc: Mapping[str, Any] = value if isinstance(value, dict) else {}
    top = {name: key for name, (key, _) in decode_fields(doc, ("models", "evals")).items()}
    _validate_models(spec, rep, top.get("models", "models"), known_models)
    ekey = top.get("evals", "evals")
    raw_evals = doc.get(ekey)
    raw_list: list[Any] = raw_evals if isinstance(raw_evals, list) else []
    seen: set[str] = set()
    for case in spec.evals:
        cptr = json_pointer(ekey, case.index)
        raw_case = raw_list[case.index] if case.index < len(raw_list) else None
        raw_obj: Mapping[str, Any] = raw_case if isinstance(raw_case, dict) else {}
        keys = {name: key for name, (key, _) in decode_fields(raw_obj, EVAL_FIELDS).items()}
        _validate_case(
            case, cptr, keys, rep, seen, check_fixtures, spec.directory, root, spec.fixture_bases
        )
    return rep.sorted()


def _validate_models(
    spec: EvalsSpec,
    rep: _Reporter,
    mkey: str,
    known_models: Iterable[tuple[str, str]] | None,
) -> None:
    known = list(known_models) if known_models is not None else None
    providers = {p for p, _ in known} if known else set()
    for j, token in enumerate(spec.models):
        tok = trim_space(token)
        if tok == "":
            rep.add(f"models[{j}]: empty model restriction", json_pointer(mkey, j))
        elif (
            known is not None
            and tok != "all"
            and tok not in providers
            and not any(tok in (bare, f"{prov}/{bare}") for prov, bare in known)
        ):
            rep.add(
                f"models[{j}]: {_go_quote(tok)} matches no known provider or model "
                "(it restricts this skill to nothing)",
                json_pointer(mkey, j),
                severity=Severity.WARNING,
            )


NOT_GRADED = (
    "not graded yet: add assertions (or expectations); the case is not run until it has one"
)
"""A skill-creator case saved as its SKILL.md says to first: a prompt, no assertions (issue 30)."""


def _validate_case(
    case: EvalCase,
    cptr: str,
    keys: Mapping[str, str],
    rep: _Reporter,
    seen: set[str],
    check_fixtures: bool,
    evals_dir: Path,
    root: Path,
    bases: tuple[Path, ...] = (),
) -> None:
    label = case.label
    if not case.id:
        rep.add(f"evals[{case.index}]: missing id", cptr)
    elif case.id in seen:
        rep.add(f"{label}: duplicate id", cptr + json_pointer(keys.get("id", "id")))
    seen.add(case.id)
    if not case.prompt:
        pk = keys.get("prompt")
        rep.add(f"{label}: missing prompt", cptr + json_pointer(pk) if pk else cptr)
    if not case.assertions and case.prompt:
        rep.add(
            f"{label}: {NOT_GRADED}",
            cptr,
            severity=Severity.WARNING,
            check="evals.ungraded",
        )
    elif not case.assertions:
        rep.add(f"{label}: no expectations or assertions", cptr)
    fkey = keys.get("files", "files")
    used: dict[str, str] = {}
    for j, authored in enumerate(case.files):
        if has_control_char(authored) or not is_local(clean_ref(authored)):
            continue  # reported as a load problem (control character / escapes the directory)
        tried = fixture_candidates(authored, evals_dir, bases)
        ref = tried[0]
        fptr = cptr + json_pointer(fkey, j)
        if check_fixtures and not _is_regular(ref.source):
            where = ", ".join(_tried(t.source, root) for t in tried)
            rep.add(
                f"{label} files[{j}]: {ref.authored}: fixture not found "
                f"(looked for {where}; add the file or fix the path)",
                fptr,
            )
        if ref.dest in used:
            rep.add(
                f"{label} files[{j}]: {used[ref.dest]} and {ref.authored} both stage to {ref.dest}",
                fptr,
            )
        else:
            used[ref.dest] = ref.authored
    for j, a in enumerate(case.assertions):
        aptr = _assertion_pointer(cptr, keys, case, j)
        for text, fld in _assertion_problems(a):
            pointer = aptr
            if j >= len(case.expectations) and not text.startswith("missing "):
                pointer = aptr + json_pointer(
                    fld
                )  # the offending value itself (e.g. the bad pattern)
            rep.add(f"{label} assertions[{j}]: {text}", pointer)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return False


def _re2_problem(pattern: str) -> str:
    """Go's wording of why RE2 rejects `pattern`, or "" when it compiles."""
    try:
        compile_re2(pattern)
    except Re2Error as exc:
        return exc.go_message
    return ""


def _tried(source: Path, root: Path) -> str:
    """The path really tried, as the user finds it: relative to the repository root."""
    try:
        return source.relative_to(_abs(root)).as_posix()
    except ValueError:
        return source.as_posix()


SUITE_SCHEMAS = {"agentevals": "agentevals", "agentv-v2": "agentv-eval"}
"""Suite format → the schema that checks its structure."""


def validate_suite(path: Path, root: Path, *, skill_dir: Path | None = None) -> list[Finding]:
    """Tier 0 for an AgentEvals/AgentV suite: our JSON Schema for its format, then the semantic
    rules of `read_suite` (unique case ids, kebab-case names, referenced files that exist,
    evaluator fields per type). Findings name the file and line and say what to do; ordered by
    line. A suite with an error never runs."""
    rep = _Reporter(path, root, "suite", None)
    value, ok = _decode_for_validation(path, rep)
    if not ok:
        return rep.findings
    suite = read_suite(path, root=root, skill_dir=skill_dir)
    semantic = {p.pointer for p in suite.problems}
    if isinstance(value, dict):
        for err in _schema_errors(SUITE_SCHEMAS[suite.format], value):
            pointer = "".join(
                "/" + str(part).replace("~", "~0").replace("/", "~1") for part in err.absolute_path
            )
            if err.validator in ("required", "anyOf") and pointer == "":
                continue  # the reader words a missing name or case list itself
            if pointer in semantic or (pointer == "/name" and err.validator == "pattern"):
                continue
            rep.add(
                _schema_message(err) + " — fix it as the suite schema says",
                pointer,
                check="suite.schema",
            )
    for problem in suite.problems:
        rep.add(
            problem.message,
            problem.pointer or None,
            line=problem.line,
            severity=Severity.ERROR if problem.severity == "error" else Severity.WARNING,
            check="suite.rules",
        )
    return rep.sorted()
