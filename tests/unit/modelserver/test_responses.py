"""The OpenAI Responses dialect of the scripted model server: reading Codex's requests, mapping the
policy's tool uses onto Codex's shell tool, and the wire (SSE order, usage, errors, 426)."""

from __future__ import annotations

import http.client
import json
import subprocess
import time
from pathlib import Path
from typing import Any

from evolve_action.modelserver import ModelServer
from evolve_action.modelserver._responses import (
    codex_calls,
    codex_skills,
    openai_error_body,
    response_events,
    responses_usage,
    responses_view,
)

LISTING = """<skills_instructions>
## Skills
### Skill roots
- `r0` = `/home/.codex/skills/.system`
- `r1` = `/ws/.agents/skills`
### Available skills
- imagegen: Generate raster images. (file: r0/imagegen/SKILL.md)
- frob: Frobnicate CSV files and dedupe rows. (file: r1/frob/SKILL.md)
</skills_instructions>"""


def text(role: str, value: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": value}]}


def request(*extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "gpt-5.4",
        "stream": True,
        "tools": [{"type": "function", "name": "exec_command", "parameters": {}}],
        "input": [
            text("developer", "You are Codex."),
            text("developer", LISTING),
            text("user", "<environment_context>\n  <cwd>/ws</cwd>\n</environment_context>"),
            text("user", "please dedupe my csv"),
            *extra,
        ],
    }


def test_view_reads_prompt_turn_skills_and_tool_history() -> None:
    first = responses_view(request(), session="s-1")
    assert first.prompt == "please dedupe my csv" and first.turn == 1 and first.session == "s-1"
    assert [s.name for s in first.skills] == ["imagegen", "frob"]
    assert first.skills[1].path == "/ws/.agents/skills/frob/SKILL.md"
    assert first.skills[1].description == "Frobnicate CSV files and dedupe rows."
    assert first.tools == ("exec_command",) and "<cwd>/ws</cwd>" in first.system
    call = {
        "type": "function_call",
        "name": "exec_command",
        "call_id": "c1",
        "arguments": '{"cmd":"cat x"}',
    }
    out = {"type": "function_call_output", "call_id": "c1", "output": "Output:\nhello"}
    second = responses_view(request({"type": "reasoning"}, call, out))
    assert second.turn == 2 and second.last_user == ""
    assert second.tool_uses == (("exec_command", {"cmd": "cat x"}),)
    assert "hello" in second.tool_results and "hello" in second.all_tool_results


def test_codex_listing_without_roots_keeps_the_short_path() -> None:
    (skill,) = codex_skills("### Available skills\n- a: b (file: x/a/SKILL.md)\n")
    assert (skill.name, skill.description, skill.path) == ("a", "b", "x/a/SKILL.md")


def test_claude_style_tool_uses_become_shell_commands(tmp_path: Path) -> None:
    view = responses_view(request())
    content = 'it\'s 100% "quoted"\n\\n and $HOME `x`\nno newline at end'
    blocks = (
        {"type": "text", "text": "Writing."},
        {
            "type": "tool_use",
            "id": "t1",
            "name": "Write",
            "input": {"file_path": f"{tmp_path}/a/b.txt", "content": content},
        },
        {"type": "tool_use", "id": "t2", "name": "Skill", "input": {"skill": "kit:frob"}},
        {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "ls -la"}},
        {"type": "tool_use", "id": "t4", "name": "exec_command", "input": {"cmd": "pwd"}},
    )
    text_block, write, skill, bash, own = codex_calls(blocks, view, "/ws")
    assert text_block == blocks[0]
    assert write["name"] == "exec_command" and write["input"]["workdir"] == "/ws"
    subprocess.run(["/bin/bash", "-lc", write["input"]["cmd"]], check=True)
    assert (tmp_path / "a/b.txt").read_text(encoding="utf-8") == content  # byte-exact
    assert skill["input"]["cmd"] == "cat /ws/.agents/skills/frob/SKILL.md"
    assert bash["input"]["cmd"] == "ls -la"
    assert own == blocks[4]  # a tool Codex offers passes through
    edit = {"file_path": f"{tmp_path}/a/b.txt", "old_string": "100%", "new_string": "it's $x"}
    (mapped,) = codex_calls(
        ({"type": "tool_use", "id": "e", "name": "Edit", "input": edit},), view, "/ws"
    )
    subprocess.run(["/bin/bash", "-lc", mapped["input"]["cmd"]], check=True)
    assert (tmp_path / "a/b.txt").read_text(encoding="utf-8") == content.replace("100%", "it's $x")
    missing = subprocess.run(
        ["/bin/bash", "-lc", mapped["input"]["cmd"]], check=False, capture_output=True
    )
    assert missing.returncode == 1 and b"old_string not found" in missing.stderr


def test_events_follow_the_real_order_and_usage_counts_cached_input() -> None:
    blocks = (
        {"type": "text", "text": "Hi"},
        {"type": "tool_use", "id": "t", "name": "exec_command", "input": {"cmd": "ls"}},
    )
    usage = responses_usage(request(), blocks, turn=2, cache=True)
    assert usage["input_tokens"] >= usage["input_tokens_details"]["cached_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert (
        responses_usage(request(), blocks, turn=1, cache=True)["input_tokens_details"][
            "cached_tokens"
        ]
        == 0
    )
    names = [
        name for name, _ in response_events(seq=1, model="gpt-5.4", blocks=blocks, usage=usage)
    ]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    done = response_events(seq=1, model="gpt-5.4", blocks=blocks, usage=usage)[-1][1]
    assert done["response"]["usage"] == usage
    assert done["response"]["output"][1]["arguments"] == '{"cmd":"ls"}'
    assert openai_error_body(401, "no")["error"]["code"] == "invalid_api_key"


def test_server_answers_responses_refuses_websockets_and_revoked_keys() -> None:
    with ModelServer({"rules": [{"name": "hi", "when": "dedupe", "text": "Hello."}]}) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.request(
            "GET", "/v1/responses", headers={"Upgrade": "websocket", "Connection": "Upgrade"}
        )
        reply = conn.getresponse()
        assert reply.status == 426
        reply.read()
        conn.request(
            "POST",
            "/v1/responses",
            body=json.dumps(request()),
            headers={"session-id": "s-9", "content-type": "application/json"},
        )
        reply = conn.getresponse()
        body = reply.read().decode()
        assert reply.status == 200 and reply.getheader("content-type", "").startswith(
            "text/event-stream"
        )
        assert (
            body.index("response.created") < body.index("Hello.") < body.index("response.completed")
        )
        (entry,) = [r for r in srv.requests if r.get("path") == "/v1/responses"]
        assert (
            entry["rule"] == "hi"
            and entry["session"] == "s-9"
            and entry["skills"] == ["imagegen", "frob"]
        )
    with ModelServer({"auth_error": 401, "rules": []}) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.request("GET", "/v1/models")
        reply = conn.getresponse()
        assert (
            reply.status == 401 and json.loads(reply.read())["error"]["code"] == "invalid_api_key"
        )
        conn.request(
            "POST",
            "/v1/responses",
            body=json.dumps(request()),
            headers={"content-type": "application/json"},
        )
        reply = conn.getresponse()
        assert reply.status == 401 and "error" in json.loads(reply.read())


def test_faults_cut_the_stream_and_latency_delays_it() -> None:
    policy = {
        "rules": [
            {"name": "cut", "when": "cut", "disconnect": True, "text": "a reply that is cut off"},
            {"name": "slow", "when": "slow", "delay_ms": 300, "text": "late"},
        ]
    }
    with ModelServer(policy) as srv:

        def post(prompt: str) -> tuple[float, str]:
            body = request()
            body["input"][-1] = text("user", prompt)
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
            started = time.monotonic()
            conn.request(
                "POST",
                "/v1/responses",
                body=json.dumps(body),
                headers={"content-type": "application/json"},
            )
            reply = conn.getresponse()
            try:
                data = reply.read().decode()
            except (
                http.client.IncompleteRead
            ) as exc:  # the chunked stream ended without its last chunk
                data = exc.partial.decode()
            return time.monotonic() - started, data

        _, cut = post("cut now")
        assert "response.output_text.delta" in cut and "response.completed" not in cut
        waited, slow = post("slow please")
        assert waited >= 0.3 and "response.completed" in slow
        assert [r["fault"] for r in srv.requests] == ["disconnect", None]
