"""Go standard-library behaviours that evolve's file formats depend on, restated in Python.

Owns: half-away-from-zero rounding (`round1`, `round6`), Go `SplitLines` and `strings.TrimSpace`,
`filepath.Clean`/`filepath.Join` semantics (`go_clean`, `go_join`), `fmt.Sprint` of a string
slice (`go_str_list`), UTF-8 byte truncation (`truncate_bytes`, `tail_bytes`), ANSI/ECMA-48
escape stripping (`strip_ansi`) and Go's shortest float formatting (`go_float`).

Guarantees: every function is pure and total (no exceptions on any `str`/`float` input, except
`go_float` on NaN/infinity, which Go's JSON encoder rejects too). Never does: I/O.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Iterable
from decimal import Decimal

__all__ = [
    "go_clean",
    "go_float",
    "go_join",
    "go_str_list",
    "round1",
    "round6",
    "round_half_away",
    "split_lines",
    "strip_ansi",
    "tail_bytes",
    "trim_space",
    "truncate_bytes",
]


def round_half_away(y: float) -> float:
    """Go `math.Round`: round to the nearest integer, halves away from zero, on the exact value."""
    a = -y if y < 0 else y
    if a != a or a == math.inf:  # NaN, ±infinity
        return y
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1
    return math.copysign(r, y)


def round1(x: float) -> float:
    """`Round(x*10)/10`: one decimal place, used for seconds."""
    return round_half_away(x * 10) / 10


def round6(x: float) -> float:
    """`Round(x*1e6)/1e6`: six decimal places, used for rates and USD."""
    return round_half_away(x * 1e6) / 1e6


def split_lines(s: str) -> list[str]:
    r"""Go `SplitLines`: `\r\n` and lone `\r` become `\n`, one trailing `\n` dropped, split on `\n`.

    The empty string has zero lines. Unlike `str.splitlines`, `\v`, `\f`, U+2028 etc. do not split.
    """
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    if s.endswith("\n"):
        s = s[:-1]
    if s == "":
        return []
    return s.split("\n")


# Unicode White_Space, which is what Go's unicode.IsSpace (and so strings.TrimSpace) uses.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def trim_space(s: str) -> str:
    """Go `strings.TrimSpace`: strip Unicode White_Space (not `\\x1c-\\x1f`, not U+FEFF)."""
    return s.strip(_GO_SPACE)


def go_clean(p: str) -> str:
    """Go `path.Clean` (= `filepath.Clean` on POSIX): lexical `.`/`..`/`//` cleanup, `""` → `.`."""
    out = posixpath.normpath(p)
    if out.startswith("//"):  # POSIX keeps a leading "//"; Go's Clean does not
        out = "/" + out.lstrip("/")
    return out


def go_str_list(items: Iterable[str]) -> str:
    """Go `fmt.Sprint` of a `[]string`: `[a b c]` (space-separated, nothing quoted)."""
    return "[" + " ".join(items) + "]"


def go_join(base: str, p: str) -> str:
    """Go `filepath.Join(base, p)` on POSIX: joins and cleans, and never discards `base`.

    `go_join("/ws", "/etc/x") == "/ws/etc/x"`; `..` segments are resolved lexically, so a caller
    that must keep the result inside `base` still has to check it.
    """
    parts = [x for x in (base, p) if x != ""]
    if not parts:
        return ""
    return go_clean("/".join(parts))


def truncate_bytes(s: str, n: int) -> str:
    """Keep the first `n` UTF-8 bytes of `s` (like Go slicing a string; may split a code point).

    A split code point is rendered as U+FFFD so the result stays a valid `str`.
    """
    b = s.encode("utf-8", "surrogatepass")
    if len(b) <= n:
        return s
    return b[: max(n, 0)].decode("utf-8", "replace")


def tail_bytes(s: str, n: int) -> str:
    """Keep the last `n` UTF-8 bytes of `s` (may split a code point; rendered as U+FFFD)."""
    b = s.encode("utf-8", "surrogatepass")
    if len(b) <= n:
        return s
    if n <= 0:
        return ""
    return b[len(b) - n :].decode("utf-8", "replace")


# ECMA-48 control sequences, in both 7-bit (ESC-prefixed) and 8-bit C1 forms:
# - CSI: ESC [ / 0x9b, parameter bytes 0x30-0x3f, intermediates 0x20-0x2f, final 0x40-0x7e;
# - OSC / DCS / SOS / PM / APC: ESC ] P X ^ _ (or 0x9d 0x90 0x98 0x9e 0x9f) up to ST (ESC \ or 0x9c)
#   or, for OSC, BEL; an unterminated string runs to the end of the text;
# - other escape sequences: ESC, intermediates 0x20-0x2f, final 0x30-0x7e;
# - remaining lone C1 controls and a trailing lone ESC.
_ANSI_RE = re.compile(
    r"""
    (?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?
  | (?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|\Z)
  | \x1b[\x20-\x2f]*[\x30-\x7e]
  | \x1b
  | [\x80-\x9f]
    """,
    re.VERBOSE | re.DOTALL,
)


_ANSI_START = re.compile("[\x1b\x80-\x9f]")


def strip_ansi(s: str) -> str:
    """Remove ANSI/ECMA-48 escape sequences (CSI, OSC, DCS/SOS/PM/APC, single ESC, C1 controls).

    Approximates `charmbracelet/x/ansi.Strip` (exact parity is not promised by evolve's spec either).
    Printable text, tabs and newlines are kept.
    """
    if _ANSI_START.search(s) is None:
        return s
    return _ANSI_RE.sub("", s)


def go_float(x: float) -> str:
    """Format `x` like Go's `encoding/json` does for a float64.

    Shortest round-trip digits; positional for 1e-6 <= |x| < 1e21, otherwise exponent form with
    Go's exponent cleanup (`1e-07` → `1e-7`, `1e+21` stays). Integral values print without `.0`;
    negative zero prints `-0`. NaN/Inf raise `ValueError` (Go refuses to marshal them).
    """
    if 1e-4 <= abs(x) < 1e16:
        # `repr` is positional here (its exponent form starts below 1e-4 and at 1e16) with the
        # same shortest digits: only an integral value's `.0` differs from Go.
        r = repr(x)
        return r[:-2] if r.endswith(".0") else r
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"unsupported float value: {x!r}")
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    a = abs(x)
    if a < 1e-6 or a >= 1e21:
        r = repr(x)  # shortest digits; Python uses e.g. '1e-07', '1.5e+21'
        mant, _, exp = r.partition("e")
        if not exp:  # repr gave positional form (cannot happen in this range, but be safe)
            mant, exp = f"{x:e}".split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").lstrip("0") or "0"
        if sign == "-" and len(digits) == 1:
            # Go: "clean up e-09 to e-9"; positive exponents are never below 21 here.
            return f"{mant}e-{digits}"
        return f"{mant}e{sign}{digits.zfill(2)}"
    text = format(Decimal(repr(x)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
