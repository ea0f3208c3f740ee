"""The scripted drafter: answer an `evolve-action init` drafting request the way a model would.

Owns: `draft_input` (the forced draft tool's input, built from the request's own text) and
`draft_sections` (the tagged sections of a drafting prompt). The policy action `draft` calls it.

Guarantees: grounded only in the request it receives. Should-trigger queries are the task lines of
`<skill_body>` (its bullet and numbered items outside a "when not to use" section), then the first
sentence of each of its prose paragraphs, in the body's own words and so in its language; should-not-trigger queries are the items of the body's "when not
to use" sections, then the sentences and clauses of every `<sibling_skills>` description (siblings first,
so confusion between siblings always shows); eval cases are the first task lines, each with the
line itself as the judge's expectation and a `file_exists` assertion when the line names a file.
The counts asked for (`Exactly N should-trigger…`, `N eval cases`) are honoured as far as the body
has lines. Pure: the same request gives the same draft. Never does: I/O, invent text the request
does not hold (the draft's only own words are its ids and the language tag).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SECTION = re.compile(r"<(skill_name|description|skill_body|sibling_skills)>\n?(.*?)\n?</\1>", re.S)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*\S)\s*$")
_NOT_SECTION = re.compile(
    r"\b(?:not|don'?t|never|avoid|out of scope|instead|ne pas|pas|nicht|kein|no\s+usar)\b",
    re.IGNORECASE,
)
_FILE = re.compile(r"`?\b([\w./-]+\.(?:md|csv|json|ya?ml|txt|py|toml|html|sql|go|ts|js))\b`?")
_MARKUP = re.compile(r"\*\*|__|`")
_LANGS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "en",
        frozenset(
            ["the", "and", "of", "to", "a", "in", "for", "with", "is", "this", "that", "from"]
        ),
    ),
    (
        "fr",
        frozenset(
            ["le", "la", "les", "des", "et", "un", "une", "pour", "avec", "dans", "du", "est", "ce"]
        ),
    ),
    (
        "de",
        frozenset(
            ["der", "die", "das", "und", "ein", "eine", "mit", "für", "ist", "nicht", "den", "von"]
        ),
    ),
    (
        "es",
        frozenset(
            ["el", "la", "los", "las", "y", "un", "una", "para", "con", "en", "del", "es", "que"]
        ),
    ),
)


def draft_sections(text: str) -> dict[str, str]:
    """The tagged sections of a drafting prompt (`skill_name`, `description`, `skill_body`,
    `sibling_skills`); a missing section is absent."""
    return {m.group(1): m.group(2) for m in _SECTION.finditer(text)}


def _count(text: str, pattern: str, default: int) -> int:
    m = re.search(pattern, text, re.IGNORECASE)
    return int(m.group(1)) if m else default


def _clean(line: str) -> str:
    line = _MARKUP.sub("", line).strip()
    return line.rstrip(":;").strip()


def body_items(body: str) -> tuple[list[str], list[str]]:
    """The body's list items outside code fences: (task items, items of "when not to use" sections).

    An item needs at least three words; a section is a "not" section when its heading says so
    (`not`, `don't`, `never`, `avoid`, `out of scope`, and the same in French, German, Spanish).
    """
    items: list[tuple[bool, str]] = []
    fenced = False
    negative = False
    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        heading = _HEADING.match(raw)
        if heading:
            negative = bool(_NOT_SECTION.search(heading.group(1)))
            continue
        item = _ITEM.match(raw)
        if item:
            items.append((negative, item.group(1)))
        elif raw[:1].isspace() and raw.strip() and items:  # a wrapped item continues
            last_negative, text = items[-1]
            items[-1] = (last_negative, f"{text} {raw.strip()}")
    tasks: list[str] = []
    nots: list[str] = []
    for is_not, text in items:
        text = _clean(text)
        if len(text.split()) >= 3:
            (nots if is_not else tasks).append(text)
    return tasks, nots


def body_sentences(body: str) -> list[str]:
    """The first sentence of every prose paragraph outside code fences, tables, lists and "when
    not to use" sections (at least five words): what a body without list items describes."""
    found: list[str] = []
    fenced = negative = False
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph and not negative:
            sentence = _clauses(_clean(" ".join(paragraph)))
            if sentence and len(sentence[0].split()) >= 5:
                found.append(sentence[0])
        paragraph.clear()

    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        heading = _HEADING.match(raw)
        if heading or not raw.strip() or _ITEM.match(raw) or raw.lstrip().startswith(("|", ">")):
            flush()
            if heading:
                negative = bool(_NOT_SECTION.search(heading.group(1)))
            continue
        paragraph.append(raw.strip())
    flush()
    return found


def siblings(listing: str) -> list[tuple[str, str]]:
    """`- name: description` lines of the `<sibling_skills>` section."""
    found = []
    for line in listing.splitlines():
        m = re.match(r"^\s*-\s*([^:\s]+):\s*(.*\S)\s*$", line)
        if m:
            found.append((m.group(1), m.group(2)))
    return found


def _clauses(text: str) -> list[str]:
    """A description's sentences and dash-separated clauses, each at least three words."""
    parts = re.split(r"(?<=[.!?。])\s+|\s+[—–]\s+", text)
    return [p.strip() for p in parts if len(p.split()) >= 3]


def language(text: str) -> str:
    """A language tag guessed from common function words (`en`, `fr`, `de`, `es`; `und` else)."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    scores = [(sum(1 for w in words if w in common), tag) for tag, common in _LANGS]
    best, tag = max(scores)
    return tag if best else "und"


def _slug(text: str, taken: set[str]) -> str:
    base = "-".join(re.findall(r"[^\W_]+", text.lower())[:5]) or "case"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


def draft_input(prompt: str) -> dict[str, Any]:
    """The draft tool's input for one drafting prompt (see the module docstring)."""
    sections = draft_sections(prompt)
    body = sections.get("skill_body", "")
    should_n = _count(prompt, r"exactly (\d+) should-trigger", 10)
    not_n = _count(prompt, r"exactly (\d+) should-not-trigger", 10)
    evals_n = _count(prompt, r"(\d+) eval cases", 0)
    tasks, nots = body_items(body)
    tasks += [t for t in body_sentences(body) if t not in tasks]
    near = [c for _, d in siblings(sections.get("sibling_skills", "")) for c in _clauses(d)]
    evals: list[Mapping[str, Any]] = []
    taken: set[str] = set()
    for line in tasks[:evals_n]:
        case: dict[str, Any] = {"id": _slug(line, taken), "prompt": line, "expectations": [line]}
        named = _FILE.search(line)
        if named:
            case["assertions"] = [{"type": "file_exists", "path": named.group(1)}]
        evals.append(case)
    return {
        "language": language(body),
        "should_trigger": tasks[:should_n],
        "should_not_trigger": (near + nots)[:not_n],
        "evals": evals,
    }
