"""YAML decoding with yaml.v3's semantics on PyYAML's event parser (LibYAML's where available).

Owns: `decode_yaml`, which turns YAML text into the JSON data model exactly as evolve's
`yaml.v3` decode + `json.Marshal` does (duplicate keys, non-string keys, merge keys, `.inf`/`.nan`
and tag mismatches are errors; `key:<TAB>value` is accepted like yaml.v3 does), plus a JSON
pointer → line index for error messages.

Guarantees: values are plain `dict`/`list`/`str`/`int`/`float`/`bool`/`None`; every problem is a
`SpecError` naming the file and line. Never does: read files (the caller passes text, see
`encoding.decode_path`), use PyYAML's resolvers or constructors (PyYAML resolves YAML 1.1:
`yes`/`on` booleans, timestamps, sets, sexagesimal numbers would diverge from yaml.v3); only the
parser's events are used, and `_yamlscalar` resolves plain scalars by the YAML 1.2 core schema as
yaml.v3 does. The parser is LibYAML's (`yaml.CParser`, the C library yaml.v3 itself was ported
from) when PyYAML was built with it, else PyYAML's pure-Python one; both give the same events.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evolve_action.encoding._document import MAX_DEPTH, Decoded, pointer_join
from evolve_action.encoding._yamlscalar import (
    BOOL_TAG,
    FLOAT_TAG,
    INT_TAG,
    NULL_TAG,
    STR_TAG,
    TAG,
    TIMESTAMP_TAG,
    json_number,
    resolve_plain,
)
from evolve_action.errors import SpecError

__all__ = ["MAX_ALIAS_VALUES", "decode_yaml"]


class _YamlFail(Exception):
    def __init__(self, message: str, line: int | None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.hint = hint


MAX_ALIAS_VALUES = 100_000
"""How many values aliases may add to a YAML document when expanded (the "billion laughs"
guard): each `*alias` counts every value of its anchor, counted before anything expands it."""


class _YamlBuilder:
    """Builds the JSON data model from parser events, with yaml.v3's checks.

    Aliases share the anchor's value (nothing is copied here), but every consumer that walks
    the result would expand them, so their expanded size and depth are counted first: an alias
    adds its anchor's value count to a budget (`MAX_ALIAS_VALUES`) and its anchor's height to
    the depth where it is used (`MAX_DEPTH`); an alias of an anchor still being built (a value
    containing itself) is refused.
    """

    def __init__(self, events: Iterator[Any]) -> None:
        self.events = events
        self.anchors: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        self.count = 0
        """Values seen so far, aliases expanded."""
        self.alias_values = 0
        """Values added by aliases so far."""
        self.depth = 0
        self.deepest = 0
        self.anchor_size: dict[str, tuple[int, int]] = {}
        """Complete anchors: (expanded value count, height)."""
        self.value: Any = None
        """The first document's value (set by `_parse`)."""
        self.found = False
        """Whether the stream has a document (set by `_parse`)."""

    def _next(self) -> Any:
        return next(self.events)

    def document(self) -> tuple[Any, bool]:
        """Return (value, found) for the first document of the stream."""
        for ev in self.events:
            name = type(ev).__name__
            if name == "DocumentStartEvent":
                value = self._node(self._next(), "")
                return value, True
            if name == "StreamEndEvent":
                break
        return None, False

    def rest(self) -> None:
        """Parse the stream after the first document: a second document is an error."""
        for ev in self.events:
            if type(ev).__name__ == "DocumentStartEvent":
                line = ev.start_mark.line + 1
                raise _YamlFail(
                    f"yaml: line {line}: a second YAML document", line, "keep one document"
                )

    def _node(self, ev: Any, ptr: str) -> Any:
        name = type(ev).__name__
        line = ev.start_mark.line + 1
        self.lines.setdefault(ptr, line)
        if name == "AliasEvent":
            return self._alias(ev.anchor, line)
        anchor = getattr(ev, "anchor", None)
        if not anchor:
            return self._counted(ev, name, ptr, line)
        # Measure the anchored value (expanded count and height) for its aliases.
        start_count, saved_deepest = self.count, self.deepest
        self.deepest = self.depth
        self.anchor_size.pop(anchor, None)  # a redefined anchor is incomplete until it ends
        value = self._counted(ev, name, ptr, line)
        self.anchor_size[anchor] = (self.count - start_count, self.deepest - self.depth)
        self.deepest = max(saved_deepest, self.deepest)
        return value

    def _alias(self, anchor: str, line: int) -> Any:
        if anchor not in self.anchors:
            raise _YamlFail(f'yaml: line {line}: unknown anchor "{anchor}" referenced', line)
        if anchor not in self.anchor_size:
            raise _YamlFail(
                f'yaml: line {line}: anchor "{anchor}" value contains itself',
                line,
                "an alias cannot refer to the value it is part of",
            )
        size, height = self.anchor_size[anchor]
        self.count += size
        self.alias_values += size
        if self.alias_values > MAX_ALIAS_VALUES:
            raise _YamlFail(
                f"yaml: line {line}: document contains excessive aliasing (aliases would expand "
                f"to over {MAX_ALIAS_VALUES} values)",
                line,
                "write the values out, or use fewer nested aliases",
            )
        self._check_depth(self.depth + height, line)
        self.deepest = max(self.deepest, self.depth + height)
        return self.anchors[anchor]

    @staticmethod
    def _check_depth(depth: int, line: int) -> None:
        if depth > MAX_DEPTH:
            raise _YamlFail(
                f"yaml: line {line}: document is nested too deeply (over {MAX_DEPTH} levels)",
                line,
                "flatten the document",
            )

    def _counted(self, ev: Any, name: str, ptr: str, line: int) -> Any:
        self.count += 1
        if name in ("SequenceStartEvent", "MappingStartEvent"):
            self.depth += 1
            self._check_depth(self.depth, line)
            self.deepest = max(self.deepest, self.depth)
            try:
                return self._build(ev, name, ptr, line)
            finally:
                self.depth -= 1
        return self._build(ev, name, ptr, line)

    def _build(self, ev: Any, name: str, ptr: str, line: int) -> Any:
        if name == "ScalarEvent":
            value = self._scalar(ev, line)
        elif name == "SequenceStartEvent":
            value = []
            if ev.anchor:
                self.anchors[ev.anchor] = value
            while True:
                child = self._next()
                if type(child).__name__ == "SequenceEndEvent":
                    break
                value.append(self._node(child, pointer_join(ptr, len(value))))
            return value
        elif name == "MappingStartEvent":
            value = {}
            if ev.anchor:
                self.anchors[ev.anchor] = value
            self._mapping(value, ptr)
            return value
        else:  # pragma: no cover - the parser only yields node events here
            raise _YamlFail(f"yaml: line {line}: unexpected {name}", line)
        if ev.anchor:
            self.anchors[ev.anchor] = value
        return value

    def _mapping(self, out: dict[str, Any], ptr: str) -> None:
        key_lines: dict[str, int] = {}
        merged: list[dict[str, Any]] = []
        while True:
            kev = self._next()
            if type(kev).__name__ == "MappingEndEvent":
                break
            kline = kev.start_mark.line + 1
            is_merge = (
                type(kev).__name__ == "ScalarEvent"
                and kev.value == "<<"
                and kev.style is None
                and kev.tag is None
            )
            if is_merge:
                mv = self._node(self._next(), pointer_join(ptr, "<<"))
                self.lines.pop(pointer_join(ptr, "<<"), None)
                sources = mv if isinstance(mv, list) else [mv]
                for src in sources:
                    if not isinstance(src, dict):
                        raise _YamlFail(
                            f"yaml: line {kline}: map merge requires map or sequence of maps "
                            "as the value",
                            kline,
                        )
                    merged.append(src)
                continue
            key = self._node(kev, f"{ptr}\x00key")
            self.lines.pop(f"{ptr}\x00key", None)
            if not isinstance(key, str):
                raise _YamlFail(
                    "not JSON-representable (non-string mapping key?): "
                    f"key {_describe_key(key)} at line {kline} is not a string",
                    kline,
                    "quote the key so it is a string",
                )
            if key in key_lines:
                raise _YamlFail(
                    f'yaml: line {kline}: mapping key "{key}" already defined at line '
                    f"{key_lines[key]}",
                    kline,
                    "remove or rename one of the duplicate keys",
                )
            key_lines[key] = kline
            out[key] = self._node(self._next(), pointer_join(ptr, key))
        for src in merged:
            for k, v in src.items():
                if k not in key_lines:
                    out.setdefault(k, v)

    def _scalar(self, ev: Any, line: int) -> Any:
        value: str = ev.value
        tag = ev.tag
        if tag is None:
            if ev.style is not None:  # quoted or block scalar
                return value
            return self._finite(resolve_plain(value), value, line)
        if tag in (STR_TAG, TIMESTAMP_TAG) or not tag.startswith(TAG):
            return value
        if tag == NULL_TAG:
            return None
        resolved = resolve_plain(value)
        short = "!!" + tag[len(TAG) :]
        if tag == BOOL_TAG and isinstance(resolved, bool):
            return resolved
        if tag == INT_TAG and isinstance(resolved, int) and not isinstance(resolved, bool):
            return resolved
        if (
            tag == FLOAT_TAG
            and isinstance(resolved, int | float)
            and not isinstance(resolved, bool)
        ):
            return self._finite(float(resolved), value, line)
        if tag in (BOOL_TAG, INT_TAG, FLOAT_TAG):
            raise _YamlFail(
                f"yaml: line {line}: cannot decode {_short_kind(resolved)} `{value}` as a {short}",
                line,
            )
        return value

    @staticmethod
    def _finite(v: Any, text: str, line: int) -> Any:
        if isinstance(v, float):
            if math.isnan(v) or math.isinf(v):
                raise _YamlFail(
                    f"not JSON-representable: {text} (line {line}) is not a finite number",
                    line,
                    "JSON has no infinity or NaN; quote it if you meant a string",
                )
            return json_number(v)
        return v


def _short_kind(v: Any) -> str:
    if v is None:
        return "!!null"
    if isinstance(v, bool):
        return "!!bool"
    if isinstance(v, int):
        return "!!int"
    if isinstance(v, float):
        return "!!float"
    return "!!str"


def _describe_key(key: Any) -> str:
    if isinstance(key, dict | list):
        return "of type " + ("mapping" if isinstance(key, dict) else "sequence")
    return json.dumps(key)


def _tab_separator(text: str, e: Any) -> int | None:
    """Index of a tab the parser refused where yaml.v3 accepts it as separation space, else None."""
    mark = e.problem_mark
    if mark is None or "'\\t'" not in str(e.problem or ""):
        return None
    idx = mark.index
    if not (0 <= idx < len(text)) or text[idx] != "\t":
        return None
    line_start = text.rfind("\n", 0, idx) + 1
    # A tab in indentation is an error in both; after content on the line it only separates.
    return idx if text[line_start:idx].strip(" \t") else None


def _events(loader: Any) -> Iterator[Any]:
    """The parser's events (plain scalars get style None from both parsers; LibYAML says '')."""
    try:
        while loader.check_event():
            ev = loader.get_event()
            if type(ev).__name__ == "ScalarEvent" and not ev.style:
                ev.style = None
            yield ev
    finally:
        loader.dispose()


def _parsers() -> tuple[Any, Any]:
    """(the parser for events, the parser for error messages).

    Events come from LibYAML's `CParser` when PyYAML was built with it (else from the
    pure-Python parser). A document that does not parse is parsed again by the pure-Python
    parser, whose messages name what it found (`expected <block end>, but found '<block
    mapping start>'`, `found character '\\t' that cannot start any token`) where LibYAML's are
    terser; the tab rule below also needs the character.
    """
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader


def _parse(loader_class: Any, text: str, whole: bool) -> _YamlBuilder:
    builder = _YamlBuilder(_events(loader_class(text)))
    builder.value, builder.found = builder.document()
    if whole:
        builder.rest()
    return builder


def _pure_error(loader_class: Any, text: str, whole: bool) -> Any:
    """The pure-Python parser's `MarkedYAMLError` for `text`, or None when it has none."""
    from yaml import MarkedYAMLError

    try:
        _parse(loader_class, text, whole)
    except MarkedYAMLError as e:
        return e
    except _YamlFail:
        return None
    return None


# The YAML parser's own words → what the author should look at, in plain words.
_PLAIN_PROBLEMS: tuple[tuple[str, str], ...] = (
    (
        "expected <block end>, but found '<block mapping start>'",
        "this line is indented deeper than the line above, so it cannot continue that entry; "
        "line it up with the keys of its entry (or start a new `- ` item)",
    ),
    (
        "expected <block end>, but found",
        "this line does not line up with the entries before it; check its indentation",
    ),
    (
        "mapping values are not allowed here",
        "a `key: value` appears where a plain value was expected: indent it under a key, or "
        "quote a value that contains `: `",
    ),
    (
        "found unexpected end of stream",
        "the file ends inside a quoted string or a bracket: close the quote or bracket",
    ),
    (
        "could not find expected ':'",
        "a key has no `:` after it, or a quoted string is not closed",
    ),
    (
        "did not find expected key",
        "this line does not line up with the keys of its mapping; check its indentation",
    ),
    (
        "did not find expected '-' indicator",
        "a list item here lacks its `- `, or is indented differently from the others",
    ),
    (
        "found character '\\t' that cannot start any token",
        "a tab is used for indentation: YAML indents with spaces only",
    ),
)


def plain_yaml_hint(problem: str, column: int | None) -> str | None:
    """What the parser's `problem` means for the author, with the column; None when unknown."""
    for needle, meaning in _PLAIN_PROBLEMS:
        if needle in problem:
            at = f"at column {column}: " if column else ""
            return at + meaning
    return None


def decode_yaml(text: str, path: Path, *, whole: bool = False) -> Decoded:
    """Decode YAML `text` (read from `path`) like yaml.v3; `SpecError` on any problem.

    Like yaml.v3 only the first document is read; `whole=True` also parses the rest of the
    stream, so text after it that is not YAML (or a second document) is an error too.
    """
    from yaml import MarkedYAMLError, YAMLError

    fast, pure = _parsers()
    if text.startswith("\ufeff"):
        text = text[1:]
    hint = "fix the YAML syntax (indentation, quoting, `key: value` pairs)"
    for _attempt in range(_TAB_RETRIES + 1):
        builder: _YamlBuilder | None = None
        try:
            builder = _parse(fast, text, whole)
        except _YamlFail as e:
            raise SpecError(e.message, path=path, line=e.line, hint=e.hint or hint) from None
        except MarkedYAMLError as e_fast:
            err = (_pure_error(pure, text, whole) if pure is not fast else None) or e_fast
            # yaml.v3 accepts `key:<TAB>value`; PyYAML and LibYAML do not. Such a tab only
            # separates tokens, so replacing it by a space keeps the meaning (and every offset).
            tab = _tab_separator(text, err)
            if tab is not None and _attempt < _TAB_RETRIES:
                text = text[:tab] + " " + text[tab + 1 :]
                continue
            mark = err.problem_mark or err.context_mark
            line = mark.line + 1 if mark is not None else None
            problem = err.problem or err.context or "syntax error"
            if whole and "document start" in problem and _first_document_ends(text, line):
                # YAML 1.1 parsers want `---` before a second document; yaml.v3's reading of
                # the stream (and ours) is that there is one.
                raise SpecError(
                    f"yaml: line {line}: a second YAML document",
                    path=path,
                    line=line,
                    hint="keep one document",
                ) from None
            if "maximum nesting depth" in problem:  # LibYAML's own limit (1,000), beyond ours
                raise SpecError(
                    f"yaml: line {line}: document is nested too deeply (over {MAX_DEPTH} levels)",
                    path=path,
                    line=line,
                    hint="flatten the document",
                ) from None
            where = f"line {line}: " if line else ""
            column = mark.column + 1 if mark is not None else None
            raise SpecError(
                f"yaml: {where}{problem}",
                path=path,
                line=line,
                hint=plain_yaml_hint(problem, column) or hint,
            ) from None
        except YAMLError as e:
            raise SpecError(f"yaml: {e}", path=path, hint=hint) from None
        except StopIteration:  # pragma: no cover - a well-formed event stream always ends
            raise SpecError("yaml: unexpected end of stream", path=path, hint=hint) from None
        if not builder.found:
            raise SpecError(
                "file has no content (only comments)", path=path, hint="write the YAML document"
            )
        return Decoded(builder.value, builder.lines.get)
    raise AssertionError("unreachable")  # pragma: no cover


def _first_document_ends(text: str, line: int | None) -> bool:
    """Whether a `...` document end marker comes before `line` (so what follows is a document)."""
    if line is None:
        return False
    return any(ln.rstrip() == "..." for ln in text.split("\n")[: line - 1])


_TAB_RETRIES = 32
