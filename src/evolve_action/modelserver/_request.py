"""Read an Anthropic Messages request the way the policy sees it.

Owns: `RequestView` (prompt, turn, tools, tool results, system text, skill listing, forced tool, judge
assertions) and the deterministic token estimate. Guarantees: pure functions of the request body; never
raises on odd shapes (missing or mistyped fields read as empty). Never does: I/O.

Claude Code wraps the user's prompt: the first user message holds `<system-reminder>` text blocks
(CLAUDE.md context, the skill listing…) before the prompt itself. `prompt` strips those, so rules match
what the user typed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_COMMAND_TAGS = re.compile(r"<(command-[a-z-]+|local-command-[a-z-]+)>.*?</\1>", re.DOTALL)


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """One entry of the skill listing the agent sends."""

    name: str
    description: str
    path: str = ""
    """The listed `SKILL.md` path, when the listing gives one (Codex does; Claude Code does not)."""
    name_only: bool = False
    """Listed as `- name` with no description: Claude Code's listing budget ran out (the model
    sees the name only, never the description)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Assertion:
    """One numbered assertion found in a judge prompt."""

    id: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestView:
    """What the policy matches on, extracted from one request body."""

    path: str
    model: str
    stream: bool
    prompt: str
    """First user text of the conversation, system reminders removed and stripped."""
    last_user: str
    """Latest user text (reminders removed); empty when the last user turn only holds tool results."""
    turn: int
    """1 + the number of assistant messages in the conversation."""
    tools: tuple[str, ...]
    """Names of the offered tools, in order."""
    tool_results: str
    """Text of the tool results in the latest user message, joined by newlines."""
    all_tool_results: str
    """Text of every tool result in the conversation."""
    system: str
    """The system prompt plus the text of `role: "system"` messages (see `context_text`)."""
    forced_tool: str | None
    """`tool_choice.name` when the request forces one tool."""
    tool_choice: str = "auto"
    """`tool_choice.type` of the request: `auto` (also when absent), `any`, `tool` or `none`."""
    skills: tuple[Skill, ...] = ()
    """The skill listing (from the `Skill` tool description or a system reminder)."""
    tool_uses: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """Every `tool_use` (name, input) the assistant made earlier in the conversation."""
    session: str = ""
    """The client's session id: header `X-Claude-Code-Session-Id`, else `metadata.user_id.session_id`."""
    body: Mapping[str, Any] = field(default_factory=dict)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "tool_result":
                    parts.append(_text_of(block.get("content")))
            elif isinstance(block, str):
                parts.append(block)
    return "\n".join(parts)


def _user_text(content: Any) -> str:
    """User-typed text of a message: text blocks only, reminders and command tags removed."""
    blocks: list[str] = []
    if isinstance(content, str):
        blocks = [content]
    elif isinstance(content, list):
        blocks = [
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    cleaned = [_COMMAND_TAGS.sub("", _REMINDER.sub("", b)).strip() for b in blocks]
    return "\n".join(c for c in cleaned if c)


def _tool_results(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(
        _text_of(b.get("content"))
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "tool_result"
    )


def system_text(body: Mapping[str, Any]) -> str:
    """The system prompt as one string (string or list of text blocks)."""
    return _text_of(body.get("system"))


def context_text(body: Mapping[str, Any]) -> str:
    """The system prompt, the text of every `role: "system"` message and every `<system-reminder>`
    of a user message: depending on the model, Claude Code puts its environment section (working
    directory) and skill listing in either place, so conditions must see both."""
    parts = [system_text(body)]
    for m in _messages(body):
        if m.get("role") == "system":
            parts.append(_text_of(m.get("content")))
        elif m.get("role") == "user":
            parts.extend(
                r.group(0) for text in _texts(m.get("content")) for r in _REMINDER.finditer(text)
            )
    return "\n".join(p for p in parts if p)


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    msgs = body.get("messages")
    if not isinstance(msgs, list):
        return []
    return [m for m in msgs if isinstance(m, Mapping)]


def _tools(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    return [t for t in tools if isinstance(t, Mapping)]


_LIST_ITEM = re.compile(r"^\s*[-*]\s+\"?([A-Za-z0-9][\w.:/-]*?)\"?\s*:(?:\s+(.*?))?\s*$")
"""`- name: description` (the colon followed by a space or the end: `plug:one` is one name)."""
_NAME_ONLY_ITEM = re.compile(r"^\s*[-*]\s+\"?([A-Za-z0-9][\w.:/-]*)\"?\s*$")
"""`- name` alone: a skill whose description did not fit Claude Code's listing budget."""
_ANCHOR = re.compile(
    r"following skills|skills are available|available skills|available_skills|skill listing",
    re.IGNORECASE,
)
_XML_SKILL = re.compile(
    r"<skill>\s*<name>\s*(.*?)\s*</name>\s*<description>\s*(.*?)\s*</description>", re.DOTALL
)


def parse_skill_listing(text: str) -> tuple[Skill, ...]:
    """Skills listed in `text`, in listing order.

    Two shapes are read: `<skill><name>…</name><description>…</description>` blocks, and (what Claude
    Code 2.1 sends) a paragraph introduced by "The following skills are available…" followed by
    `- name: description` lines; a non-item line continues the previous description, and the list ends
    at the first blank line after an item (or at a non-item line after a name-only entry). A line
    `- name` with no colon is a skill listed by name only (`Skill.name_only`): Claude Code drops the
    descriptions that do not fit its listing budget. (A continuation line that is itself a single
    `- word` would read as such an entry; Claude Code's descriptions are one line.)
    """
    found: dict[str, Skill] = {}
    for m in _XML_SKILL.finditer(text):
        found.setdefault(m.group(1), Skill(name=m.group(1), description=m.group(2)))
    if found:
        return tuple(found.values())
    for anchor in _ANCHOR.finditer(text):
        lines = text[anchor.end() :].split("\n")[1:]
        items: list[tuple[str, list[str]]] = []
        for line in lines:
            item = _LIST_ITEM.match(line)
            bare = None if item else _NAME_ONLY_ITEM.match(line)
            if item:
                items.append((item.group(1), [item.group(2) or ""]))
            elif bare:
                items.append((bare.group(1), []))
            elif not line.strip():
                if items:
                    break
            elif items and items[-1][1]:
                items[-1][1].append(line.strip())
            else:
                break
        for name, parts in items:
            found.setdefault(
                name, Skill(name=name, description=" ".join(parts), name_only=not parts)
            )
        if found:
            break
    return tuple(found.values())


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)
        ]
    return []


def find_skills(body: Mapping[str, Any]) -> tuple[Skill, ...]:
    """The skill listing of a Claude Code request (the latest one when it appears several times).

    Looked for, in order: the text of the messages (Claude Code 2.1 sends it in a `role: "system"`
    message, earlier versions in a `<system-reminder>` of a user message), the `Skill` tool's
    description, the system prompt.
    """
    for msg in reversed(_messages(body)):
        for text in reversed(_texts(msg.get("content"))):
            skills = parse_skill_listing(text)
            if skills:
                return skills
    for tool in _tools(body):
        if tool.get("name") == "Skill" and isinstance(tool.get("description"), str):
            skills = parse_skill_listing(tool["description"])
            if skills:
                return skills
    return parse_skill_listing(system_text(body))


_NUMBERED = re.compile(
    r"^\s*(?:[-*]\s*)?(?:\[([A-Za-z0-9][\w.-]*)\][.):]?|([A-Za-z0-9][\w.-]*?)[.):])\s+(\S.*?)\s*$",
    re.MULTILINE,
)


def parse_assertions(text: str) -> tuple[Assertion, ...]:
    """Numbered assertions in a judge prompt.

    Tolerant: a JSON list of `{"id", "text"}` objects (also under an `assertions` key) anywhere in the
    text wins; else an `<assertions>…</assertions>` section (or the whole text) is scanned for lines
    `<id>. <text>`, `<id>) <text>`, `[<id>] <text>` or `- <id>: <text>` where the id is a number or a
    short token containing a digit (e.g. `A1`, `llm-2`, `3`).
    """
    decoder = json.JSONDecoder()
    for start in [m.start() for m in re.finditer(r"[\[{]", text)]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, Mapping):
            value = value.get("assertions")
        if (
            isinstance(value, list)
            and value
            and all(
                isinstance(v, Mapping) and "id" in v and ("text" in v or "assertion" in v)
                for v in value
            )
        ):
            return tuple(
                Assertion(id=str(v["id"]), text=str(v.get("text", v.get("assertion", ""))))
                for v in value
            )
    section = re.search(r"<assertions>(.*?)</assertions>", text, re.DOTALL | re.IGNORECASE)
    scope = section.group(1) if section else text
    out: dict[str, Assertion] = {}
    for m in _NUMBERED.finditer(scope):
        ident, body = m.group(1) or m.group(2), m.group(3)
        if not re.search(r"\d", ident) or len(ident) > 24:
            continue
        out.setdefault(ident, Assertion(id=ident, text=body))
    return tuple(out.values())


def session_of(body: Mapping[str, Any]) -> str:
    """The session id Claude Code puts in `metadata.user_id` (a JSON string), or ``."""
    meta = body.get("metadata")
    user = meta.get("user_id") if isinstance(meta, Mapping) else None
    if isinstance(user, str) and user.startswith("{"):
        try:
            data = json.loads(user)
        except ValueError:
            return ""
        sid = data.get("session_id") if isinstance(data, Mapping) else None
        return sid if isinstance(sid, str) else ""
    return ""


def view(
    body: Mapping[str, Any], *, path: str = "/v1/messages", session: str | None = None
) -> RequestView:
    """Extract the policy-relevant facts of a request body (`session`: the session header, if any)."""
    msgs = _messages(body)
    users = [m for m in msgs if m.get("role") == "user"]
    prompt = ""
    for m in users:
        prompt = _user_text(m.get("content"))
        if prompt:
            break
    last = users[-1] if users else {}
    tool_uses: list[tuple[str, Mapping[str, Any]]] = []
    for m in msgs:
        content = m.get("content")
        if m.get("role") == "assistant" and isinstance(content, list):
            for b in content:
                if isinstance(b, Mapping) and b.get("type") == "tool_use":
                    inp = b.get("input")
                    tool_uses.append(
                        (str(b.get("name", "")), inp if isinstance(inp, Mapping) else {})
                    )
    choice = body.get("tool_choice")
    forced = (
        str(choice.get("name"))
        if isinstance(choice, Mapping) and choice.get("type") == "tool" and choice.get("name")
        else None
    )
    model = body.get("model")
    choice_type = choice.get("type") if isinstance(choice, Mapping) else None
    return RequestView(
        path=path,
        model=model if isinstance(model, str) else "",
        stream=body.get("stream") is True,
        prompt=prompt,
        last_user=_user_text(last.get("content")),
        turn=1 + sum(1 for m in msgs if m.get("role") == "assistant"),
        tools=tuple(str(t.get("name", "")) for t in _tools(body)),
        tool_results=_tool_results(last.get("content")),
        all_tool_results="\n".join(_tool_results(m.get("content")) for m in users),
        system=context_text(body),
        forced_tool=forced,
        tool_choice=choice_type if isinstance(choice_type, str) else "auto",
        skills=find_skills(body),
        tool_uses=tuple(tool_uses),
        session=session or session_of(body),
        body=body,
    )


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: ceil(characters / 4), at least 1 for non-empty text."""
    return math.ceil(len(text) / 4)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _content_chars(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, Sequence):
        for b in content:
            if not isinstance(b, Mapping):
                continue
            kind = b.get("type")
            if kind == "text":
                parts.append(str(b.get("text", "")))
            elif kind == "tool_use":
                parts.append(str(b.get("name", "")) + _json(b.get("input", {})))
            elif kind == "tool_result":
                parts.append(_content_chars(b.get("content")))
            elif kind in ("thinking", "redacted_thinking"):
                parts.append(str(b.get("thinking", "")))
            else:
                parts.append(_json(b))
    return "".join(parts)


def split_tokens(body: Mapping[str, Any]) -> tuple[int, int]:
    """Estimated tokens of (system prompt + tool definitions, messages) of a request body.

    Characters counted: system text; each tool's name, description and `_json(input_schema)`; each
    message's text, tool-use name + `_json(input)`, tool-result text. Each part is ceil(chars/4).
    """
    prefix = system_text(body)
    for t in _tools(body):
        prefix += (
            str(t.get("name", ""))
            + str(t.get("description", ""))
            + _json(t.get("input_schema", {}))
        )
    msgs = "".join(_content_chars(m.get("content")) for m in _messages(body))
    return estimate_tokens(prefix), estimate_tokens(msgs)


def count_tokens(body: Mapping[str, Any]) -> int:
    """The `/v1/messages/count_tokens` answer: prefix + messages estimate, at least 1."""
    prefix, msgs = split_tokens(body)
    return max(1, prefix + msgs)
