"""The OpenAI Responses dialect: what OpenAI Codex sends to `POST /v1/responses`, and the answer.

Owns: `responses_view` (a Responses request body → the same `RequestView` the policy matches for
Claude Code), `codex_calls` (the policy's Claude-style tool uses → the function calls Codex offers),
`response_events` (the streaming SSE sequence), `responses_usage` and `openai_error_body`.
Guarantees: pure functions of the request and the decision; event names, order and shapes are the real
API's (`response.created`, `response.in_progress`, per output item `response.output_item.added`,
text parts and `response.output_text.delta`s or `response.function_call_arguments.delta`s,
`response.output_item.done`, then `response.completed` with usage); never raises on odd shapes.
Never does: I/O.

How the two dialects meet: the engine decides in Anthropic terms (text blocks and `tool_use` blocks
named `Bash`, `Read`, `Write`, `Skill`…), so one policy drives both agents. For Codex each tool use
becomes a call of its shell tool `exec_command` (`{"cmd": …}`): `Bash` runs its command, `Read` and
`Skill` read the file (`Skill` the listed `SKILL.md`), `Write` writes the exact content through
`printf`, `Edit` replaces text through a `python3` one-liner. A tool the request itself offers (e.g. `exec_command`, `apply_patch`) is passed through.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import time
from collections.abc import Mapping
from typing import Any

from evolve_action.modelserver._policy import Usage
from evolve_action.modelserver._request import (
    RequestView,
    Skill,
    estimate_tokens,
    parse_skill_listing,
)
from evolve_action.modelserver._wire import dumps

RESPONSES_PATH = "/v1/responses"
SHELL_TOOL = "exec_command"
"""The shell tool Codex offers (`{"cmd": "<shell command>"}`)."""

# Codex wraps context in tagged user messages; the user's prompt is the first user text without them.
_CONTEXT_TAGS = re.compile(
    r"<(environment_context|user_instructions|INSTRUCTIONS|permissions instructions|"
    r"skills_instructions|turn_aborted|user_shell_command)>.*?</\1>",
    re.DOTALL,
)
_AGENTS_MD = re.compile(r"^# AGENTS\.md instructions for .*", re.DOTALL)
_ROOT = re.compile(r"^\s*-\s*`(r\d+)`\s*=\s*`([^`]+)`\s*$", re.MULTILINE)
_SKILLS_SECTION = re.compile(r"<skills_instructions>(.*?)</skills_instructions>", re.DOTALL)
_FILE_SUFFIX = re.compile(r"\s*\(file:\s*([^)]+)\)\s*$")
_ASSISTANT_ITEMS = frozenset({"function_call", "reasoning", "custom_tool_call", "local_shell_call"})
_RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})


def _items(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    if not isinstance(raw, list):
        return []
    return [i for i in raw if isinstance(i, Mapping)]


def _kind(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return kind if isinstance(kind, str) else ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(part.get("text", ""))
        for part in content
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    )


def _user_text(item: Mapping[str, Any]) -> str:
    text = _CONTEXT_TAGS.sub("", _content_text(item.get("content")))
    return "" if _AGENTS_MD.match(text.strip()) else text.strip()


def _is_assistant(item: Mapping[str, Any]) -> bool:
    kind = _kind(item)
    return kind in _ASSISTANT_ITEMS or (kind == "message" and item.get("role") == "assistant")


def _output_text(item: Mapping[str, Any]) -> str:
    out = item.get("output")
    if isinstance(out, str):
        return out
    if isinstance(out, Mapping):
        return str(out.get("content", ""))
    return _content_text(out)


def _arguments(item: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = item.get("arguments", item.get("input"))
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return value if isinstance(value, Mapping) else {"input": value}
    return raw if isinstance(raw, Mapping) else {}


def _tool_names(body: Mapping[str, Any]) -> tuple[str, ...]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return ()
    names: list[str] = []
    for tool in tools:
        if isinstance(tool, Mapping):
            name = tool.get("name") or tool.get("type")
            if isinstance(name, str):
                names.append(name)
    return tuple(names)


def codex_skills(text: str) -> tuple[Skill, ...]:
    """The skills of a Codex `<skills_instructions>` listing, with `path` resolved from its roots
    table (`- frob: <description> (file: r1/frob/SKILL.md)`, `r1` = `/ws/.agents/skills`)."""
    section = _SKILLS_SECTION.search(text)
    if section is not None:
        text = section.group(1)
    roots = {m.group(1): m.group(2).rstrip("/") for m in _ROOT.finditer(text)}
    out: list[Skill] = []
    for skill in parse_skill_listing(text):
        description, path = skill.description, ""
        m = _FILE_SUFFIX.search(description)
        if m:
            description = description[: m.start()]
            short = m.group(1).strip()
            root, _, rest = short.partition("/")
            path = f"{roots[root]}/{rest}" if root in roots and rest else short
        out.append(Skill(name=skill.name, description=description, path=path))
    return tuple(out)


def responses_view(
    body: Mapping[str, Any], *, path: str = RESPONSES_PATH, session: str | None = None
) -> RequestView:
    """The policy-relevant facts of a Responses request (`session`: the `session-id` header).

    `prompt` is the first user text once Codex's tagged context (`<environment_context>`, AGENTS.md
    instructions…) is removed; `system` is `instructions`, the developer messages and that context
    (so `{cwd}` and `when.system` work); `turn` is 1 + the number of assistant outputs in `input`
    (a run of assistant messages, reasoning and function calls is one output); tool uses are the
    earlier function calls (`exec_command {"cmd": …}`), tool results their `function_call_output`s.
    """
    items = _items(body)
    prompt = last_user = ""
    context: list[str] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        context.append(instructions)
    skills: tuple[Skill, ...] = ()
    turn = 1
    previous_assistant = False
    tool_uses: list[tuple[str, Mapping[str, Any]]] = []
    results: list[str] = []
    trailing: list[str] = []
    for item in items:
        kind, role = _kind(item), item.get("role")
        assistant = _is_assistant(item)
        if assistant and not previous_assistant:
            turn += 1
        previous_assistant = assistant
        if kind == "message" and role in ("developer", "system"):
            text = _content_text(item.get("content"))
            context.append(text)
            skills = codex_skills(text) or skills
        elif kind == "message" and role == "user":
            raw = _content_text(item.get("content"))
            context.extend(m.group(0) for m in _CONTEXT_TAGS.finditer(raw))
            text = _user_text(item)
            prompt = prompt or text
            last_user = text
            trailing = []
        elif kind in ("function_call", "custom_tool_call"):
            tool_uses.append((str(item.get("name", "")), _arguments(item)))
        elif kind in _RESULT_ITEMS:
            text = _output_text(item)
            results.append(text)
            trailing.append(text)
            last_user = ""
    choice = body.get("tool_choice")
    forced = None
    choice_type = "auto"
    if isinstance(choice, Mapping):
        choice_type = "tool"
        if isinstance(choice.get("name"), str):
            forced = choice["name"]
    elif choice == "required":
        choice_type = "any"
    elif choice == "none":
        choice_type = "none"
    model = body.get("model")
    return RequestView(
        path=path,
        model=model if isinstance(model, str) else "",
        stream=body.get("stream") is True,
        prompt=prompt,
        last_user=last_user,
        turn=turn,
        tools=_tool_names(body),
        tool_results="\n".join(trailing),
        all_tool_results="\n".join(results),
        system="\n".join(c for c in context if c),
        forced_tool=forced,
        tool_choice=choice_type,
        skills=skills,
        tool_uses=tuple(tool_uses),
        session=session or "",
        body=body,
    )


# ------------------------------------------------------------------------------------------------
# Tool uses → Codex function calls
# ------------------------------------------------------------------------------------------------


def _skill_file(name: str, view: RequestView, cwd: str) -> str:
    bare = name.rsplit(":", 1)[-1]
    for skill in view.skills:
        if skill.name.rsplit(":", 1)[-1] == bare and skill.path:
            return skill.path
    return f"{cwd}/.agents/skills/{bare}/SKILL.md" if cwd else f".agents/skills/{bare}/SKILL.md"


def shell_command(name: str, tool_input: Mapping[str, Any], view: RequestView, cwd: str) -> str:
    """The shell command that does what the Claude-style tool use `name` does, or `""` if none."""
    if name == "Bash":
        return str(tool_input.get("command", ""))
    if name == "Read":
        return "cat " + shlex.quote(str(tool_input.get("file_path", "")))
    if name == "Skill":
        return "cat " + shlex.quote(_skill_file(str(tool_input.get("skill", "")), view, cwd))
    if name == "Write":
        target = str(tool_input.get("file_path", ""))
        content = str(tool_input.get("content", ""))
        parent = target.rsplit("/", 1)[0] if "/" in target.strip("/") else ""
        mkdir = f"mkdir -p {shlex.quote(parent)} && " if parent else ""
        return f"{mkdir}printf '%s' {shlex.quote(content)} > {shlex.quote(target)}"
    if name == "Edit":
        count = "-1" if tool_input.get("replace_all") is True else "1"
        args = [str(tool_input.get(k, "")) for k in ("file_path", "old_string", "new_string")]
        return "python3 -c " + " ".join(shlex.quote(a) for a in (_EDIT, *args, count))
    return ""


# `Edit` as a shell command: replace old with new in the file (exit 1 when old is not there).
_EDIT = (
    "import pathlib,sys; p=pathlib.Path(sys.argv[1]); t=p.read_text(); "
    "sys.exit('old_string not found') if sys.argv[2] not in t else "
    "p.write_text(t.replace(sys.argv[2], sys.argv[3], int(sys.argv[4])))"
)


def codex_calls(
    blocks: tuple[Mapping[str, Any], ...], view: RequestView, cwd: str
) -> tuple[Mapping[str, Any], ...]:
    """The decision's blocks with each `tool_use` the client does not offer mapped onto its shell
    tool (see the module docstring); text blocks and offered tools are kept as they are."""
    out: list[Mapping[str, Any]] = []
    for block in blocks:
        if block.get("type") != "tool_use" or block.get("name") in view.tools:
            out.append(block)
            continue
        tool_input = block.get("input")
        command = shell_command(
            str(block.get("name", "")),
            tool_input if isinstance(tool_input, Mapping) else {},
            view,
            cwd,
        )
        if not command or SHELL_TOOL not in view.tools:
            out.append(block)
            continue
        out.append({**block, "name": SHELL_TOOL, "input": {"cmd": command, "workdir": cwd or "."}})
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# Wire: usage, SSE events, errors
# ------------------------------------------------------------------------------------------------


def _split(body: Mapping[str, Any]) -> tuple[int, int]:
    """Estimated tokens of (instructions + tools + developer messages, the rest of `input`)."""
    prefix = str(body.get("instructions") or "")
    tools = body.get("tools")
    if isinstance(tools, list):
        prefix += "".join(dumps(t) for t in tools if isinstance(t, Mapping))
    rest = ""
    for item in _items(body):
        if _kind(item) == "message" and item.get("role") in ("developer", "system"):
            prefix += _content_text(item.get("content"))
        elif _kind(item) == "message":
            rest += _content_text(item.get("content"))
        elif _kind(item) in _RESULT_ITEMS:
            rest += _output_text(item)
        elif _kind(item) in ("function_call", "custom_tool_call"):
            rest += str(item.get("name", "")) + str(item.get("arguments", item.get("input", "")))
    return estimate_tokens(prefix), estimate_tokens(rest)


def responses_usage(
    body: Mapping[str, Any],
    blocks: tuple[Mapping[str, Any], ...],
    *,
    turn: int,
    cache: bool,
    override: Usage | None = None,
) -> dict[str, Any]:
    """Deterministic usage of one reply, in the Responses API's terms.

    As for `/v1/messages` (`_wire.usage_for`), with prefix = instructions + tool definitions +
    developer messages: `input_tokens` = prefix + the rest of `input` (the Responses API counts
    cached tokens inside `input_tokens`); with `cache`, later turns report `cached_tokens` = prefix.
    `output_tokens` = ceil(characters of the reply / 4). A rule's `usage` sets the fresh input
    (`input_tokens`), `cache_read_input_tokens` (cached) and `output_tokens`.
    """
    prefix, rest = _split(body)
    cached = prefix if cache and turn > 1 else 0
    fresh = max(1, prefix + rest - cached)
    out_chars = "".join(
        str(b.get("text", ""))
        if b.get("type") == "text"
        else str(b.get("name", "")) + dumps(b.get("input", {}))
        for b in blocks
    )
    output = max(1, estimate_tokens(out_chars))
    if override is not None:
        fresh = override.input_tokens if override.input_tokens is not None else fresh
        cached = (
            override.cache_read_input_tokens
            if override.cache_read_input_tokens is not None
            else cached
        )
        output = override.output_tokens if override.output_tokens is not None else output
    return {
        "input_tokens": fresh + cached,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": fresh + cached + output,
    }


def _id(prefix: str, *parts: object) -> str:
    return prefix + hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:24]


def output_items(blocks: tuple[Mapping[str, Any], ...], seq: int) -> list[dict[str, Any]]:
    """The completed output items of a reply: one `message` per text block, one `function_call`
    per tool use (its `arguments` the compact JSON input)."""
    items: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if block.get("type") == "tool_use":
            items.append(
                {
                    "id": _id("fc_", seq, index),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": dumps(block.get("input", {})),
                    "call_id": _id("call_", seq, index, block.get("id", "")),
                    "name": str(block.get("name", "")),
                }
            )
        else:
            items.append(
                {
                    "id": _id("msg_", seq, index),
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "output_text",
                            "text": str(block.get("text", "")),
                            "annotations": [],
                        }
                    ],
                }
            )
    return items


def response_events(
    *,
    seq: int,
    model: str,
    blocks: tuple[Mapping[str, Any], ...],
    usage: Mapping[str, Any],
    chunk: int = 24,
) -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) sequence of one streamed response, in the real API's order."""
    response: dict[str, Any] = {
        "id": _id("resp_", seq),
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": model,
        "output": [],
        "usage": None,
    }
    events: list[tuple[str, dict[str, Any]]] = []

    def emit(name: str, **data: Any) -> None:
        events.append((name, {"type": name, "sequence_number": len(events), **data}))

    emit("response.created", response=dict(response))
    emit("response.in_progress", response=dict(response))
    done = output_items(blocks, seq)
    for index, item in enumerate(done):
        if item["type"] == "function_call":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in _chunks(item["arguments"], chunk * 2):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=piece,
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                arguments=item["arguments"],
            )
        else:
            text = item["content"][0]["text"]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            emit("response.content_part.added", **where, part=part)
            for piece in _chunks(text, chunk):
                emit("response.output_text.delta", **where, delta=piece, logprobs=[])
            emit("response.output_text.done", **where, text=text, logprobs=[])
            emit("response.content_part.done", **where, part={**part, "text": text})
        emit("response.output_item.done", output_index=index, item=item)
    emit(
        "response.completed",
        response={**response, "status": "completed", "output": done, "usage": dict(usage)},
    )
    return events


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


OPENAI_ERRORS: Mapping[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", "server_error"),
    503: ("server_error", "server_overloaded"),
    529: ("server_error", "server_overloaded"),
}
"""OpenAI's error `type` and `code` per HTTP status a fault may return."""


def openai_error_body(status: int, message: str) -> dict[str, Any]:
    """An OpenAI-shaped error body: `{"error": {"message", "type", "param", "code"}}`."""
    kind, code = OPENAI_ERRORS.get(status, ("server_error", "server_error"))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
