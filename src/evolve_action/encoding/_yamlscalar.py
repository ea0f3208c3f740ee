"""yaml.v3's resolution of plain YAML scalars, shared by the YAML decoder and encoder.

Owns: the YAML 1.2 core-schema tags as yaml.v3 names them, `resolve_plain` (the value yaml.v3
gives an untagged plain scalar: `true`/`false` only as booleans, timestamps kept as strings,
`0x`/`0o`/`0b` and `_` in numbers), `is_timestamp`, `go_parse_int` and `json_number` (what a float
becomes after Go `json.Marshal` and an integer-preserving decode).

Guarantees: pure and total on any `str`; the decoder (`_yaml`) and the encoder (`_encode`)
agree on which strings need quoting because both ask this module. Never does: I/O, parsing of
YAML documents (see `_yaml`).
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from evolve_action.encoding._gocompat import go_float

__all__ = [
    "BOOL_TAG",
    "FLOAT_TAG",
    "INT_TAG",
    "NULL_TAG",
    "STR_TAG",
    "TAG",
    "TIMESTAMP_TAG",
    "go_parse_int",
    "is_timestamp",
    "json_number",
    "resolve_plain",
]

TAG = "tag:yaml.org,2002:"
"""The prefix of the YAML core-schema tags."""
STR_TAG, INT_TAG, FLOAT_TAG, BOOL_TAG, NULL_TAG, TIMESTAMP_TAG = (
    f"{TAG}str",
    f"{TAG}int",
    f"{TAG}float",
    f"{TAG}bool",
    f"{TAG}null",
    f"{TAG}timestamp",
)
_RESOLVE_MAP: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")
_TS_DATE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")
_TS_TIME = re.compile(
    r"([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?\Z"
)


def is_timestamp(s: str) -> bool:
    """yaml.v3 `parseTimestamp`: date, or date + `T`/`t`/space + time (zone only after T/t)."""
    m = _TS_DATE.match(s)
    if m is None:
        return False
    try:
        datetime(int(m[1]), int(m[2]), int(m[3]))  # noqa: DTZ001 - range check only
    except ValueError:
        return False
    rest = s[m.end() :]
    if rest == "":
        return True
    sep, rest = rest[0], rest[1:]
    if sep not in "Tt ":
        return False
    t = _TS_TIME.match(rest)
    # "2006-1-2T15:4:5.999999999Z07:00" needs a zone; "2006-1-2 15:4:5.999999999" has none.
    if t is None or (sep == " ") == bool(t[5]):
        return False
    if t[5] and t[5] != "Z":
        hh, mm = int(t[5][1:3]), int(t[5][4:6])
        if hh > 23 or mm > 59:
            return False
    return int(t[1]) < 24 and int(t[2]) < 60 and int(t[3]) < 60


_GO_INT = re.compile(
    r"(?P<sign>[-+]?)(?:(?P<hex>0[xX][0-9a-fA-F]+)|(?P<oct>0[oO][0-7]+)|(?P<bin>0[bB][01]+)"
    r"|(?P<old>0[0-7]+)|(?P<dec>[0-9]+))\Z"
)


def go_parse_int(s: str) -> int | None:
    """Go `strconv.ParseInt(s, 0, 64)`, falling back to `ParseUint` (unsigned, no sign)."""
    m = _GO_INT.match(s)
    if m is None:
        return None
    if m["hex"]:
        v = int(m["hex"][2:], 16)
    elif m["oct"]:
        v = int(m["oct"][2:], 8)
    elif m["bin"]:
        v = int(m["bin"][2:], 2)
    elif m["old"]:
        v = int(m["old"][1:], 8)
    else:
        v = int(m["dec"])
    if m["sign"] == "-":
        v = -v
    if -(2**63) <= v < 2**63:
        return v
    if m["sign"] == "" and v < 2**64:
        return v
    return None


_NOT_RESOLVED = object()


def resolve_plain(s: str) -> Any:
    """yaml.v3 `resolve("", s)`: the value of an untagged plain scalar (str when nothing else)."""
    if s in _RESOLVE_MAP:
        return _RESOLVE_MAP[s]
    c = s[:1]
    if c == ".":
        return float(s) if _DOT_FLOAT.match(s) else s
    if c in "+-" or (c.isdigit() and c.isascii()):
        if is_timestamp(s):
            return s
        plain = s.replace("_", "")
        iv = go_parse_int(plain)
        if iv is not None:
            return iv
        if _YAML_STYLE_FLOAT.match(plain):
            f = float(plain)
            if not math.isinf(f):
                return f
    return s


def json_number(v: float) -> int | float:
    """What a float becomes after Go `json.Marshal` and an integer-preserving decode."""
    s = go_float(v)
    if "." in s or "e" in s:
        return v
    return int(s)
