"""Advisory skill signals of `run checks` (engine spec §5.6): size and conciseness scores.

Owns: `SkillSignal`, `skill_signals` (one per SKILL.md, path order), `size_score` (100 up to the
ideal line count, 0 at the cap, quadratic in between), `conciseness_score` (sentence length,
hedge words `HEDGE_WORDS`, duplicate lines), `prose_lines` (the body without frontmatter,
fences and Markdown markers), each description's share of Claude Code's skill listing budget
(`budget_share`, against `LISTING_BUDGET_CHARS`) and `with_listing` (the listing status the
listing check measured, when it ran).

Guarantees: scores are deterministic floats in 0–100 and never affect the checks verdict; an
unreadable SKILL.md is skipped (the checks report it). Never does: write, print, raise for an
authored file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from evolve_action.config import Config
from evolve_action.encoding import split_lines, trim_space
from evolve_action.errors import EvolveError
from evolve_action.repo import Repository, parse_frontmatter, read_text, rel_path

__all__ = [
    "HEDGE_WORDS",
    "LISTING_BUDGET_CHARS",
    "SkillSignal",
    "conciseness_score",
    "prose_lines",
    "size_score",
    "skill_signals",
    "with_listing",
]

LISTING_BUDGET_CHARS = 30_000
"""Claude Code's whole skill listing budget for its default models (CLI 2.1.332; ~8,000 for
claude-haiku-4-5 and claude-sonnet-4-6), built-in skills (~6,200 characters) included: the
denominator of `SkillSignal.budget_share` (docs/checks.md, "The listing budget")."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillSignal:
    """Advisory size/conciseness scores of one SKILL.md (never affect the verdict)."""

    skill: str
    plugin: str
    path: str
    """SKILL.md relative to the root."""
    lines: int
    size: float
    """100 up to the ideal line count, 0 at the cap, quadratic in between."""
    concise: float
    """Mean of the sentence-length, hedge-word and duplicate-line sub-scores (0–100)."""
    overall: float
    note: str
    """`<n> lines (ideal ≤<ideal>, cap <cap>)`."""
    budget_share: float = 0.0
    """Percent of `LISTING_BUDGET_CHARS` its listing line (`- name: description`) takes."""
    listing: str = ""
    """How the listing check saw it in its plugin's set (`whole`, `shortened`, `name-only`,
    `missing`); `""` when the listing check did not run."""


HEDGE_WORDS: tuple[str, ...] = (
    "might",
    "may",
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "likely",
    "unlikely",
    "somewhat",
    "fairly",
    "quite",
    "rather",
    "relatively",
    "generally",
    "usually",
    "typically",
    "often",
    "sometimes",
    "arguably",
    "presumably",
    "apparently",
    "seemingly",
    "seems",
    "appears",
    "could",
    "basically",
    "essentially",
)
"""The 27 hedge terms counted by the conciseness signal (case-insensitive, whole words)."""

_HEDGE = re.compile(r"\b(?:" + "|".join(HEDGE_WORDS) + r")\b", re.IGNORECASE | re.ASCII)
_SENTENCE_END = re.compile(r"[.!?]+\s+")
_MARKER = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+|>\s*|\d+[.)]\s+)+")


def skill_signals(repo: Repository, config: Config) -> list[SkillSignal]:
    """Size and conciseness scores for every SKILL.md (path order); unreadable files are skipped."""
    ideal = config.checks.ideal_skill_lines
    cap = config.checks.max_skill_lines
    found: list[SkillSignal] = []
    for skill in repo.skills():
        try:
            text = read_text(skill.skill_md)
        except EvolveError:
            continue
        lines = split_lines(text)
        front = parse_frontmatter(text, skill.skill_md)
        description = (
            trim_space(front.fields.get("description", ""))
            if front is not None and front.error is None
            else ""
        )
        size = size_score(len(lines), ideal, cap)
        concise = conciseness_score(text)
        found.append(
            SkillSignal(
                skill=skill.name,
                plugin=skill.plugin,
                path=rel_path(repo.root, skill.skill_md),
                lines=len(lines),
                size=size,
                concise=concise,
                overall=(size + concise) / 2,
                note=f"{len(lines)} lines (ideal ≤{ideal}, cap {cap})",
                budget_share=budget_share(skill.name, description),
            )
        )
    return found


def budget_share(name: str, description: str) -> float:
    """Percent of `LISTING_BUDGET_CHARS` the line `- name: description` takes (the description
    capped at 1,536 characters, as Claude Code cuts it)."""
    line = len(f"- {name}: ") + min(len(" ".join(description.split())), 1536) + 1
    return 100.0 * line / LISTING_BUDGET_CHARS


def with_listing(
    signals: Sequence[SkillSignal], statuses: Mapping[tuple[str, str], str]
) -> tuple[SkillSignal, ...]:
    """`signals` with `listing` set from `(plugin, skill) → status` (others unchanged)."""
    return tuple(replace(s, listing=statuses.get((s.plugin, s.skill), s.listing)) for s in signals)


def size_score(lines: int, ideal: int, cap: int) -> float:
    """100 at ≤ ideal, 0 at ≥ cap, `100*(1-t²)` in between (a step when cap ≤ ideal)."""
    if lines <= ideal:
        return 100.0
    if cap <= ideal or lines >= cap:
        return 0.0
    t = (lines - ideal) / (cap - ideal)
    return 100.0 * (1 - t * t)


def _linear(value: float, best: float, worst: float) -> float:
    if value <= best:
        return 100.0
    if value >= worst:
        return 0.0
    return 100.0 * (worst - value) / (worst - best)


def prose_lines(text: str) -> list[str]:
    """Body lines without frontmatter, fenced code blocks and leading Markdown markers."""
    lines = split_lines(text)
    front = parse_frontmatter(text)
    start = front.end_line if front is not None else 0  # the line after the closing `---`
    prose: list[str] = []
    fence: str | None = None
    for line in lines[start:]:
        stripped = trim_space(line)
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        prose.append(_MARKER.sub("", stripped))
    return prose


def conciseness_score(text: str) -> float:
    """Mean of sentence length (100 at ≤20 words, 0 at ≥35), hedges per 100 words (0→100, 6→0)
    and duplicate-line fraction among trimmed lines of ≥12 bytes (0→100, 0.15→0)."""
    prose = prose_lines(text)
    body = " ".join(line for line in prose if line)
    words = body.split()
    sentences = [s for s in _SENTENCE_END.split(body) if s.strip()]
    avg = len(words) / len(sentences) if sentences else 0.0
    hedges = len(_HEDGE.findall(body))
    per_100 = hedges * 100 / len(words) if words else 0.0
    long_lines = [line for line in prose if len(line.encode("utf-8")) >= 12]
    seen: set[str] = set()
    dupes = 0
    for line in long_lines:
        if line in seen:
            dupes += 1
        seen.add(line)
    fraction = dupes / len(long_lines) if long_lines else 0.0
    parts = (_linear(avg, 20, 35), _linear(per_100, 0, 6), _linear(fraction, 0, 0.15))
    return sum(parts) / 3
