"""The scripted drafter: answer an `evolve-action init` drafting request the way a model would.

Owns: `draft_input` (the forced draft tool's input, built from the request's own text) and
`draft_sections` (the tagged sections of a drafting prompt). The policy action `draft` calls it.

What it drafts, from the request alone (docs/init.md shows one draft as it comes out):
- should-trigger queries: the tasks `<skill_body>` describes (its list items outside code fences
  and "when not to use" sections, wrapped lines joined; then the first sentence of each prose
  paragraph; then its task-like headings), each phrased as a request a user types ("Can you …?",
  "Quick task: …"), in the body's language (English, French, German or Spanish framing; a body in
  another language keeps its tasks as written). When the body has fewer tasks than asked, a task
  is asked a second time with different framing.
- should-not-trigger queries (near-misses, as requests): the tasks of the sibling skills (at least
  one per sibling, from the task clauses of each `<sibling_skills>` description), then the body's
  "when not to use" items, then adjacent tasks on the body's own subjects that the skill does not
  do (a unit test, a rename, an explanation without any change).
- eval cases: the first tasks, phrased as requests (framed apart from the queries), each graded
  by an expectation stating the task and a `file_exists` assertion when the task names a file.

It follows the request's rules as a model should: no query names the skill, mentions skills, or
copies a run of as many consecutive words as the prompt forbids from the description or from a
sibling's description; none is shorter or longer than the prompt's bounds; no two are alike (word
sets at most `ALIKE` similar); the counts asked for (`Exactly N should-trigger…`, `N eval cases`)
are honoured as far as the text allows. The gates `init` applies afterwards are
`flows._draft`'s, the same as for a real model's draft.

Guarantees: pure: the same request gives the same draft. Never does: I/O, invent a feature (its
own words are the request framing, the adjacent-task framing, the ids and the language tag).
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
    A nested item is part of its parent step, not a task of its own: a parent ending in a
    preposition and a colon (`Write report.md with:`) takes its first nested item as its end.
    """
    items: list[tuple[bool, str]] = []
    fenced = False
    negative = False
    top: int | None = None  # the indentation of the current list's top-level items
    nested = False  # the last item seen was a nested one
    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        heading = _HEADING.match(raw)
        if heading:
            negative = bool(_NOT_SECTION.search(heading.group(1)))
            top = None
            continue
        item = _ITEM.match(raw)
        indent = len(raw) - len(raw.lstrip())
        if item and (top is None or indent <= top):
            top = indent if top is None else min(top, indent)
            items.append((negative, item.group(1)))
            nested = False
        elif item and items:
            last_negative, text = items[-1]
            if not nested and _OPEN_WITH.search(text):
                items[-1] = (last_negative, f"{_OPEN_END.sub('', text)} {item.group(1)}")
            nested = True
        elif raw[:1].isspace() and raw.strip() and items and not nested:  # a wrapped item
            last_negative, text = items[-1]
            items[-1] = (last_negative, f"{text} {raw.strip()}")
    tasks: list[str] = []
    nots: list[str] = []
    for is_not, text in items:
        text = _clean(text).rstrip(":").strip()
        if len(text.split()) >= 3:
            (nots if is_not else tasks).append(text)
    return tasks, nots


_OPEN_END = re.compile(r"\s*:\s*$")
_OPEN_WITH = re.compile(r"\b(?:with|for|to|of|in|into|by|as|avec|pour|de|mit|für|con|para)\s*:\s*$")


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


ALIKE = 0.7
"""Word-set (Jaccard) similarity at or above which the drafter treats two queries as alike."""

# Request framing per language: `{t}` is a task (an imperative or infinitive phrase), `{n}` a
# noun phrase. English tells the two apart (`_imperative`); the others frame both alike.
_ASK: Mapping[str, tuple[str, ...]] = {
    "en": (
        "Can you {t}?",
        "Quick task: {t}.",
        "I'd like you to {t}.",
        "Could you {t} for me?",
        "Help me {t}, please.",
        "Please {t}; I need it for today's review.",
    ),
    "fr": (
        "Peux-tu m'aider : {t} ?",
        "Petite demande : {t}.",
        "J'ai besoin de ceci : {t}.",
        "Pour la revue de demain : {t}.",
        "Merci de t'en occuper : {t}.",
        "Question rapide, tu peux {t} ?",
    ),
    "de": (
        "Kannst du mir helfen: {t}?",
        "Kurze Bitte: {t}.",
        "Ich brauche Folgendes: {t}.",
        "Für das Review morgen: {t}.",
        "Bitte kümmere dich darum: {t}.",
        "Schnelle Frage – geht das: {t}?",
    ),
    "es": (
        "¿Me ayudas con esto? {t}.",
        "Petición rápida: {t}.",
        "Necesito lo siguiente: {t}.",
        "Para la revisión de mañana: {t}.",
        "Encárgate de esto, por favor: {t}.",
        "Pregunta rápida, ¿puedes {t}?",
    ),
}
_ASK_AGAIN: Mapping[str, tuple[str, ...]] = {
    "en": (
        "I'm stuck: {t}. Tell me what you changed.",
        "Before I send it to the team, {t}.",
    ),
    "fr": (
        "Je bloque : {t}. Dis-moi ce que tu as changé.",
        "Avant que je l'envoie à l'équipe : {t}.",
    ),
    "de": (
        "Ich komme nicht weiter: {t}. Sag mir, was du geändert hast.",
        "Bevor ich es ans Team schicke: {t}.",
    ),
    "es": (
        "Estoy atascado: {t}. Dime qué cambiaste.",
        "Antes de enviarlo al equipo: {t}.",
    ),
}
_ASK_NOUN = (
    "I need help with {n}.",
    "Can you take care of {n} for me?",
    "Could you help me with {n}?",
)
_ADJACENT: Mapping[str, tuple[str, ...]] = {
    "en": (
        "Write a unit test for the code that handles {n}.",
        "Rename the variables in the code around {n}; keep the behaviour the same.",
        "Without changing any file, explain in two sentences what we use {n} for.",
        "Review my pull request that touches {n} and list style problems only.",
    ),
    "fr": (
        "Écris un test unitaire pour la fonction qui traite ceci : {n}.",
        "Sans modifier aucun fichier, explique en deux phrases ce que veut dire : {n}.",
        "Relis ma pull request qui touche à ceci et liste seulement les problèmes de style : {n}.",
    ),
    "de": (
        "Schreib einen Unit-Test für die Funktion, die sich darum kümmert: {n}.",
        "Erkläre in zwei Sätzen, ohne eine Datei zu ändern, was das hier bedeutet: {n}.",
    ),
    "es": (
        "Escribe una prueba unitaria para la función que se ocupa de esto: {n}.",
        "Sin cambiar ningún archivo, explica en dos frases qué significa esto: {n}.",
    ),
}
_NOT_A_TASK = re.compile(
    r"^(?:you|always|never|do not|don't|if|when|note|this|it|these|each time|important|warning|"
    r"tip|see|e\.g|i\.e|for|to|in|with|as|on|instead|after|before|from|by|only|also|then)\b"
    r"|^[^\w]",
    re.IGNORECASE,
)
_NOUN_START = frozenset(
    [
        "a",
        "an",
        "the",
        "each",
        "every",
        "all",
        "any",
        "one",
        "two",
        "some",
        "no",
        "its",
        "their",
        "his",
        "her",
        "my",
        "our",
        "your",
    ]
)
_WORD = re.compile(r"[^\W_]+")
_SKILL_WORDS = re.compile(r"\bskills?\b", re.IGNORECASE)
_HEADINGS_SKIPPED = re.compile(
    r"^(?:steps?|examples?|overview|usage|notes?|references?|output|input|format|tasks?|"
    r"workflow|instructions|table format|procedure|checklist)$",
    re.IGNORECASE,
)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


class _Rules:
    """The request's rules for every query, as the prompt states them."""

    def __init__(self, prompt: str, sections: Mapping[str, str]) -> None:
        self.name = sections.get("skill_name", "").strip()
        self.run = _count(prompt, r"never copy (\d+) or more consecutive words", 6)
        m = re.search(r"(\d+) to (\d+) characters", prompt)
        self.lo, self.hi = (int(m.group(1)), int(m.group(2))) if m else (10, 300)
        texts = [sections.get("description", "")]
        texts += [d for _, d in siblings(sections.get("sibling_skills", ""))]
        self.runs = {r for t in texts for r in self._runs(_words(t))}

    def _runs(self, words: list[str]) -> set[tuple[str, ...]]:
        n = self.run
        return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}

    def allows(self, text: str) -> bool:
        """Within bounds, not naming the skill nor skills, copying no run of a description."""
        if not self.lo <= len(text) <= self.hi or _SKILL_WORDS.search(text):
            return False
        words = _words(text)
        name = _words(self.name)
        if self.name and (
            self.name.casefold() in text.casefold()
            or f" {' '.join(name)} " in f" {' '.join(words)} "
        ):
            return False
        return not (self._runs(words) & self.runs)


def _alike(a: str, b: str) -> bool:
    wa, wb = set(_words(a)), set(_words(b))
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= ALIKE


def _lower_first(text: str) -> str:
    """The first letter lowercased unless the first word is an acronym or a name (`CSV`, `IANA`)."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and (first[1:2].isupper() or any(c.isdigit() for c in first)):
        return text
    return text[:1].lower() + text[1:]


def _task(text: str) -> str:
    """A task line as the body of a request: markup and end punctuation gone, long lines cut at a
    clause boundary, the first letter lowercased."""
    text = _clean(text).rstrip(".!?。").strip()
    if len(text) > 160:
        cut = re.search(r"[,;(:]\s", text[60:])
        if cut is not None:
            text = text[: 60 + cut.start()].strip()
    if text.count("(") > text.count(")"):  # a sentence split inside parentheses
        text = text[: text.rfind("(")].rstrip(" ,;:")
    return _lower_first(text)


_TASK_VERBS = frozenset(
    [
        "add",
        "analyse",
        "analyze",
        "apply",
        "build",
        "check",
        "clean",
        "compare",
        "compute",
        "configure",
        "convert",
        "count",
        "create",
        "debug",
        "delete",
        "deploy",
        "design",
        "draft",
        "draw",
        "edit",
        "export",
        "extract",
        "fill",
        "find",
        "fix",
        "format",
        "generate",
        "import",
        "install",
        "list",
        "load",
        "merge",
        "migrate",
        "move",
        "normalise",
        "normalize",
        "open",
        "optimise",
        "optimize",
        "parse",
        "plan",
        "read",
        "record",
        "refactor",
        "remove",
        "rename",
        "render",
        "replace",
        "report",
        "review",
        "rotate",
        "run",
        "scan",
        "search",
        "send",
        "set",
        "sort",
        "split",
        "start",
        "summarise",
        "summarize",
        "test",
        "track",
        "transform",
        "translate",
        "update",
        "upgrade",
        "validate",
        "verify",
        "watermark",
        "write",
    ]
)
"""Verbs a heading must open with to count as a task (headings are often nouns: `Quick start`)."""
# A definition-list item (`Complexity — Is the task multi-step…`, `Value: …`): a term, not a task.
_DEFINITION = re.compile(r"^\W*\w+(?:\s+\w+){0,2}\s*(?:—|–|:|\s-)\s")


def _sentence_case(heading: str) -> str:
    """A Title Case heading in sentence case (`Extract Text with Layout` → `Extract text with
    layout`); acronyms (`PDF`) stay."""
    words = heading.split()
    return " ".join(
        [words[0], *(w.lower() if w[:1].isupper() and w[1:].islower() else w for w in words[1:])]
    )


def _imperative(task: str) -> bool:
    """An English task starts with a verb (not a determiner, a pronoun, an `-ing` form or a
    plural noun)."""
    first = (task.split(" ", 1)[0]).lower()
    plural = first.endswith("s") and not first.endswith("ss")  # `charts …`, not `process …`
    return first.isalpha() and first not in _NOUN_START and not first.endswith("ing") and not plural


def _base_verb(word: str) -> str:
    """A description's third-person verb in the base form (`Summarises` → `summarise`)."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


def _phrase(task: str, lang: str, i: int, *, again: bool = False) -> str:
    """Task `task` framed as a request (framing `i`, cycled)."""
    if lang not in _ASK:
        return task[:1].upper() + task[1:]
    if lang == "en" and not _imperative(task):
        return _ASK_NOUN[i % len(_ASK_NOUN)].format(n=task)
    frames = _ASK_AGAIN[lang] if again else _ASK[lang]
    return frames[i % len(frames)].format(t=task)


_USE_WHEN = re.compile(
    r"^use\s+(?:this\s+)?(?:skill\s+)?(?:when|whenever|if)\s+(?:(?:a|the)\s+)?"
    r"(?:user|you|someone)\s+(?:asks?|wants?|needs?|requests?)\s+(?:you\s+)?(to|for|about)\s+",
    re.IGNORECASE,
)
_USE_FOR = re.compile(r"^use\s+(?:this\s+)?(?:skill\s+)?(to|for)\s+", re.IGNORECASE)


def _sibling_tasks(description: str) -> list[tuple[str, bool]]:
    """A sibling description's task clauses: `(text, is_noun_phrase)`. "Use when the user asks
    to/for …" and "Use to/for …" are stripped; a clause without one is a task when it opens with
    a verb (`Adds …` → `add …`); descriptive clauses (`the right syntax …`) are left out."""
    out: list[tuple[str, bool]] = []
    for clause in _clauses(" ".join(description.split())):
        clause = clause.rstrip(".!?").strip()
        m = _USE_WHEN.match(clause) or _USE_FOR.match(clause)
        if m is not None:
            noun, rest = m.group(1).lower() in ("for", "about"), clause[m.end() :]
        else:
            first, _, tail = clause.partition(" ")
            if first.lower() in _NOUN_START or first.lower().endswith("ing") or not tail:
                continue
            noun, rest = False, f"{_base_verb(first)} {tail}"
        if len(rest.split()) >= 2 and not _NOT_A_TASK.match(rest):
            out.append((_lower_first(rest), noun))
    return out


_TAIL = re.compile(r"\s(?:to|in|into|over|from|for|of|on|with|across)\s[^,]*$")


def _without_tail(text: str) -> str:
    """`text` without its closing phrase (`add a release section to CHANGELOG.md files` → `add a
    release section`): the shorter request when the whole would copy its description."""
    tail = _TAIL.search(text)
    return text[: tail.start()].strip() if tail else text


def _listed(text: str, noun: bool) -> list[str]:
    """Each item of a clause that lists several (`totals, averages or group sums over a CSV file`
    → `totals over a CSV file`, …), sharing the clause's verb and its closing phrase."""
    tail = _TAIL.search(text)
    head = text[: tail.start()] if tail else text
    parts = [p for p in re.split(r",\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+", head) if p.strip()]
    if len(parts) < 2 or (not noun and any(len(p.split()) < 2 for p in parts)):
        return []
    verb = "" if noun else parts[0].split()[0]
    out = []
    for i, part in enumerate(parts):
        if verb and i > 0 and part.split()[0].lower() != verb.lower():
            part = f"{verb} {part}"
        out.append(f"{part.strip()} {tail.group(0).strip() if tail else ''}".strip())
    return out


def _first_clause(task: str) -> str:
    """A task up to its first comma or semicolon outside parentheses."""
    depth = 0
    for i, ch in enumerate(task):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and ch in ",;" and task[i + 1 : i + 2] == " ":
            return task[:i]
    return task


_SUBJECT_ENDS = frozenset(
    [
        "from",
        "to",
        "into",
        "by",
        "and",
        "or",
        "with",
        "in",
        "of",
        "for",
        "on",
        "as",
        "at",
        "et",
        "ou",
        "pour",
        "avec",
        "dans",
        "sur",
        "und",
        "oder",
        "mit",
        "für",
        "auf",
        "y",
        "o",
        "con",
        "para",
        "en",
        "sobre",
    ]  # es
)


def _subject(task: str, lang: str) -> str:
    """What a task acts on: its words after the verb, up to a comma or a second clause, without
    its determiner, then, in English, `the` (`Convert a meeting time from one zone…` → `the
    meeting time`), except before a file name."""
    words = _first_clause(task).split("(", 1)[0].split()[1:]
    while words and words[0].lower() in _NOUN_START:
        words = words[1:]
    stop = next((i for i, w in enumerate(words) if w.lower() in _SUBJECT_ENDS), len(words))
    subject = " ".join(words[: min(stop, 5)])
    if not subject[:1].isalnum() or _NOT_A_TASK.match(subject):
        return ""
    if lang != "en" or not subject or _FILE.fullmatch(subject):
        return subject  # a file name: no article
    return f"the {subject}"


def _headings(body: str) -> list[str]:
    """Task-like headings (at least two words, not a generic section name), outside fences and
    "when not to use" sections."""
    found = []
    fenced = False
    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(raw)
        if heading is None:
            continue
        text = _clean(heading.group(1))
        if (
            len(text.split()) >= 2
            and not _NOT_SECTION.search(text)
            and not _HEADINGS_SKIPPED.match(text)
        ):
            found.append(text)
    return found[1:] if found else found  # the first heading is the title


class _Picker:
    """Keeps the queries that follow the rules and are unlike those kept (on either side)."""

    def __init__(self, rules: _Rules, others: list[str] | None = None) -> None:
        self.rules = rules
        self.kept: list[str] = []
        self.others = others if others is not None else []

    def add(self, text: str) -> bool:
        text = " ".join(text.split())
        if not self.rules.allows(text):
            return False
        if any(_alike(text, k) for k in self.kept + self.others):
            return False
        self.kept.append(text)
        return True


def draft_input(prompt: str) -> dict[str, Any]:
    """The draft tool's input for one drafting prompt (see the module docstring)."""
    sections = draft_sections(prompt)
    body = sections.get("skill_body", "")
    should_n = _count(prompt, r"exactly (\d+) should-trigger", 10)
    not_n = _count(prompt, r"exactly (\d+) should-not-trigger", 10)
    evals_n = _count(prompt, r"(\d+) eval cases", 0)
    lang = language(body)
    rules = _Rules(prompt, sections)
    items, nots = body_items(body)
    tasks: list[str] = []
    for t in [*items, *body_sentences(body)]:
        task = _task(t)
        if task and not _NOT_A_TASK.match(task) and not _DEFINITION.match(t) and task not in tasks:
            tasks.append(task)
    if len(tasks) < 5:  # headings are tasks only when the text has few others, and open with a verb
        for t in _headings(body):
            task = _task(_sentence_case(t))
            verb = task.split(" ", 1)[0].lower()
            if verb in _TASK_VERBS and not _NOT_A_TASK.match(task) and task not in tasks:
                tasks.append(task)

    should = _Picker(rules)
    used: list[str] = []  # the tasks asked for, in order
    for i, task in enumerate(tasks):
        if len(should.kept) >= should_n:
            break
        if should.add(_phrase(task, lang, i)):
            used.append(task)
    for i, task in enumerate(used):  # too few tasks: ask again (its first clause), framed apart
        if len(should.kept) >= should_n or len(should.kept) >= 2 * len(used):
            break
        should.add(_phrase(_first_clause(task), lang, i, again=True))

    near = _Picker(rules, others=should.kept)
    by_sibling = [
        [
            (form, noun)
            for text, noun in _sibling_tasks(d)
            for form in dict.fromkeys([text, *(_listed(text, noun) or [_without_tail(text)])])
        ]
        for _, d in siblings(sections.get("sibling_skills", ""))
    ]
    n = 0
    while any(by_sibling) and len(near.kept) < not_n:
        for candidates in by_sibling:  # round robin: every sibling's first task before a second
            while candidates and len(near.kept) < not_n:
                form, noun = candidates.pop(0)
                if noun and lang == "en":
                    ask = _ASK_NOUN[n % len(_ASK_NOUN)].format(n=form)
                else:
                    ask = _phrase(form, lang, n + 1)
                if near.add(ask):
                    n += 1
                    break
    for item in nots:
        if len(near.kept) >= not_n:
            break
        if near.add(_phrase(_task(item), lang, n + 2)):
            n += 1
    adjacent = _ADJACENT.get(lang, ())
    subjects = [s for s in dict.fromkeys(_subject(t, lang) for t in tasks) if s]
    for i in range(len(subjects) * len(adjacent)):  # each subject with each framing, in turn
        if len(near.kept) >= not_n:
            break
        frame = adjacent[(i + i // len(subjects)) % len(adjacent)]
        near.add(frame.format(n=subjects[i % len(subjects)]))

    evals: list[Mapping[str, Any]] = []
    taken: set[str] = set()
    for i, task in enumerate(tasks):
        if len(evals) >= evals_n:
            break
        ask = _phrase(task, lang, i + 3)
        if not rules.allows(ask):
            continue
        case: dict[str, Any] = {
            "id": _slug(task, taken),
            "prompt": ask,
            "expectations": [f"The work asked for is done: {task}"],
        }
        named = _FILE.search(task)
        if named:
            case["assertions"] = [{"type": "file_exists", "path": named.group(1)}]
        evals.append(case)
    return {
        "language": lang,
        "should_trigger": should.kept,
        "should_not_trigger": near.kept,
        "evals": evals,
    }
