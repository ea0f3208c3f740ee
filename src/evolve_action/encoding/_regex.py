"""Go `regexp` (RE2) compilation through `google-re2`: the one place patterns are compiled.

Owns: `compile_re2` and `Re2Error` (RE2's own message, plus `go_message`: the same problem in Go's
`regexp/syntax` wording, so validation messages read like evolve's). Guarantees: google-re2 never
logs parse errors to stderr (its `log_errors` option is off); lookaround and backreferences are
rejected exactly as Go rejects them. Never does: I/O.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

import re2  # google-re2: Go regexp (RE2) syntax and semantics

__all__ = ["Re2Error", "compile_re2"]

# RE2 (C++) error texts → Go regexp/syntax error codes, so messages read like evolve's.
_RE2_TO_GO = {
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "bad repetition operator": "invalid nested repetition operator",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition argument": "invalid repeat count",
}


class Re2Error(ValueError):
    """A pattern RE2 rejects; `str(error)` is RE2's message."""

    @property
    def go_message(self) -> str:
        """Go's wording: `error parsing regexp: <code>: `<argument>``."""
        code, sep, arg = str(self).partition(": ")
        go_code = _RE2_TO_GO.get(code, code)
        if sep:
            return f"error parsing regexp: {go_code}: `{arg}`"
        return f"error parsing regexp: {go_code}"


@functools.cache
def _options() -> Any:
    opts = re2.Options()
    opts.log_errors = False  # google-re2 prints parse errors to stderr otherwise
    return opts


def compile_re2(pattern: str) -> Any:
    """Compile an RE2 pattern (Go `regexp` syntax); raises `Re2Error` with RE2's message."""
    try:
        return re2.compile(pattern, _options())
    except Exception as exc:  # re2.error; the binding raises its own Error type
        raise Re2Error(_text(exc)) from None


def _text(exc: Exception) -> str:
    msg: Any = exc.args[0] if exc.args else str(exc)
    if isinstance(msg, bytes):
        return msg.decode("utf-8", "replace")
    text = str(msg)
    if text.startswith(("b'", 'b"')):
        try:
            raw = ast.literal_eval(text)
            return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        except (ValueError, SyntaxError):
            pass
    return text
