"""Drafting trigger queries and eval cases: the request, the answer, the quality gates, the files.

Owns: the drafting request `evolve-action init` sends for one skill (`build_request`: the prompt and
the forced `submit_draft` tool, docs/init.md shows one in full), reading the model's answer
(`parse_answer`), the quality gates every draft passes (`gate_queries`, `gate_evals`) and the text
of the files written: evolve's (`render_triggers`, `render_evals`, each opening with the draft
comment) and skill-creator's (`render_creator_evals` with a `_draft` note first,
`render_creator_triggers` a bare array).

Guarantees: pure functions of their arguments (no I/O, no clock, no environment). A gated draft
has no exact or near-duplicate query, no query naming the skill or copying a run of
`COPY_RUN_WORDS` words of its description or of a sibling skill's description, every query within `QUERY_CHARS`, no query on both
sides, and a should/should-not balance (the larger side at most twice the smaller; no triggers at
all when one side is empty); every drop is recorded with its reason. Eval cases keep only
`file_exists`/`file_absent`/`regex`/`not_regex`/`command` assertions with valid fields (RE2
patterns compile) and fixtures under `files/`. Never does: call a model, write files, decide which
skills to draft (the `_init` flow does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evolve_action.encoding import Re2Error, compile_re2, encode_json, encode_yaml, go_clean

__all__ = [
    "COPY_RUN_WORDS",
    "DRAFT_TOOL",
    "QUERY_CHARS",
    "DraftAnswer",
    "DraftRequest",
    "DraftedCase",
    "Dropped",
    "GatedQueries",
    "SkillText",
    "build_request",
    "draft_comment",
    "draft_note",
    "gate_evals",
    "gate_queries",
    "parse_answer",
    "render_creator_evals",
    "render_creator_triggers",
    "render_evals",
    "render_triggers",
]

DRAFT_TOOL = "submit_draft"
"""The forced tool the drafting model answers through."""

QUERY_CHARS = (10, 300)
"""Inclusive length bounds of a query or eval prompt, in characters."""

COPY_RUN_WORDS = 6
"""A query holding this many consecutive words of the skill's description copies it."""

NEAR_DUPLICATE = 0.8
"""Word-set Jaccard similarity at or above which two queries are near duplicates."""

BODY_CHARS = 20_000
"""At most this much of a SKILL.md body is sent (the rest is cut, and the prompt says so)."""

SIBLINGS = 20
"""At most this many sibling skills are listed in a request."""

SIBLING_CHARS = 300
"""A sibling's description is cut to this many characters."""

MAX_TOKENS = 8192
"""`max_tokens` of a drafting request."""

SYSTEM = (
    "You draft evaluation data for coding-agent skills: the requests a skill must answer, the "
    "near-misses it must leave alone, and small checkable tasks. You use only what the skill's "
    f"own text says, and you answer only by calling the {DRAFT_TOOL} tool."
)

_ASSERTION_TYPES = ("file_exists", "file_absent", "regex", "not_regex", "command")


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillText:
    """What a request is built from: one skill's text and its siblings' descriptions."""

    name: str
    description: str
    body: str
    siblings: tuple[tuple[str, str], ...] = ()
    """`(name, description)` of the other skills of the same plugin."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftRequest:
    """The `messages.create` arguments of one drafting request (docs/init.md)."""

    system: str
    prompt: str
    tool: Mapping[str, Any]

    def params(self, model: str) -> dict[str, Any]:
        """The keyword arguments of `client.messages.create`."""
        return {
            "model": model,
            "max_tokens": MAX_TOKENS,
            "system": self.system,
            "tools": [dict(self.tool)],
            "tool_choice": {"type": "tool", "name": DRAFT_TOOL},
            "messages": [{"role": "user", "content": self.prompt}],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftedCase:
    """One drafted eval case, gated."""

    id: str
    prompt: str
    files: tuple[tuple[str, str], ...] = ()
    """`(path below files/, content)`."""
    assertions: tuple[Mapping[str, Any], ...] = ()
    expectations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftAnswer:
    """The model's answer as it came (before the gates)."""

    language: str
    should: tuple[str, ...]
    should_not: tuple[str, ...]
    evals: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Dropped:
    """One query or case a gate removed, and why."""

    text: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GatedQueries:
    """The queries that passed the gates, and the drops."""

    should: tuple[str, ...] = ()
    should_not: tuple[str, ...] = ()
    dropped: tuple[Dropped, ...] = field(default_factory=tuple)


_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "language": {
            "type": "string",
            "description": "BCP 47 tag of the language the queries are written in (the skill's)",
        },
        "should_trigger": {"type": "array", "items": {"type": "string"}},
        "should_not_trigger": {"type": "array", "items": {"type": "string"}},
        "evals": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "short kebab-case id"},
                    "prompt": {"type": "string"},
                    "files": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "path": {"type": "string", "description": "relative path"},
                                "content": {"type": "string"},
                            },
                            "required": ["path", "content"],
                        },
                    },
                    "assertions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "type": {"type": "string", "enum": list(_ASSERTION_TYPES)},
                                "path": {"type": "string"},
                                "pattern": {"type": "string", "description": "RE2"},
                                "run": {"type": "string", "description": "a shell command"},
                            },
                            "required": ["type"],
                        },
                    },
                    "expectations": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["id", "prompt"],
            },
        },
    },
    "required": ["language", "should_trigger", "should_not_trigger", "evals"],
}


def build_request(skill: SkillText, *, should: int, should_not: int, evals: int) -> DraftRequest:
    """The drafting request for one skill (the prompt's rules are explained in docs/init.md)."""
    body = skill.body.strip()
    cut = ""
    if len(body) > BODY_CHARS:
        body, cut = body[:BODY_CHARS], f"\n(The body is cut at {BODY_CHARS} characters.)"
    listed = [
        f"- {name}: {' '.join(desc.split())[:SIBLING_CHARS]}"
        for name, desc in skill.siblings[:SIBLINGS]
    ]
    sibling_text = "\n".join(listed) if listed else "(none)"
    items = [
        f"1. Exactly {should} should-trigger queries: realistic requests a user would type when "
        "they need one of the tasks the skill body describes. Base them on the body, not on the "
        "description: do not paraphrase the description (these queries must still test a "
        "rewritten description), and never copy "
        f"{COPY_RUN_WORDS} or more consecutive words from it.",
        f"2. Exactly {should_not} should-not-trigger queries: near-misses. Adjacent tasks in the "
        "same domain that this skill does not do, and the tasks of the sibling skills listed "
        "above (at least one for each sibling, when there are siblings), asked the way a user "
        f"would: never copy {COPY_RUN_WORDS} or more consecutive words from a sibling's "
        "description either.",
    ]
    if evals:
        items.append(
            f"3. {evals} eval cases: a task prompt the skill is for; the small fixture files it "
            "needs (path relative to the workspace, content under 2,000 characters); "
            "deterministic assertions where the outcome can be checked (file_exists or "
            "file_absent with path; regex or not_regex with an RE2 pattern, no lookaround, and an "
            "optional path, else the final answer is matched; command with run, a shell command "
            "that exits 0 on success); and expectations, statements an LLM judge grades, for "
            "the rest."
        )
    else:
        items.append("3. No eval cases: send an empty evals list.")
    lo, hi = QUERY_CHARS
    prompt = "\n".join(
        [
            "Draft evaluation data for one coding-agent skill, grounded only in the skill's own "
            "text below.",
            "",
            f"<skill_name>{skill.name}</skill_name>",
            "<description>",
            " ".join(skill.description.split()),
            "</description>",
            "<skill_body>",
            body + cut,
            "</skill_body>",
            "<sibling_skills>",
            sibling_text,
            "</sibling_skills>",
            "",
            "Write, in the language the skill body is written in:",
            *items,
            "",
            "Rules for every query and prompt:",
            f"- Never name the skill ({skill.name}) and never mention skills.",
            f"- One request each, {lo} to {hi} characters, written the way a user types it: "
            "concrete (file names, values, context), varied in wording and length.",
            "- No two alike. Leave out any query that could fairly go either way by the skill's "
            "own text.",
            "- Use only what the skill's text says it does; do not invent features.",
            "",
            f"Call {DRAFT_TOOL} once with everything.",
        ]
    )
    tool = {
        "name": DRAFT_TOOL,
        "description": "Submit the drafted trigger queries and eval cases for the skill.",
        "input_schema": _TOOL_SCHEMA,
    }
    return DraftRequest(system=SYSTEM, prompt=prompt, tool=tool)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):  # some models double-encode arrays
        try:
            value = json.loads(value)
        except ValueError:
            return ()
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def parse_answer(tool_input: Any) -> DraftAnswer | None:
    """The draft tool's input as a `DraftAnswer`; None when it is not an object."""
    if not isinstance(tool_input, Mapping):
        return None
    evals = tool_input.get("evals")
    if isinstance(evals, str):
        try:
            evals = json.loads(evals)
        except ValueError:
            evals = []
    language = tool_input.get("language")
    return DraftAnswer(
        language=language if isinstance(language, str) else "",
        should=_strings(tool_input.get("should_trigger")),
        should_not=_strings(tool_input.get("should_not_trigger")),
        evals=tuple(e for e in evals if isinstance(e, Mapping)) if isinstance(evals, list) else (),
    )


_WORDS = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.casefold())


def _similar(a: str, b: str) -> bool:
    wa, wb = set(_words(a)), set(_words(b))
    if not wa or not wb:
        return a.casefold() == b.casefold()
    return len(wa & wb) / len(wa | wb) >= NEAR_DUPLICATE


def _names_skill(text: str, name: str) -> bool:
    """The name as written, or its words in sequence (`csv-report` → "csv report")."""
    if name.casefold() in text.casefold():
        return True
    spaced = " ".join(_words(name))
    return bool(spaced) and f" {spaced} " in f" {' '.join(_words(text))} "


def _copies(text: str, description: str) -> bool:
    words = _words(description)
    if len(words) < COPY_RUN_WORDS:
        return False
    runs = {" ".join(words[i : i + COPY_RUN_WORDS]) for i in range(len(words) - COPY_RUN_WORDS + 1)}
    mine = _words(text)
    return any(
        " ".join(mine[i : i + COPY_RUN_WORDS]) in runs
        for i in range(len(mine) - COPY_RUN_WORDS + 1)
    )


def check_text(
    text: str, *, name: str, description: str, siblings: Sequence[str] = ()
) -> str | None:
    """Why one query (or eval prompt) fails the per-text gates, or None (`siblings`: the sibling
    skills' descriptions)."""
    lo, hi = QUERY_CHARS
    if len(text) < lo:
        return f"shorter than {lo} characters"
    if len(text) > hi:
        return f"longer than {hi} characters"
    if _names_skill(text, name):
        return "names the skill"
    if _copies(text, description):
        return f"copies {COPY_RUN_WORDS} or more consecutive words of the description"
    if any(_copies(text, other) for other in siblings):
        return f"copies {COPY_RUN_WORDS} or more consecutive words of a sibling's description"
    return None


def gate_queries(
    answer: DraftAnswer, *, name: str, description: str, siblings: Sequence[str] = ()
) -> GatedQueries:
    """Apply the query gates in order: per-text checks, exact and near duplicates (within and
    across sides: a query on both sides is ambiguous and leaves both), then the balance
    (`siblings`: the sibling skills' descriptions, which no query may copy either)."""
    dropped: list[Dropped] = []
    sides: list[list[str]] = [[], []]
    for side, queries in enumerate((answer.should, answer.should_not)):
        for raw in queries:
            text = " ".join(raw.split())
            why = check_text(text, name=name, description=description, siblings=siblings)
            if why is None:
                if any(k.casefold() == text.casefold() for k in sides[side]):
                    why = "exact duplicate"
                elif any(_similar(k, text) for k in sides[side]):
                    why = "near duplicate"
            if why is not None:
                dropped.append(Dropped(text=text, reason=why))
                continue
            sides[side].append(text)
    should, should_not = sides
    both = [q for q in should if any(_similar(q, o) for o in should_not)]
    both_not = [o for o in should_not if any(_similar(q, o) for q in should)]
    for q in both + both_not:
        dropped.append(Dropped(text=q, reason="on both sides (ambiguous)"))
    should = [q for q in should if q not in both]
    should_not = [q for q in should_not if q not in both_not]
    if not should or not should_not:
        for q in should + should_not:
            dropped.append(Dropped(text=q, reason="no query on the other side (unbalanced)"))
        return GatedQueries(dropped=tuple(dropped))
    for big, small in ((should, should_not), (should_not, should)):
        while len(big) > 2 * len(small):
            dropped.append(Dropped(text=big.pop(), reason="over the 2:1 balance"))
    return GatedQueries(should=tuple(should), should_not=tuple(should_not), dropped=tuple(dropped))


def _fixture_path(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    path = raw.replace("\\", "/").strip()
    path = path.removeprefix("files/")
    clean = go_clean(path)
    if clean.startswith(("/", "..")) or clean in (".", "") or ":" in clean:
        return None
    return clean


def _assertion(raw: Any) -> Mapping[str, Any] | None:
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    if kind not in _ASSERTION_TYPES:
        return None
    if kind in ("file_exists", "file_absent"):
        path = _fixture_path(raw.get("path"))
        return {"type": kind, "path": path} if path else None
    if kind == "command":
        run = raw.get("run")
        return {"type": kind, "run": run} if isinstance(run, str) and run.strip() else None
    pattern = raw.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return None
    try:
        compile_re2(pattern)
    except Re2Error:
        return None
    out: dict[str, Any] = {"type": kind, "pattern": pattern}
    path = _fixture_path(raw.get("path")) if raw.get("path") else None
    if path:
        out["path"] = path
    return out


def gate_evals(
    raw: Sequence[Mapping[str, Any]], *, name: str, description: str, limit: int
) -> tuple[tuple[DraftedCase, ...], tuple[Dropped, ...]]:
    """Apply the eval gates: prompt checks (as for queries), duplicate prompts, unique ids, valid
    assertions (others dropped), fixtures under `files/` (unsafe paths dropped), and at least one
    assertion or expectation left; at most `limit` cases."""
    kept: list[DraftedCase] = []
    dropped: list[Dropped] = []
    ids: set[str] = set()
    for case in raw:
        prompt = case.get("prompt")
        if not isinstance(prompt, str):
            continue
        prompt = prompt.strip()
        why = check_text(" ".join(prompt.split()), name=name, description=description)
        if why is None and any(_similar(k.prompt, prompt) for k in kept):
            why = "near duplicate"
        expectations = tuple(e.strip() for e in _strings(case.get("expectations")) if e.strip())
        assertions = tuple(
            a for a in map(_assertion, _list(case.get("assertions"))) if a is not None
        )
        if why is None and not expectations and not assertions:
            why = "no assertion or expectation"
        if why is None and len(kept) >= limit:
            why = f"over the {limit} cases asked for"
        if why is not None:
            dropped.append(Dropped(text=prompt, reason=why))
            continue
        ident = "-".join(_words(str(case.get("id", ""))))[:40] or f"case-{len(kept) + 1}"
        base, n = ident, 2
        while ident in ids:
            ident, n = f"{base}-{n}", n + 1
        ids.add(ident)
        files: list[tuple[str, str]] = []
        for item in _list(case.get("files")):
            if not isinstance(item, Mapping) or not isinstance(item.get("content"), str):
                continue
            path = _fixture_path(item.get("path"))
            if path is not None and path not in {p for p, _ in files}:
                files.append((path, item["content"]))
        kept.append(
            DraftedCase(
                id=ident,
                prompt=prompt,
                files=tuple(files),
                assertions=assertions,
                expectations=expectations,
            )
        )
    return tuple(kept), tuple(dropped)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def draft_comment(model: str) -> str:
    """The comment every drafted file opens with."""
    return (
        f"# DRAFT by `evolve-action init` with {model}: review every entry before committing.\n"
        "# Drafted from this skill's SKILL.md; edit or delete what is wrong, then remove this\n"
        "# comment. `evolve-action init --check` runs the triggers once against the description.\n"
    )


def _trigger_items(queries: GatedQueries) -> list[dict[str, Any]]:
    items = [{"query": q, "should_trigger": True} for q in queries.should]
    return items + [{"query": q, "should_trigger": False} for q in queries.should_not]


def _case_items(cases: Sequence[DraftedCase], files_prefix: str) -> list[dict[str, Any]]:
    out = []
    for case in cases:
        item: dict[str, Any] = {"id": case.id, "prompt": case.prompt}
        if case.files:
            item["files"] = [f"{files_prefix}{p}" for p, _ in case.files]
        if case.expectations:
            item["expectations"] = list(case.expectations)
        if case.assertions:
            item["assertions"] = [dict(a) for a in case.assertions]
        out.append(item)
    return out


def _yaml_list(key: str, items: Sequence[Mapping[str, Any]]) -> str:
    """`key:` and a block list of mappings whose keys keep the given order (`encode_yaml` sorts
    keys; a reviewer reads `id` and `prompt` before the assertions)."""
    out = [f"{key}:\n"]
    for item in items:
        block = "".join(encode_yaml({k: v}) for k, v in item.items())
        for i, line in enumerate(block.splitlines(keepends=True)):
            out.append(("  - " if i == 0 else "    ") + line if line.strip() else line)
    return "".join(out)


def render_triggers(skill: str, queries: GatedQueries, *, model: str) -> str:
    """evolve's `triggers.yaml`: the draft comment, then should-trigger queries, then should-not."""
    return (
        draft_comment(model)
        + encode_yaml({"skill_name": skill})
        + _yaml_list("triggers", _trigger_items(queries))
    )


def render_evals(skill: str, cases: Sequence[DraftedCase], *, model: str) -> str:
    """evolve's `evals.yaml`: the draft comment, then the cases (fixtures as `files/<path>`)."""
    return (
        draft_comment(model)
        + encode_yaml({"skill_name": skill})
        + _yaml_list("evals", _case_items(cases, "files/"))
    )


def draft_note(model: str) -> str:
    """The draft comment as one line, for JSON files (the `_draft` key)."""
    return " ".join(line.lstrip("# ") for line in draft_comment(model).splitlines())


def render_creator_triggers(queries: GatedQueries) -> str:
    """skill-creator's trigger eval set: a bare JSON array (it has no room for the draft note:
    `init` prints it, and the evals file beside it carries it)."""
    return encode_json(_trigger_items(queries))


def render_creator_evals(skill: str, cases: Sequence[DraftedCase], *, model: str) -> str:
    """skill-creator's `evals/evals.json`, opening with the `_draft` note (fixtures as
    `evals/files/<path>`, relative to the skill, as skill-creator writes them)."""
    return encode_json(
        {
            "_draft": draft_note(model),
            "skill_name": skill,
            "evals": _case_items(cases, "evals/files/"),
        }
    )
