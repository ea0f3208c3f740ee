"""The one redaction gate: secret values and token shapes become `***` in everything we write or post.

Owns: the process-wide `Redactor` (the secret values the job holds, their encoded forms and the
well-known token shapes), the ways to fill it (`register`, `register_environ`, `is_secret_name`,
`scoped`, `reset`) and to apply it: `redact` (plain text: console lines, Markdown, comment bodies,
workflow commands, outputs, the step summary) and `redact_structured` (the text of a JSON or XML
file: a replacement never cuts an escape sequence in two and, in JSON, touches only string
literals, so the file stays valid). YAML files are redacted value by value by `encoding`'s writer,
which alone can decode and re-encode them.

The rule (docs/action.md, "Secrets in what we write"):
- every registered value of at least `MIN_SECRET_LENGTH` (8) characters is replaced wherever it
  occurs; a shorter value is ignored (it would match ordinary words; no real credential is that
  short) and `register` says so by returning False;
- so are the forms an agent trivially produces from it: the value split by whitespace or an
  escaped line break (`\\n`, `&#xA;`: a wrapped terminal line, a folded YAML line), its JSON
  escaping, its URL (percent) encoding and its base64 (standard and URL-safe alphabets, at each of
  the three byte alignments, so the value is found inside a longer encoded text too);
- so is what is left of a value of 20 or more characters cut to a size limit (evidence keeps
  the first 120 bytes of a match or the last 200 of a command's output): its first or last 12
  characters, widened over the neighbouring characters the value is made of;
- and, registered or not, the shapes of Anthropic (`sk-ant-…`), OpenAI (`sk-…`, `sk-proj-…`) and
  GitHub (`ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_…`, `github_pat_…`) tokens, and the model gateway's
  session tokens (`evolve-session-…`: worthless once their session ends, never written anyway);
- every one of those in any letter case, and in text normalised first (`normalised`): zero-width
  and other Unicode format characters removed, percent-escapes (`%73`), `\\u`/`\\x` escapes and
  HTML/XML character references (`&#115;`, `&#x73;`, `&amp;`) decoded. A match in the normalised text
  replaces the original characters it came from, escapes and invisible characters included.
Anything else an agent can compute (base32, hex, reversal, rot13, a value cut into pieces far
apart) is not recognised: the protection against that is that the agent never holds our secrets.

Guarantees: text with no secret and no token shape is returned unchanged (the same object), so
reports stay byte-identical; never raises for any input; never reads the environment itself (the
CLI passes the environment it was given, `github.workflow.mask` registers what it masks).
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import functools
import html
import json
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "Redactor",
    "is_secret_name",
    "normalised",
    "redact",
    "redact_structured",
    "redactor",
    "register",
    "register_environ",
    "reset",
    "scoped",
]

REDACTED = "***"
"""What a secret or a token becomes."""

MIN_SECRET_LENGTH = 8
"""Registered values shorter than this are not searched for (they would wreck ordinary text)."""

_SPLIT_MIN_LENGTH = 16
"""A form this long is also found split by whitespace or an escaped line break."""

_FRAGMENT = 12
"""A value's first or last this many characters are found on their own (a value cut short)."""

_FRAGMENT_MIN_VALUE = 20
"""Only values this long are also searched for by their fragments."""

_ENCODED_MIN_LENGTH = 12
"""A base64 fragment shorter than this is not searched for (too likely to occur by chance)."""

# Anything between two characters of a split value: blanks and line breaks, raw or escaped as a
# JSON/YAML string (`\n`, `\r`, `\t`) or an XML character reference does it.
_SEP = r"(?:\s|\\[nrt]|&#x[9aAdD];|&#(?:9|10|13);)*"

_TOKEN_SHAPES = (
    r"sk-ant-[A-Za-z0-9_-]{8,}",  # Anthropic API keys and OAuth tokens (sk-ant-api03-…, sk-ant-oat01-…)
    r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{16,}",  # OpenAI project, service-account, admin keys
    r"sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}",  # OpenAI user keys (a digit somewhere in it)
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub classic, OAuth, user-to-server, installation, refresh
    r"github_pat_[A-Za-z0-9_]{30,}",  # GitHub fine-grained personal access tokens
    r"evolve-session-[a-z0-9_-]{20,}",  # our model gateway's session tokens (worthless once over)
)
_SHAPES = r"(?<![A-Za-z0-9_])(?:" + "|".join(_TOKEN_SHAPES) + ")"
_SHAPES_RE = re.compile(_SHAPES)  # searched in case-folded text (`_fold`)
# Every token shape contains `sk-`, `github_pat_`, `evolve-session-` or a `gh?_` prefix: text
# without any holds no
# token (these tests are far cheaper than the shapes' pattern, tried at every position of a text).
_GH_PREFIX = re.compile("gh[pousr]_")

# Invisible characters an agent can put between a secret's characters: Unicode's format characters
# (category Cf: zero-width space and joiners, word joiner, BOM, soft hyphen, bidi controls, tags…),
# the combining grapheme joiner, variation selectors and the Hangul fillers.
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
)
# What `normalised` decodes or drops: one invisible character, or one escape of one character.
_DECODABLE = re.compile(
    f"[{_INVISIBLE}]"
    r"|%[0-7][0-9A-Fa-f]"  # a percent-escaped ASCII byte
    r"|\\\\"  # an escaped backslash (JSON's `\\u0073` is the text `\u0073`, decoded next level)
    r"|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|\\x[0-9A-Fa-f]{2}|\\u\{[0-9A-Fa-f]{1,6}\}"
    r"|&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
)
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
_LEVELS = 2
"""Layers of escaping undone: an agent's escapes inside a file format's own (`&amp;#115;`)."""

# Names of environment variables whose values are secrets, whoever set them: `*_TOKEN`,
# `*_API_KEY`, `*_SECRET`, `*_PASSWORD`, `*_PAT`, `*_PRIVATE_KEY` (either separator, any case).
_SECRET_NAME = re.compile(
    r"(?:^|[_-])(?:TOKEN|API[_-]?KEY|SECRET|PASSWORD|PASSWD|PAT|PRIVATE[_-]KEY|CREDENTIALS?)$",
    re.IGNORECASE,
)

_ESCAPES = {
    "json": re.compile(r"\\(?:u[0-9A-Fa-f]{4}|.)", re.DOTALL),
    "xml": re.compile(r"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);"),
}
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def normalised(text: str) -> tuple[str, list[tuple[int, int]] | None]:
    """`text` with invisible characters dropped and one-character escapes decoded, and where each
    of its characters came from in `text` (`(start, end)`); None when nothing changed.

    Percent-escapes of ASCII bytes, `\\\\`, `\\uXXXX`/`\\UXXXXXXXX`/`\\xXX`/`\\u{…}` escapes and HTML/XML
    character references (numeric, and the named ones HTML knows) are decoded once; an escape of
    an invisible character is dropped like the character. Only what is searched changes: the
    text we write is never rewritten beyond the replacement of what is found.
    """
    if not _may_decode(text):
        return text, None
    out: list[str] = []
    where: list[tuple[int, int]] = []
    done = 0
    for m in _DECODABLE.finditer(text):
        start, end = m.span()
        if start > done:
            out.append(text[done:start])
            where.extend(zip(range(done, start), range(done + 1, start + 1), strict=True))
        char = _visible(m.group())
        out.append(char)
        where.extend((start, end) for _ in char)
        done = end
    if done == 0 and not where:
        return text, None
    out.append(text[done:])
    where.extend(zip(range(done, len(text)), range(done + 1, len(text) + 1), strict=True))
    return "".join(out), where


def _views(text: str) -> Iterator[tuple[str, list[tuple[int, int]] | None]]:
    """`text`, then up to `_LEVELS` successive `normalised` forms of it, each case-folded
    (`_fold`) and with where its characters came from in `text` (None for `text` itself)."""
    yield _fold(text), None
    view, where = text, None
    for _ in range(_LEVELS):
        nxt, back = normalised(view)
        if back is None:
            return
        if where is not None:
            back = [(where[s][0], where[e - 1][1]) for s, e in back]
        view, where = nxt, back
        yield _fold(view), where


def _quick_views(text: str) -> Iterator[str]:
    """What `_views` yields, without the maps (the cheap test of whether anything is there)."""
    yield _fold(text)
    view = text
    for _ in range(_LEVELS):
        if not _may_decode(view):
            return
        nxt = _DECODABLE.sub(lambda m: _visible(m.group()), view)
        if nxt == view:
            return
        view = nxt
        yield _fold(view)


def _may_decode(text: str) -> bool:
    """Whether `normalised` could change `text` (cheap: substring tests, and ASCII needs no scan)."""
    if "%" in text or "\\" in text or "&" in text:
        return True
    return not text.isascii() and _INVISIBLE_RE.search(text) is not None


@functools.lru_cache(maxsize=4096)
def _visible(escape: str) -> str:
    """What one match of `_DECODABLE` stands for, "" for an invisible character."""
    char = _decoded(escape)
    return "" if _INVISIBLE_RE.fullmatch(char) else char


def _fold(text: str) -> str:
    """`text` in lower case, one character for one (a character whose lower case is longer stays)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


def _decoded(escape: str) -> str:
    """What one match of `_DECODABLE` stands for ("" for an invisible character)."""
    head = escape[0]
    try:
        if head == "%":
            return chr(int(escape[1:], 16))
        if escape == "\\\\":
            return "\\"
        if head == "\\":
            digits = escape[2:].strip("{}")
            return chr(int(digits, 16))
    except (ValueError, OverflowError):
        return escape
    if head == "&":
        return html.unescape(escape)
    return ""


def is_secret_name(name: str) -> bool:
    """True for environment variable names that hold secrets by convention (`*_TOKEN`, `*_API_KEY`…)."""
    return bool(_SECRET_NAME.search(name))


def _base64_forms(value: str) -> set[str]:
    """The parts of base64(value) that do not depend on what precedes or follows it (3 alignments)."""
    data = value.encode("utf-8")
    forms: set[str] = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + data).decode("ascii")
        start = -(-pad * 8 // 6)  # characters touching the padding bytes
        end = (pad + len(data)) * 8 // 6  # characters made only of the value's bits
        part = encoded[start:end]
        if len(part) >= _ENCODED_MIN_LENGTH:
            forms.add(part)
            forms.add(part.replace("+", "-").replace("/", "_"))
    return forms


def _forms(value: str) -> set[str]:
    """The value and the encodings of it we look for."""
    forms = {
        value,
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
        quote(value, safe=""),
        *_base64_forms(value),
    }
    return {f for f in forms if len(f) >= MIN_SECRET_LENGTH}


def _pattern_of(form: str) -> str:
    if len(form) < _SPLIT_MIN_LENGTH:
        return re.escape(form)
    return _SEP.join(re.escape(c) for c in form)


def _alternation(fragments: Iterable[str]) -> str:
    return "|".join(re.escape(f) for f in sorted(fragments, key=lambda f: (-len(f), f)))


@dataclass(frozen=True, slots=True)
class _Compiled:
    """One pattern for a set of values, and the characters of the value each fragment cut from."""

    pattern: re.Pattern[str]
    alphabets: Mapping[str, frozenset[str]]
    literals: tuple[str, ...]
    """The forms `pattern` matches literally (short forms, the fragments of long values).
    Every form is case-folded (`_fold`): `pattern` is searched in case-folded text."""
    split: re.Pattern[str] | None
    """The forms `pattern` also finds split by blanks or escaped line breaks (None if none).
    `literals`, `split` and the token shapes are the quick test of whether `pattern` matches
    anywhere (`Redactor.holds_any`)."""


@functools.lru_cache(maxsize=16)
def _compiled(values: frozenset[str]) -> _Compiled:
    forms = sorted({_fold(f) for v in values for f in _forms(v)}, key=lambda f: (-len(f), f))
    parts = [_pattern_of(f) for f in forms]
    long = [v for v in values if len(v) >= _FRAGMENT_MIN_VALUE]
    heads = {_fold(v[:_FRAGMENT]): frozenset(_fold(v)) for v in long}
    tails = {_fold(v[-_FRAGMENT:]): frozenset(_fold(v)) for v in long}
    if heads:
        parts.append(f"(?P<head>{_alternation(heads)})")
        parts.append(f"(?P<tail>{_alternation(tails)})")
    parts.append(_SHAPES)
    split = [_pattern_of(f) for f in forms if len(f) >= _SPLIT_MIN_LENGTH]
    alphabets = dict(tails)
    for fragment, alphabet in heads.items():
        alphabets[fragment] = alphabets.get(fragment, frozenset()) | alphabet
    return _Compiled(
        pattern=re.compile("|".join(parts)),
        alphabets=alphabets,
        literals=(*(f for f in forms if len(f) < _SPLIT_MIN_LENGTH), *heads, *tails),
        split=re.compile("|".join(split)) if split else None,
    )


def _has_shape(folded: str) -> bool:
    return (
        "sk-" in folded
        or "github_pat_" in folded
        or "evolve-session-" in folded
        or _GH_PREFIX.search(folded) is not None
    ) and _SHAPES_RE.search(folded) is not None


class Redactor:
    """A set of secret values plus the token shapes, compiled into one pattern on demand."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._compiled: _Compiled | None = None
        self._lock = threading.Lock()

    @property
    def values(self) -> frozenset[str]:
        """The registered values (never printed; tests and `scoped` use it)."""
        return frozenset(self._values)

    def register(self, value: str) -> bool:
        """Add a secret value (surrounding blanks ignored); False when it is too short to search for."""
        value = value.strip()
        if len(value) < MIN_SECRET_LENGTH:
            return False
        with self._lock:
            if value not in self._values:
                self._values.add(value)
                self._compiled = None
        for line in value.splitlines():  # a multi-line secret: each line is masked on its own too
            line = line.strip()
            if line != value and len(line) >= MIN_SECRET_LENGTH:
                self.register(line)
        return True

    def replace_values(self, values: Iterable[str]) -> None:
        """Make `values` the registered set (what `scoped` restores)."""
        with self._lock:
            self._values = set(values)
            self._compiled = None

    def _current(self) -> _Compiled:
        with self._lock:
            if self._compiled is None:
                self._compiled = _compiled(frozenset(self._values))
            return self._compiled

    def holds_any(self, text: str) -> bool:
        """Whether `text` holds a secret or a token anywhere (what `spans` would find)."""
        compiled = self._current()
        return any(self._holds(compiled, view) for view in _quick_views(text))

    @staticmethod
    def _holds(compiled: _Compiled, folded: str) -> bool:
        if any(lit in folded for lit in compiled.literals):
            return True
        if compiled.split is not None and compiled.split.search(folded) is not None:
            return True
        return _has_shape(folded)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where `text` holds a secret or a token: sorted, non-overlapping `(start, end)` spans.

        Found in `text` as it is and in its `normalised` form (whose spans cover the original
        characters they came from, escapes and invisible characters included), in any case. A
        fragment (the first or last characters of a long value: what is left of it after a cut to
        a size limit) is widened over the neighbouring characters that value is made of.
        """
        found: list[tuple[int, int]] = []
        for view, where in _views(text):
            spans = self._spans(view)
            if where is None:
                found.extend(spans)
            else:
                found.extend((where[s][0], where[e - 1][1]) for s, e in spans if e > s)
        return _merged(found)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        compiled = self._current()
        fragments = "head" in compiled.pattern.groupindex
        found: list[tuple[int, int]] = []
        done = 0
        for m in compiled.pattern.finditer(text):
            start, end = m.span()
            if fragments and (head := m.group("head")) is not None:
                alphabet = compiled.alphabets[head]
                while end < len(text) and text[end] in alphabet:
                    end += 1
            elif fragments and (tail := m.group("tail")) is not None:
                alphabet = compiled.alphabets[tail]
                while start > done and text[start - 1] in alphabet:
                    start -= 1
            if found and start <= found[-1][1]:
                found[-1] = (found[-1][0], max(end, found[-1][1]))
            else:
                found.append((start, end))
            done = found[-1][1]
        return found

    def redact(self, text: str) -> str:
        """`text` with every secret and token replaced by `***` (unchanged when there is none)."""
        if not text or not self.holds_any(text):
            return text
        return _replace(text, self.spans(text))

    def redact_structured(self, text: str, kind: Literal["json", "xml"]) -> str:
        """`redact` for the text of a JSON (or JSONC) or XML document, keeping it valid.

        A replacement that would begin or end inside an escape sequence (`\\n`, `\\u00e9`,
        `&#xA;`, `&amp;`) is widened to the whole sequence; in JSON only string literals are
        searched (a value outside one can only be a number or keyword, never leaked text).
        """
        if not text or not self.holds_any(text):
            return text
        if kind == "json":
            return _JSON_STRING.sub(
                lambda m: '"' + self._widened(m.group()[1:-1], "json") + '"', text
            )
        return self._widened(text, kind)

    def _widened(self, text: str, kind: Literal["json", "xml"]) -> str:
        spans = self.spans(text)
        if not spans:
            return text
        escapes = [m.span() for m in _ESCAPES[kind].finditer(text)]
        starts = [s for s, _ in escapes]
        widened = [
            (_widen(s, escapes, starts), _widen(e, escapes, starts, at_end=True)) for s, e in spans
        ]
        return _replace(text, widened)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` sorted, with overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _replace(text: str, spans: Iterable[tuple[int, int]]) -> str:
    out: list[str] = []
    done = 0
    for start, end in spans:
        start = max(start, done)
        if end <= start:
            continue
        out.append(text[done:start])
        out.append(REDACTED)
        done = end
    out.append(text[done:])
    return "".join(out)


def _widen(
    pos: int, escapes: list[tuple[int, int]], starts: list[int], *, at_end: bool = False
) -> int:
    """Move `pos` out of an escape sequence it falls strictly inside (to its start, or its end)."""
    i = bisect.bisect_right(starts, pos - 1) - 1
    if i >= 0:
        s, e = escapes[i]
        if s < pos < e:
            return e if at_end else s
    return pos


_REDACTOR = Redactor()


def redactor() -> Redactor:
    """The process-wide redactor."""
    return _REDACTOR


def register(*values: str) -> None:
    """Register secret values with the process-wide redactor (short and empty ones are ignored)."""
    for value in values:
        _REDACTOR.register(value)


def register_environ(environ: Mapping[str, str], names: Iterable[str] = ()) -> None:
    """Register the values of `names` and of every variable `is_secret_name` picks in `environ`."""
    wanted = set(names)
    for name, value in environ.items():
        if value and (name in wanted or is_secret_name(name)):
            _REDACTOR.register(value)


def redact(text: str) -> str:
    """`text` through the process-wide redactor (unchanged when it holds no secret or token)."""
    return _REDACTOR.redact(text)


def redact_structured(text: str, kind: Literal["json", "xml"]) -> str:
    """A JSON or XML document's text through the process-wide redactor, kept valid."""
    return _REDACTOR.redact_structured(text, kind)


def reset() -> None:
    """Forget every registered value (the token shapes stay)."""
    _REDACTOR.replace_values(())


@contextlib.contextmanager
def scoped() -> Iterator[Redactor]:
    """Registrations made inside the block are forgotten when it ends (one CLI run, one test)."""
    before = _REDACTOR.values
    try:
        yield _REDACTOR
    finally:
        _REDACTOR.replace_values(before)
