"""SKILL.md frontmatter (spec §5.3): evolve's `---` fences, the block decoded as YAML by
`encoding.decode_yaml` with Claude Code's leniency, and the line of each key.

Owns: `Frontmatter` and `parse_frontmatter`, `model_invocable` (`disable-model-invocation: true`
hides a skill from the model).
Guarantees: a block that is not YAML, even after Claude Code's second attempt, is a `Frontmatter`
with `error`/`error_line` and no fields (as Claude Code drops them), never an exception;
`model_invocable` never raises.
Never does: validate the fields (the checks do), find skills.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve_action.encoding import (
    Decoded,
    decode_yaml,
    pointer_join,
    split_lines,
    trim_space,
)
from evolve_action.errors import EvolveError, SpecError
from evolve_action.repo._reading import go_str, read_text

__all__ = [
    "Frontmatter",
    "model_invocable",
    "parse_frontmatter",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Frontmatter:
    """The top-level keys of a SKILL.md frontmatter block, decoded as YAML (as Claude Code does)."""

    fields: dict[str, str] = field(default_factory=dict)
    """Key → value as text: strings as decoded, numbers and booleans as written (`go_str`), null,
    lists and mappings as ``."""
    lines: dict[str, int] = field(default_factory=dict)
    """Key → 1-based file line of the key."""
    end_line: int = 0
    """1-based line of the closing `---`."""
    error: str | None = None
    """Why the block is not a YAML mapping (then `fields` is empty, as Claude Code drops them)."""
    error_line: int | None = None
    """1-based file line of `error`, when known."""


# --- SKILL.md frontmatter (spec §5.3) --------------------------------------------------------


def parse_frontmatter(text: str, path: Path | None = None) -> Frontmatter | None:
    """Parse the leading `---` block as YAML, the way Claude Code does; `None` when absent or
    unterminated (the fences are evolve's: the first line and the next line that trims to `---`).

    The block is decoded by `encoding.decode_yaml` (aliases counted, depth capped): block scalars,
    quoted multi-line strings and comments mean what YAML says. When it does not parse, Claude
    Code's leniency is applied before giving up: a top-level `key: value` line whose unquoted value
    holds `: ` or a YAML indicator is read as a double-quoted string, and leading tabs as two spaces
    each. Still invalid → a `Frontmatter` with `error`/`error_line` (file lines) and no fields, as
    Claude Code then drops every field. `path` only names the file in the decoder's errors.
    """
    lines = split_lines(text)
    if not lines or trim_space(lines[0]) != "---":
        return None
    end = next((i for i in range(1, len(lines)) if trim_space(lines[i]) == "---"), None)
    if end is None:
        return None
    block = lines[1:end]
    if all(trim_space(line) == "" or line.lstrip().startswith("#") for line in block):
        return Frontmatter(end_line=end + 1)
    where = path if path is not None else Path("SKILL.md")
    try:
        decoded = _decode_block(block, where)
    except SpecError:
        try:
            decoded = _decode_block(_lenient_lines(block, where), where)
        except SpecError as exc:
            return Frontmatter(
                end_line=end + 1, error=_YAML_PREFIX.sub("", exc.message), error_line=exc.line
            )
    value = decoded.value
    if value is None:
        return Frontmatter(end_line=end + 1)
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else "a single value"
        return Frontmatter(
            end_line=end + 1,
            error=f"frontmatter is {kind}, not a mapping of `key: value` lines",
            error_line=2,
        )
    fields = {key: _scalar_text(item) for key, item in value.items()}
    where_lines = {
        key: _key_line(block, key, decoded.line_of(pointer_join("", key))) for key in value
    }
    return Frontmatter(fields=fields, lines=where_lines, end_line=end + 1)


def model_invocable(skill_md: Path) -> bool:
    """False when the SKILL.md frontmatter sets `disable-model-invocation: true`: Claude Code
    loads the skill but never lists it to the model (measured, CLI 2.1.332), so the model cannot
    choose it and a trigger evaluation measures nothing; a user (or an eval naming it) can still
    run it. Unreadable or without frontmatter → True. Never raises."""
    try:
        front = parse_frontmatter(read_text(skill_md), skill_md)
    except EvolveError:
        return True
    if front is None:
        return True
    return front.fields.get("disable-model-invocation", "").strip().lower() != "true"


_YAML_PREFIX = re.compile(r"^yaml: (line [0-9]+: )?")
_LOOSE_LINE = re.compile(r"([a-zA-Z_-]+):\s+(\S[^\r\u2028\u2029]*)")
"""A line Claude Code may re-quote when the frontmatter does not parse."""
_YAML_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
"""Characters in an unquoted value that make Claude Code quote it on its second attempt."""
_LEADING_TABS = re.compile(r"^\t+")


def _decode_block(block: list[str], path: Path) -> Decoded:
    """Decode the frontmatter lines; a leading empty line stands for the opening fence, so the
    decoder's line numbers are the file's."""
    return decode_yaml("\n" + "\n".join(block) + "\n", path, whole=True)


def _lenient_lines(block: list[str], path: Path) -> list[str]:
    """Claude Code's second attempt at a frontmatter that is not valid YAML (`key: value` lines
    with `: ` or an indicator in an unquoted value become double-quoted; leading tabs → spaces)."""
    out: list[str] = []
    for line in block:
        match = _LOOSE_LINE.fullmatch(line)
        if match is not None:
            key, value = match.groups()
            quoted = any(value.startswith(q) and value.endswith(q) for q in "'\"")
            if not quoted and not _flow_list(value, path) and _YAML_SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}: "{escaped}"'
        out.append(_LEADING_TABS.sub(lambda m: "  " * len(m.group(0)), line))
    return out


def _flow_list(value: str, path: Path) -> bool:
    if not (value.startswith("[") and value.endswith("]")):
        return False
    try:
        return isinstance(decode_yaml(value, path, whole=True).value, list)
    except SpecError:
        return False


def _scalar_text(value: Any) -> str:
    """A frontmatter value as the checks compare it: null → ``, scalars as written, else ``."""
    if isinstance(value, dict | list):
        return ""
    return go_str(value)


def _key_line(block: list[str], key: str, value_line: int | None) -> int:
    """The file line of top-level `key:`: the last line at or before its value that starts with
    the key (plain or quoted); the value's line when none does (a flow mapping)."""
    starts = (key, f'"{key}"', f"'{key}'")
    found: int | None = None
    for index, line in enumerate(block):
        number = index + 2
        if value_line is not None and number > value_line:
            break
        for start in starts:
            if line.startswith(start) and line[len(start) :].lstrip(" \t").startswith(":"):
                found = number
    return found if found is not None else (value_line or 2)
