"""Go-compatible, deterministic encoders: JSON (indented and compact) and yaml.v3-style YAML.

Owns: `encode_json` (Go `json.MarshalIndent(v, "", "  ")` + newline), `encode_json_compact` (Go
`json.Marshal`), `go_json_string` (Go's JSON string escaping: HTML characters and U+2028/U+2029
escaped, invalid UTF-8 as U+FFFD), `encode_yaml` (yaml.v3 Encoder, indent 2, natural key order),
`encode_document` (json / jsonc / yaml as evolve writes them, with the header comment; optionally
with every string mapped on the way, as the report neutralises untrusted text) and `sorted_map`
(Go map key order).

Guarantees: output is a pure function of the value: byte-identical to what evolve writes for the
same JSON data model (dict insertion order = struct field order). Values outside the data model
raise `TypeError`/`ValueError`. Never does: I/O (see `_fsio`), decoding (see `_decode`).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any, NamedTuple

from evolve_action.encoding._document import Format
from evolve_action.encoding._gocompat import go_float
from evolve_action.encoding._yamlscalar import is_timestamp, json_number, resolve_plain

__all__ = [
    "encode_document",
    "encode_json",
    "encode_json_compact",
    "encode_yaml",
    "go_json_string",
    "sorted_map",
]


# =============================================================================================
# JSON encoding (Go encoding/json, MarshalIndent "", "  ")


def sorted_map(d: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a map-backed object with keys sorted by bytes (Go `map` encoding order)."""
    return {k: d[k] for k in sorted(d, key=lambda s: s.encode("utf-8", "surrogatepass"))}


_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_GO_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")
_json_str = encode_basestring  # `json.dumps(s, ensure_ascii=False)` of a str, without its set-up
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def go_json_string(s: str) -> str:
    """A Go `encoding/json` string literal: HTML-safe escapes, raw non-ASCII, U+FFFD for surrogates.

    `<`, `>`, `&`, U+2028 and U+2029 become `\\u003c`-style escapes; control characters are escaped
    as Go writes them (`\\n`, `\\u001b`); a lone surrogate (invalid UTF-8 on the Go side) is U+FFFD.
    """
    if s.isascii():  # no surrogate, no U+2028/U+2029: only the HTML characters
        out = _json_str(s)
        if "<" in out or ">" in out or "&" in out:
            out = _GO_ESCAPE_RE.sub(lambda m: _GO_ESCAPES[m.group()], out)
        return out
    if _SURROGATE_RE.search(s):  # invalid UTF-8 on the Go side: replaced by U+FFFD
        s = _SURROGATE_RE.sub("\ufffd", s)
    out = _json_str(s)
    if _GO_ESCAPE_RE.search(out):
        out = _GO_ESCAPE_RE.sub(lambda m: _GO_ESCAPES[m.group()], out)
    return out


def _scalar_json(v: Any) -> str | None:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return go_json_string(v)
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return go_float(v)
    return None


def _as_model(v: Any) -> Any:
    to_json = getattr(v, "to_json", None)
    if callable(to_json) and not isinstance(v, str | bytes | dict | list | tuple):
        return to_json()
    return v


class _Strings:
    """Each distinct string's JSON text, escaped once; with `text`, of the string it maps to."""

    __slots__ = ("done", "moved", "text")

    def __init__(self, text: Callable[[str], str] | None) -> None:
        self.text = text
        self.done: dict[str, str] = {}
        self.moved: set[str] = set()
        """Strings `text` changes (as object keys they may merge with another key)."""

    def encode(self, s: str) -> str:
        done = self.done.get(s)
        if done is None:
            mapped = s if self.text is None else self.text(s)
            if mapped != s:
                self.moved.add(s)
            done = self.done[s] = go_json_string(mapped)
        return done


def _leaf(v: Any, strings: _Strings) -> str | None:
    """The JSON text of a plain scalar (`str`, `int`, `float`, `bool`, None), else None.

    Exactly what `_scalar_json` gives for these types (strings mapped first, see `_Strings`).
    """
    t = type(v)
    if t is str:
        return strings.done.get(v) or strings.encode(v)
    if t is int:
        return int.__repr__(v)
    if t is float:
        return go_float(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    return None


def _write_json(v: Any, depth: int, out: list[str], strings: _Strings) -> None:
    t = type(v)
    if t is not dict and t is not list:
        s = _leaf(v, strings)
        if s is not None:
            out.append(s)
            return
        v = _as_model(v)
        if isinstance(v, str):
            out.append(strings.encode(v))
            return
        s = _scalar_json(v)
        if s is not None:
            out.append(s)
            return
        t = type(v)
    if t is dict or (t is not list and isinstance(v, Mapping)):
        _write_object(v, depth, out, strings)
        return
    if isinstance(v, list | tuple):
        if not v:
            out.append("[]")
            return
        pad = "\n" + "  " * (depth + 1)
        lead = "[" + pad
        for item in v:
            s = _leaf(item, strings)
            if s is None:
                out.append(lead)
                _write_json(item, depth + 1, out, strings)
            else:
                out.append(lead + s)
            lead = "," + pad
        out.append("\n" + "  " * depth + "]")
        return
    raise TypeError(f"cannot encode {type(v).__name__} as JSON")


def _write_object(v: Mapping[Any, Any], depth: int, out: list[str], strings: _Strings) -> None:
    if not v:
        out.append("{}")
        return
    start = len(out)
    done = strings.done
    moved = strings.moved  # grows in place as strings are mapped
    pad = "\n" + "  " * (depth + 1)
    lead = "{" + pad
    for k, item in v.items():
        ks = done.get(k)
        if ks is None:
            if not isinstance(k, str):
                raise TypeError(f"JSON object keys must be strings, not {type(k).__name__}")
            ks = strings.encode(k)
        if moved and k in moved:
            # A key the mapping changes may now equal another key: start over, merged.
            del out[start:]
            _write_merged(v, depth, out, strings)
            return
        # The plain scalars inline (as `_leaf` writes them): most values of a document.
        ti = type(item)
        if ti is int:
            out.append(f"{lead}{ks}: {int.__repr__(item)}")
        elif ti is float:
            out.append(f"{lead}{ks}: {go_float(item)}")
        elif ti is str:
            out.append(f"{lead}{ks}: {done.get(item) or strings.encode(item)}")
        elif (s := _leaf(item, strings)) is not None:
            out.append(f"{lead}{ks}: {s}")
        else:
            out.append(f"{lead}{ks}: ")
            _write_json(item, depth + 1, out, strings)
        lead = "," + pad
    out.append("\n" + "  " * depth + "}")


def _write_merged(v: Mapping[str, Any], depth: int, out: list[str], strings: _Strings) -> None:
    """An object whose keys the mapping changes, as the dict `{text(k): x for k, x in v.items()}`
    would be written (keys that became equal: the first one's place, the last one's value)."""
    assert strings.text is not None
    merged: dict[str, Any] = {}
    for k, item in v.items():
        merged[strings.text(k)] = item
    pad = "\n" + "  " * (depth + 1)
    lead = "{" + pad
    for k, item in merged.items():
        out.append(f"{lead}{go_json_string(k)}: ")
        _write_json(item, depth + 1, out, strings)
        lead = "," + pad
    out.append("\n" + "  " * depth + "}")


def encode_json(value: Any, *, text: Callable[[str], str] | None = None) -> str:
    """Go `json.MarshalIndent(value, "", "  ")` + `\\n`; dict insertion order is the field order.

    Map-backed objects must be passed through `sorted_map` by the caller. Objects with a
    `to_json()` method are encoded as its result. With `text`, every string, object keys
    included, is written as `text` maps it (keys that map to the same string merge as in a dict
    built from the mapped keys). Raises `TypeError`/`ValueError` for values outside the JSON
    data model (non-string keys, NaN, infinity).
    """
    out: list[str] = []
    _write_json(value, 0, out, _Strings(text))
    out.append("\n")
    return "".join(out)


def encode_json_compact(value: Any) -> str:
    """Go `json.Marshal` bytes (as text) of a JSON data-model value: compact, HTML-escaped.

    Dict insertion order is the field order; strings as `go_json_string`, floats in Go's shortest
    form. Raises `TypeError` for values outside the JSON data model.
    """
    v = _as_model(value)
    s = _scalar_json(v)
    if s is not None:
        return s
    if isinstance(v, Mapping):
        items = (f"{go_json_string(str(k))}:{encode_json_compact(x)}" for k, x in v.items())
        return "{" + ",".join(items) + "}"
    if isinstance(v, list | tuple):
        return "[" + ",".join(encode_json_compact(x) for x in v) + "]"
    raise TypeError(f"not a JSON value: {type(v).__name__}")


# =============================================================================================
# YAML encoding (yaml.v3 Encoder with SetIndent(2), fed the JSON data model)


def _yaml_key_less(a: str, b: str) -> bool:
    """yaml.v3 `keyList.Less` for two string keys ("natural" order)."""
    ar, br = a, b
    digits = False
    for i in range(min(len(ar), len(br))):
        if ar[i] == br[i]:
            digits = ar[i].isdigit() and unicodedata.category(ar[i]) == "Nd"
            continue
        al, bl = _is_letter(ar[i]), _is_letter(br[i])
        if al and bl:
            return ar[i] < br[i]
        if al or bl:
            return al if digits else bl
        an = bn = 0
        if ar[i] == "0" or br[i] == "0":
            for j in range(i - 1, -1, -1):
                if not _is_digit(ar[j]):
                    break
                if ar[j] != "0":
                    an = bn = 1
                    break
        ai = i
        while ai < len(ar) and _is_digit(ar[ai]):
            an = an * 10 + (ord(ar[ai]) - 48)
            ai += 1
        bi = i
        while bi < len(br) and _is_digit(br[bi]):
            bn = bn * 10 + (ord(br[bi]) - 48)
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ar[i] < br[i]
    return len(ar) < len(br)


def _is_letter(c: str) -> bool:
    return unicodedata.category(c).startswith("L")


def _is_digit(c: str) -> bool:
    return unicodedata.category(c) == "Nd"


def _yaml_key_cmp(a: str, b: str) -> int:
    if _yaml_key_less(a, b):
        return -1
    if _yaml_key_less(b, a):
        return 1
    return 0


_yaml_sort_key = functools.cmp_to_key(_yaml_key_cmp)

_OLD_BOOLS = frozenset(
    "y Y yes Yes YES on On ON n N no No NO off Off OFF".split()  # noqa: SIM905
)
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")


def _is_printable(c: str) -> bool:
    o = ord(c)
    return (
        o == 0x0A
        or 0x20 <= o <= 0x7E
        or 0xA0 <= o <= 0xD7FF
        or (0xE000 <= o <= 0xFFFD and o != 0xFEFF)
    )


_BREAKS = "\r\n\x85\u2028\u2029"


class _ScalarAnalysis(NamedTuple):
    multiline: bool
    block_plain: bool
    single_quoted: bool
    block: bool


def _analyze(value: str) -> _ScalarAnalysis:
    """libyaml/yaml.v3 `yaml_emitter_analyze_scalar` (block context, unicode output)."""
    if value == "":
        return _ScalarAnalysis(False, True, True, False)
    block_ind = value.startswith(("---", "..."))
    line_breaks = special = tabs = False
    leading_space = leading_break = trailing_space = trailing_break = False
    break_space = space_break = False
    prev_space = prev_break = False
    preceded_ws = True
    n = len(value)
    for i, c in enumerate(value):
        followed_ws = i + 1 >= n or value[i + 1] in " \t"
        if i == 0:
            if c in "#,[]{}&*!|>'\"%@`" or (c in "?:-" and followed_ws):
                block_ind = True
        elif (c == ":" and followed_ws) or (c == "#" and preceded_ws):
            block_ind = True
        if c == "\t":
            tabs = True
        elif not _is_printable(c):
            special = True
        if c == " ":
            if i == 0:
                leading_space = True
            if i == n - 1:
                trailing_space = True
            if prev_break:
                break_space = True
            prev_space, prev_break = True, False
        elif c in _BREAKS:
            line_breaks = True
            if i == 0:
                leading_break = True
            if i == n - 1:
                trailing_break = True
            if prev_space:
                space_break = True
            prev_space, prev_break = False, True
        else:
            prev_space = prev_break = False
        preceded_ws = c in " \t\x00" + _BREAKS
    block_plain = single = block = True
    if leading_space or leading_break or trailing_space or trailing_break:
        block_plain = False
    if trailing_space:
        block = False
    if break_space:
        block_plain = single = False
    if space_break or tabs or special:
        block_plain = single = False
    if space_break or special:
        block = False
    if line_breaks:
        block_plain = False
    if block_ind:
        block_plain = False
    return _ScalarAnalysis(line_breaks, block_plain, single, block)


_DQ_ESCAPES = {
    "\x00": "0",
    "\x07": "a",
    "\x08": "b",
    "\t": "t",
    "\n": "n",
    "\x0b": "v",
    "\x0c": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}


def _double_quoted(s: str) -> str:
    # yaml.v3's is_bom() looks at the start of the value whatever the index, so a value that
    # starts with U+FEFF gets every character escaped.
    bom = s.startswith("\ufeff")
    out = ['"']
    for c in s:
        if bom or not _is_printable(c) or c in _BREAKS or c in '"\\':
            esc = _DQ_ESCAPES.get(c)
            if esc is None:
                o = ord(c)
                esc = f"x{o:02X}" if o <= 0xFF else f"u{o:04X}" if o <= 0xFFFF else f"U{o:08X}"
            out.append("\\" + esc)
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _yaml_string(s: str, indent: int, *, key: bool) -> tuple[str, list[str]]:
    """Render a string: (inline text, extra lines of a literal block)."""
    resolved = resolve_plain(s)
    plain_ok = (
        isinstance(resolved, str)
        and resolved == s
        and not is_timestamp(s)
        and not _BASE60.match(s)
        and s not in _OLD_BOOLS
    )
    a = _analyze(s)
    if "\n" in s and not key:
        style = "literal"
    elif plain_ok:
        style = "plain"
    else:
        style = "double"
    if style == "plain" and not a.block_plain:
        style = "single"
    if style == "single" and not a.single_quoted:
        style = "double"
    if style == "literal" and not a.block:
        style = "double"
    if style == "plain":
        return s, []
    if style == "single":
        return _single_quoted(s, indent), []
    if style == "double":
        return _double_quoted(s), []
    return _literal(s, indent)


def _single_quoted(s: str, indent: int) -> str:
    # Only reached without "\n" (those strings get literal or double-quoted style); a U+2028/
    # U+2029 line break is written raw and the next text is padded to the indent, as yaml.v3 does.
    out = ["'"]
    after_break = False
    for c in s:
        if c in _BREAKS:
            out.append(c)
            after_break = True
            continue
        if after_break:
            out.append(" " * indent)
            after_break = False
        out.append("''" if c == "'" else c)
    out.append("'")
    return "".join(out)


def _literal(s: str, indent: int) -> tuple[str, list[str]]:
    head = "|"
    if s[:1] == " " or s[:1] in _BREAKS:
        head += "2"
    if s[-1:] not in _BREAKS:
        head += "-"
    elif len(s) == 1 or s[-2] in _BREAKS:
        head += "+"
    # Replay yaml_emitter_write_literal_scalar: a break is written as is; a run of text after a
    # break is padded to the indent, and the header line is ended either by the indent written
    # before the first text or by a leading break (so a leading "\n" yields no empty line).
    pad = " " * indent
    text: list[str] = []
    breaks, indention = True, False
    for c in s:
        if c in _BREAKS:
            text.append(c)
            breaks = indention = True
            continue
        if breaks:
            if not indention:
                text.append("\n")
            text.append(pad)
        text.append(c)
        breaks = indention = False
    body = "".join(text)
    body = body[1:] if body.startswith("\n") else body
    if body == "":
        return head, []
    if body.endswith("\n"):
        body = body[:-1]
    return head, body.split("\n")


def _go_g(f: float) -> str:
    """Go `strconv.FormatFloat(f, 'g', -1, 64)`."""
    from decimal import Decimal

    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign, digits_t, exp = Decimal(repr(f)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0")
    assert isinstance(exp, int)
    exp += len("".join(map(str, digits_t))) - len(digits)
    nd = len(digits)
    dp = nd + exp  # position of the decimal point relative to the digit string
    neg = "-" if sign else ""
    x = dp - 1
    if x < -4 or x >= 6:
        mant = digits[0] + ("." + digits[1:] if nd > 1 else "")
        es = "-" if x < 0 else "+"
        return f"{neg}{mant}e{es}{abs(x):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * -dp}{digits}"
    if dp >= nd:
        return f"{neg}{digits}{'0' * (dp - nd)}"
    return f"{neg}{digits[:dp]}.{digits[dp:]}"


class _YamlMemo:
    """One document's caches: each distinct string (at an indent), key set's order, key's form
    and float is worked out once (a rollup repeats its keys and names tens of thousands of times).
    """

    __slots__ = ("floats", "orders", "simple_keys", "strings")

    def __init__(self) -> None:
        self.strings: dict[tuple[str, int, bool], tuple[str, list[str]]] = {}
        self.orders: dict[tuple[Any, ...], list[Any]] = {}
        self.simple_keys: dict[str, bool] = {}
        self.floats: dict[float, str] = {}

    def string(self, s: str, indent: int, *, key: bool) -> tuple[str, list[str]]:
        done = self.strings.get((s, indent, key))
        if done is None:
            done = self.strings[(s, indent, key)] = _yaml_string(s, indent, key=key)
        return done

    def order(self, keys: tuple[Any, ...]) -> list[Any]:
        done = self.orders.get(keys)
        if done is None:
            done = self.orders[keys] = sorted(keys, key=_yaml_sort_key)
        return done

    def simple_key(self, k: str) -> bool:
        done = self.simple_keys.get(k)
        if done is None:
            done = self.simple_keys[k] = not (
                _analyze(k).multiline or len(k.encode("utf-8", "surrogatepass")) > 128
            )
        return done

    def float_text(self, v: float) -> str:
        if not v:  # 0.0 and -0.0 are one key: neither is cached, whatever each prints
            return _yaml_float(v)
        done = self.floats.get(v)
        if done is None:
            done = self.floats[v] = _yaml_float(v)
        return done


def _yaml_float(v: float) -> str:
    n = json_number(v)
    ok = isinstance(n, int) and _INT64_MIN <= n <= _INT64_MAX
    return str(n) if ok else _go_g(v)


def _yaml_scalar(v: Any, indent: int, memo: _YamlMemo) -> tuple[str, list[str]] | None:
    v = _as_model(v)
    if v is None:
        return "null", []
    if v is True:
        return "true", []
    if v is False:
        return "false", []
    if isinstance(v, str):
        return memo.string(v, indent, key=False)
    if isinstance(v, int):
        # evolve decodes JSON integers as int64; larger ones become float64.
        return (str(int(v)) if _INT64_MIN <= v <= _INT64_MAX else _go_g(float(v))), []
    if isinstance(v, float):
        return memo.float_text(v), []
    if isinstance(v, Mapping) and not v:
        return "{}", []
    if isinstance(v, list | tuple) and not v:
        return "[]", []
    return None


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _yaml_block(v: Any, indent: int, out: list[str], first_prefix: str, memo: _YamlMemo) -> None:
    """Emit a non-empty mapping/sequence; its first line starts with `first_prefix`."""
    v = _as_model(v)
    pad = " " * indent
    if isinstance(v, Mapping):
        for n, k in enumerate(memo.order(tuple(v))):
            if not isinstance(k, str):
                raise TypeError(f"YAML mapping keys must be strings, not {type(k).__name__}")
            lead = first_prefix if n == 0 else pad
            if not memo.simple_key(k):
                # Not a simple key: yaml.v3 writes "? key" then ": value", both like list items.
                _yaml_value(k, indent, out, lead + "?", memo, in_seq=True)
                _yaml_value(v[k], indent, out, pad + ":", memo, in_seq=True)
                continue
            ktext, _ = memo.string(k, indent, key=True)
            _yaml_value(v[k], indent, out, lead + ktext + ":", memo)
        return
    for n, item in enumerate(v):
        lead = (first_prefix if n == 0 else pad) + "-"
        _yaml_value(item, indent, out, lead, memo, in_seq=True)


def _yaml_value(
    v: Any, indent: int, out: list[str], lead: str, memo: _YamlMemo, *, in_seq: bool = False
) -> None:
    sc = _yaml_scalar(v, indent + 2, memo)
    if sc is not None:
        text, extra = sc
        out.append(f"{lead} {text}")
        out.extend(extra)
        return
    child = _as_model(v)
    if in_seq:
        # Items share the dash line: "- key: v" / "- - x", continuing at indent + 2.
        _yaml_block(child, indent + 2, out, lead + " ", memo)
        return
    out.append(lead)
    _yaml_block(child, indent + 2, out, " " * (indent + 2), memo)


def encode_yaml(value: Any) -> str:
    """yaml.v3-style encoding (indent 2, keys in natural order) of a JSON data model value.

    Mapping keys are sorted with yaml.v3's natural order (struct order is not kept, as in evolve);
    sequences are indented under their key; strings that would read back as another type are
    double-quoted, strings with line breaks use literal blocks; floats use Go's `%g`.
    """
    out: list[str] = []
    memo = _YamlMemo()
    sc = _yaml_scalar(value, 2, memo)
    if sc is not None:
        text, extra = sc
        out.append(text)
        out.extend(extra)
    else:
        _yaml_block(value, 0, out, "", memo)
    return "\n".join(out) + "\n"


def _map_strings(value: Any, text: Callable[[str], str]) -> Any:
    """A JSON data-model value with every string, object keys included, mapped by `text` (each
    distinct string once; keys that map to the same string merge as in a dict built from them)."""
    memo: dict[str, str] = {}

    def mapped(s: str) -> str:
        done = memo.get(s)
        if done is None:
            done = memo[s] = text(s)
        return done

    def walk(v: Any) -> Any:
        v = _as_model(v)
        if isinstance(v, str):
            return mapped(v)
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        if isinstance(v, Mapping):
            return {mapped(k) if isinstance(k, str) else k: walk(x) for k, x in v.items()}
        return v

    return walk(value)


def encode_document(
    value: Any, fmt: Format, comment: str | None = None, *, text: Callable[[str], str] | None = None
) -> str:
    """Encode for writing: json; jsonc = `// comment` line + json; yaml = `# comment` line + yaml.

    With `text`, every string of `value`, keys included, is written as `text` maps it (see
    `encode_json`); the comment is written as given.
    """
    if fmt == "json":
        return encode_json(value, text=text)
    if fmt == "jsonc":
        return (f"// {comment}\n" if comment else "") + encode_json(value, text=text)
    if fmt == "yaml":
        if text is not None:
            value = _map_strings(value, text)  # (the original can be freed while encoding)
        return (f"# {comment}\n" if comment else "") + encode_yaml(value)
    raise ValueError(f"unknown document format {fmt!r}")
