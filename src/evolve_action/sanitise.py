"""The one gate for untrusted text (repository, PR and model text) on the console and in Markdown.

Owns: `clean_text` (strip terminal escapes, C0/C1 controls except `\\n`/`\\t`, bidi overrides),
`clean_line` (the same, on one line), `visible_text` (also without invisible format characters),
`defuse_mentions`, `web_url` (whether a link target is http(s), the one rule the report, the PR
comment and the step summary share), `neutralise_markdown` (untrusted text inside a Markdown
report: no HTML, no image, no mention, no code fence, no link to anything but http(s)),
`neutralise_line` (a line that would start a GitHub workflow
command, `::name` or `##[name]`, gets its leading marker broken up) and `ConsoleGate`, the stream
wrapper the CLI puts around stdout/stderr: every write is cleaned, redacted (`redact`: no secret
or token reaches the console) and, under GitHub Actions, neutralised line by line, so no printed
line can start a workflow command unless it was written through `write_trusted` (only
`github.workflow` does that). The GitHub comment code reuses `clean_text`.

Guarantees: text without control characters passes `clean_text` unchanged, and ordinary text
(no `<` opening a tag, no `![`, no `@name` after a blank, no fence at a line start, no link to a
non-http(s) target, no invisible character) passes `neutralise_markdown` unchanged, so reports stay byte-identical. Both are
idempotent. Never reads the environment or raises for any input.
"""

from __future__ import annotations

import html
import io
import re
import unicodedata
from typing import TextIO, cast

from evolve_action.redact import redact

__all__ = [
    "ConsoleGate",
    "clean_line",
    "clean_text",
    "defuse_mentions",
    "gate",
    "neutralise_line",
    "neutralise_markdown",
    "visible_text",
    "web_url",
    "write_trusted",
]

# ANSI/VT escape sequences: CSI (`ESC [` … final byte), OSC/DCS/PM/APC/SOS strings (ended by BEL or
# ST), two-byte escapes; then the 8-bit C1 forms of CSI/OSC.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
# Remaining controls: C0 except TAB/LF, DEL, C1, and the bidi embedding/override/isolate marks.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_COMMAND_START = re.compile(r"^(\s*)(::|##\[)")
_MAYBE_COMMAND = re.compile(r"\s*(?::|#|##)?")


def clean_text(text: str) -> str:
    """`text` without escape sequences and control characters (keeps `\\n` and `\\t`)."""
    # Every escape sequence starts with a character `_CONTROLS` matches (ESC or a C1 control):
    # text without one has nothing to strip.
    if text.isprintable() or not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def clean_line(text: str) -> str:
    """`clean_text` for a one-line field: line breaks and tabs become spaces."""
    return clean_text(text).replace("\n", " ").replace("\t", " ")


def _visible(ch: str) -> bool:
    return ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co")


def visible_text(text: str) -> str:
    """`clean_text`, then without invisible format characters (Unicode Cf, Cs, Co: zero-width
    spaces and joiners, word joiner, BOM, soft hyphen, tag characters), which can hide a mention
    or a marker from a reader; keeps `\\n` and `\\t`."""
    text = clean_text(text)
    if text.isascii():
        return text
    return "".join(ch for ch in text if ch == "\t" or _visible(ch))


# `@name`/`@org/team` after a non-alphanumeric character (GitHub's rule: `a@b.com` or
# `actions/checkout@v4` is no mention and is left alone).
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
# Every `@` before a name character: the strict form, for text GitHub notifies from (a comment).
_ANY_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# `<` opening an HTML tag, end tag, comment (our markers), declaration or processing instruction.
_HTML_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_IMAGE = re.compile(r"!\[")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})", re.MULTILINE)
_MARKDOWN_RISK = re.compile(r"[<@]|!\[|^ {0,3}(?:```|~~~)|\]\(|\]:", re.MULTILINE)
# An inline link's `](` and its target (`<…>`, or up to a blank or the closing parenthesis), and a
# link reference definition (`[label]:` at a line start, its target possibly on the next line).
_LINK = re.compile(r"\]\(([ \t]*)(<[^>\n]*>?|[^\s)]*)")
_LINK_DEFINITION = re.compile(r"^( {0,3})(\[[^\]\n]*\]:[ \t]*\n?[ \t]*)(\S*)", re.MULTILINE)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_URL_JUNK = re.compile(r"[\x00-\x20\x7f<>]")


def web_url(target: str) -> bool:
    """Whether a link target is harmless to follow: an http(s) URL, or no scheme at all (a
    relative path or an anchor). `javascript:`, `data:`, `vbscript:`, `file:` and every other
    scheme are not, however spelled: HTML entities are decoded and blanks and controls dropped
    first, as a browser would (`&#106;avascript:`, `java\\tscript:`), and `<…>` is unwrapped."""
    t = _URL_JUNK.sub("", html.unescape(target))
    m = _SCHEME.match(t)
    return m is None or m.group(1).lower() in ("http", "https")


def defuse_mentions(text: str, *, strict: bool = False) -> str:
    """`@name` becomes `＠name` (U+FF20: visible, never a notification).

    By default only where GitHub would see a mention (after a non-alphanumeric character), so
    `a@b.com` and `actions/checkout@v4` read as written in a file. `strict` defuses every `@`
    before a name character: the PR comment uses it, because there a missed mention notifies
    someone and GitHub's exact rule (e-mail-like text, links) is not ours to replicate.
    """
    if "@" not in text:
        return text
    return (_ANY_MENTION if strict else _MENTION).sub("\uff20", text)


def neutralise_markdown(text: str) -> str:
    """Untrusted text made inert inside a Markdown report (`EVALUATION.md`, plugin pages).

    `visible_text`, then: a `<` that would open HTML (a tag such as `<img src=…>` or
    `<details>`, a comment such as our sticky-comment marker) becomes `&lt;`; `![` becomes `!\\[`
    (no image, so no beacon); `@name` becomes `＠name`; a code fence at a line start gets a
    backslash; a link to a target that is not `web_url` (`[x](javascript:…)`, a reference
    definition `[x]: data:…`) gets its bracket escaped (`]\\(`, `\\[x]:`), so it reads as text
    and is no link. Everything else, Markdown punctuation included, is kept, so ordinary text reads
    as written (`#123` stays: a file is not a conversation, nothing is cross-referenced). Line
    breaks are kept: callers flatten one-line fields.
    """
    text = visible_text(text)
    if not _MARKDOWN_RISK.search(text):
        return text
    out = _HTML_OPEN.sub("&lt;", text)
    out = _IMAGE.sub("!\\\\[", out)
    out = _FENCE.sub(lambda m: m.group(1) + "\\" + m.group(2), out)
    out = _LINK.sub(_inert_link, out)
    out = _LINK_DEFINITION.sub(_inert_definition, out)
    out = defuse_mentions(out)
    return text if out == text else out  # ordinary text: the very object passed in


def _inert_link(m: re.Match[str]) -> str:
    return m.group(0) if web_url(m.group(2)) else "]\\(" + m.group(1) + m.group(2)


def _inert_definition(m: re.Match[str]) -> str:
    return m.group(0) if web_url(m.group(3)) else m.group(1) + "\\" + m.group(2) + m.group(3)


def neutralise_line(line: str) -> str:
    """Break a leading `::` or `##[` (after blanks) so the runner never reads a workflow command."""
    return _COMMAND_START.sub(lambda m: m.group(1) + m.group(2)[0] + " " + m.group(2)[1:], line)


class ConsoleGate(io.TextIOBase):
    """A text stream that cleans everything written and, under Actions, neutralises line starts."""

    def __init__(self, stream: TextIO, *, actions: bool) -> None:
        self.stream = stream
        self.actions = actions
        self._at_line_start = True
        self._pending = ""

    def write(self, s: str) -> int:
        """Clean, redact and (under Actions) neutralise `s`, then write it; returns `len(s)`."""
        text = redact(clean_text(s))
        if self.actions:
            lines = (self._pending + text).split("\n")
            self._pending = ""
            out = [
                neutralise_line(part) if self._at_line_start or i > 0 else part
                for i, part in enumerate(lines)
            ]
            if (self._at_line_start or len(lines) > 1) and _MAYBE_COMMAND.fullmatch(out[-1]):
                # A line start that may still become `::`/`##[`: hold it until more text arrives.
                self._pending, out[-1] = out[-1], ""
                self._at_line_start = True
            else:
                self._at_line_start = False
            text = "\n".join(out)
        self.stream.write(text)
        return len(s)

    def write_trusted(self, s: str) -> None:
        """Write our own text (a workflow command, a terminal control) exactly as given."""
        if self._pending:
            self.stream.write(self._pending)
            self._pending = ""
        self.stream.write(s)
        self._at_line_start = s.endswith("\n") if s else self._at_line_start

    def flush(self) -> None:
        """Flush the underlying stream (a closed one is left alone: we never own it)."""
        if not getattr(self.stream, "closed", False):
            self.stream.flush()

    def isatty(self) -> bool:
        """Whether the underlying stream is a terminal."""
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def writable(self) -> bool:
        """Always True."""
        return True

    def fileno(self) -> int:
        """The underlying stream's descriptor."""
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The underlying stream's encoding."""
        return str(getattr(self.stream, "encoding", "utf-8"))


def gate(stream: TextIO, *, actions: bool) -> TextIO:
    """Wrap `stream` in a `ConsoleGate` (once: an already gated stream is returned as is)."""
    if isinstance(stream, ConsoleGate):
        return cast("TextIO", stream)
    return cast("TextIO", ConsoleGate(stream, actions=actions))


def write_trusted(stream: TextIO, s: str) -> None:
    """Write our own text through a gate unchanged (plain streams get a plain write)."""
    if isinstance(stream, ConsoleGate):
        stream.write_trusted(s)
    else:
        stream.write(s)
