"""A compiled yes/no check of a value against one of our JSON Schemas: the fast path of validation.

Owns: `compile_check`, which turns a draft 2020-12 schema (with `$ref`s resolved through a
`referencing` resolver) into a plain Python predicate saying whether a value is valid.

Guarantees: the predicate answers exactly as jsonschema's validator for our schemas would
(`iter_errors` yields nothing ⇔ the predicate is True): each keyword is the same test jsonschema
runs (the same type predicates, `integer` as a Go integer literal, `re.search` for `pattern`,
`enum`/`const` of strings only), so `not`, `if` and `oneOf` stay exact too. A schema using any
keyword outside the handled set is not compiled (`compile_check` returns None) and validation
keeps jsonschema's path. The predicate is only ever a shortcut to "no errors": callers still run
jsonschema for a value it rejects, so every finding's wording comes from there. Never does:
producing messages, reading files, raising for bad input.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from referencing.exceptions import Unresolvable

if TYPE_CHECKING:
    from referencing._core import Resolver  # referencing exports no name for it

__all__ = ["Check", "compile_check"]

Check = Callable[[Any], bool]
"""Whether a value is valid against the compiled schema."""

_ANNOTATIONS = frozenset(
    {"$schema", "$defs", "$comment", "title", "description", "default", "examples", "format"}
)
"""Keywords that never make a value invalid (`format` asserts nothing without a format checker,
and our validators have none)."""


class _Unsupported(Exception):
    """The schema uses a keyword the compiler does not handle: keep jsonschema's path."""


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, bool)


def _is_go_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_go_int,
    "number": _is_number,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
"""jsonschema's draft 2020-12 type predicates, `integer` redefined as in `schema_validator`."""


def compile_check(schema: Mapping[str, Any], resolver: Resolver[Any]) -> Check | None:
    """The predicate for `schema` (a whole schema document, `$ref`s looked up with `resolver`);
    None when the schema uses a keyword this compiler does not handle or a `$ref` that does not
    resolve (jsonschema's path reports it)."""
    try:
        return _Compiler().compile(schema, resolver, root=True)
    except (_Unsupported, Unresolvable):
        return None


class _Compiler:
    def __init__(self) -> None:
        self.refs: dict[int, list[Check]] = {}
        """A `$ref`'s resolved schema (by identity) → a one-slot cell holding its check (filled after compiling, so a
        recursive reference works)."""

    def compile(self, schema: Any, resolver: Resolver[Any], *, root: bool = False) -> Check:
        if schema is True:
            return lambda _v: True
        if schema is False:
            return lambda _v: False
        if not isinstance(schema, Mapping):
            raise _Unsupported(repr(schema))
        checks: list[Check] = []
        for keyword, value in schema.items():
            if (
                keyword in _ANNOTATIONS
                or keyword in ("then", "else")
                or (keyword == "$id" and root)
            ):
                continue  # `then` and `else` are compiled with `if` (alone, they assert nothing)
            make = _KEYWORDS.get(keyword)
            if make is None:
                raise _Unsupported(keyword)
            checks.append(make(self, value, schema, resolver))
        return _all(checks)

    # --- applicators -----------------------------------------------------------------------

    def _k_ref(self, ref: Any, _schema: Any, resolver: Resolver[Any]) -> Check:
        if not isinstance(ref, str):
            raise _Unsupported("$ref")
        resolved = resolver.lookup(ref)
        key = id(resolved.contents)  # registry contents live as long as the registry
        cell = self.refs.get(key)
        if cell is None:
            cell = self.refs[key] = []
            cell.append(self.compile(resolved.contents, resolved.resolver))
        return lambda v: cell[0](v)

    def _k_properties(self, props: Any, _schema: Any, resolver: Resolver[Any]) -> Check:
        if not isinstance(props, Mapping):
            raise _Unsupported("properties")
        compiled = [(name, self.compile(sub, resolver)) for name, sub in props.items()]

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            return all(c(v[name]) for name, c in compiled if name in v)

        return check

    def _k_additionalProperties(self, extra: Any, schema: Any, resolver: Resolver[Any]) -> Check:
        if "patternProperties" in schema:
            raise _Unsupported("patternProperties")
        known = frozenset(schema.get("properties", {}))
        sub = self.compile(extra, resolver)
        if extra is True:
            return sub

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            return all(sub(item) for key, item in v.items() if key not in known)

        return check

    def _k_items(self, items: Any, schema: Any, resolver: Resolver[Any]) -> Check:
        if "prefixItems" in schema:
            raise _Unsupported("prefixItems")
        sub = self.compile(items, resolver)
        return lambda v: not isinstance(v, list) or all(sub(item) for item in v)

    def _k_allOf(self, subs: Any, _schema: Any, resolver: Resolver[Any]) -> Check:
        return _all([self.compile(s, resolver) for s in _list(subs, "allOf")])

    def _k_anyOf(self, subs: Any, _schema: Any, resolver: Resolver[Any]) -> Check:
        compiled = [self.compile(s, resolver) for s in _list(subs, "anyOf")]
        return lambda v: any(c(v) for c in compiled)

    def _k_oneOf(self, subs: Any, _schema: Any, resolver: Resolver[Any]) -> Check:
        compiled = [self.compile(s, resolver) for s in _list(subs, "oneOf")]
        return lambda v: sum(1 for c in compiled if c(v)) == 1

    def _k_not(self, sub: Any, _schema: Any, resolver: Resolver[Any]) -> Check:
        compiled = self.compile(sub, resolver)
        return lambda v: not compiled(v)

    def _k_if(self, sub: Any, schema: Any, resolver: Resolver[Any]) -> Check:
        cond = self.compile(sub, resolver)
        then = self.compile(schema.get("then", True), resolver)
        else_ = self.compile(schema.get("else", True), resolver)
        return lambda v: then(v) if cond(v) else else_(v)

    # --- assertions ------------------------------------------------------------------------

    def _k_type(self, wanted: Any, _schema: Any, _resolver: Any) -> Check:
        names = [wanted] if isinstance(wanted, str) else wanted
        if not isinstance(names, list) or any(n not in _TYPES for n in names):
            raise _Unsupported("type")
        preds = [_TYPES[n] for n in names]
        if len(preds) == 1:
            return preds[0]
        return lambda v: any(p(v) for p in preds)

    def _k_required(self, keys: Any, _schema: Any, _resolver: Any) -> Check:
        names = _list(keys, "required")
        return lambda v: not isinstance(v, dict) or all(k in v for k in names)

    def _k_minLength(self, limit: Any, _schema: Any, _resolver: Any) -> Check:
        n = _count(limit, "minLength")
        return lambda v: not isinstance(v, str) or len(v) >= n

    def _k_maxLength(self, limit: Any, _schema: Any, _resolver: Any) -> Check:
        n = _count(limit, "maxLength")
        return lambda v: not isinstance(v, str) or len(v) <= n

    def _k_minItems(self, limit: Any, _schema: Any, _resolver: Any) -> Check:
        n = _count(limit, "minItems")
        return lambda v: not isinstance(v, list) or len(v) >= n

    def _k_minimum(self, limit: Any, _schema: Any, _resolver: Any) -> Check:
        if not _is_number(limit):
            raise _Unsupported("minimum")
        return lambda v: not _is_number(v) or not v < limit

    def _k_maximum(self, limit: Any, _schema: Any, _resolver: Any) -> Check:
        if not _is_number(limit):
            raise _Unsupported("maximum")
        return lambda v: not _is_number(v) or not v > limit

    def _k_pattern(self, pattern: Any, _schema: Any, _resolver: Any) -> Check:
        if not isinstance(pattern, str):
            raise _Unsupported("pattern")
        search = re.compile(pattern).search
        return lambda v: not isinstance(v, str) or search(v) is not None

    def _k_enum(self, values: Any, _schema: Any, _resolver: Any) -> Check:
        choices = _list(values, "enum")
        if not all(isinstance(c, str) for c in choices):
            raise _Unsupported("enum")  # jsonschema's `equal` for non-strings is not copied here
        allowed = frozenset(choices)
        return lambda v: isinstance(v, str) and v in allowed

    def _k_const(self, value: Any, schema: Any, resolver: Any) -> Check:
        return self._k_enum([value], schema, resolver)


_KEYWORDS: dict[str, Callable[[_Compiler, Any, Any, Any], Check]] = {
    "$ref": _Compiler._k_ref,
    "properties": _Compiler._k_properties,
    "additionalProperties": _Compiler._k_additionalProperties,
    "items": _Compiler._k_items,
    "allOf": _Compiler._k_allOf,
    "anyOf": _Compiler._k_anyOf,
    "oneOf": _Compiler._k_oneOf,
    "not": _Compiler._k_not,
    "if": _Compiler._k_if,
    "type": _Compiler._k_type,
    "required": _Compiler._k_required,
    "minLength": _Compiler._k_minLength,
    "maxLength": _Compiler._k_maxLength,
    "minItems": _Compiler._k_minItems,
    "minimum": _Compiler._k_minimum,
    "maximum": _Compiler._k_maximum,
    "pattern": _Compiler._k_pattern,
    "enum": _Compiler._k_enum,
    "const": _Compiler._k_const,
}
"""Each validating keyword handled → how its check is made."""


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda _v: True
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def _list(value: Any, keyword: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Unsupported(keyword)
    return value


def _count(value: Any, keyword: str) -> int:
    if not _is_go_int(value):
        raise _Unsupported(keyword)
    n: int = value
    return n
