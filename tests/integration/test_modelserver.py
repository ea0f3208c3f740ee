"""The scripted model server against its real clients: the anthropic SDK and the Claude Code CLI."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import pytest

from evolve_action.modelserver import ModelServer

pytestmark = pytest.mark.integration

SDK_POLICY = """
rules:
  - name: hello
    when: {prompt: "^hello"}
    text: "Hello! This reply is long enough to be split into several text deltas."
  - name: tool
    when: {prompt: "list files", turn: 1}
    steps:
      - {text: "Listing.", tool: Bash, input: {command: "ls -la", description: "list"}}
  - name: overloaded
    when: {prompt: overloaded}
    status: 529
    message: "Overloaded (scripted)"
  - name: limited
    when: {prompt: limited}
    status: 429
  - name: flaky
    when: {prompt: flaky}
    text: recovered
    fault: {status: 500, times: 1, retry_after: 0}
  - name: drop
    when: {prompt: drop}
    text: "this stream is cut after the first delta of text, so the client sees an error"
    disconnect: true
  - name: garbled
    when: {prompt: garbled}
    text: "this stream carries an event whose data is not JSON"
    malformed: true
  - name: judge
    when: {tool_choice: submit_verdicts}
    judge: {pass: "exists"}
  - name: slow
    when: {prompt: "^slow"}
    delay_ms: 200
    echo: true
"""

BASH_TOOL = {
    "name": "Bash",
    "description": "run",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}


def client(srv: ModelServer, retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=srv.base_url, api_key="sk-test", max_retries=retries)


def ask(c: anthropic.Anthropic, prompt: str, **kw: Any) -> Any:
    return c.messages.create(
        model="claude-sonnet-5",
        max_tokens=256,
        messages=[{"role": "user", "content": prompt}],
        **kw,
    )


def test_sdk_json_stream_tools_and_count_tokens(
    model_server: Callable[..., ModelServer], tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    srv = model_server(SDK_POLICY, log_path=log)
    c = client(srv)

    msg = ask(c, "hello there")
    assert msg.content[0].type == "text" and msg.content[0].text.startswith("Hello!")
    assert msg.stop_reason == "end_turn" and msg.model == "claude-sonnet-5"
    assert msg.usage.input_tokens > 0 and msg.usage.output_tokens > 0

    with c.messages.stream(
        model="claude-sonnet-5",
        max_tokens=256,
        tools=[BASH_TOOL],
        messages=[{"role": "user", "content": "list files please"}],
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert (
        kinds[0] == "message_start"
        and "content_block_delta" in kinds
        and kinds[-1] == "message_stop"
    )
    assert [b.type for b in final.content] == ["text", "tool_use"]
    tool_use = final.content[1]
    assert (
        tool_use.type == "tool_use"
        and tool_use.name == "Bash"
        and tool_use.input == {"command": "ls -la", "description": "list"}
    )
    assert final.stop_reason == "tool_use"

    with c.messages.stream(
        model="m", max_tokens=64, messages=[{"role": "user", "content": "hello stream"}]
    ) as stream:
        assert "".join(stream.text_stream).startswith("Hello! This reply")

    verdict_tool = {
        "name": "submit_verdicts",
        "description": "verdicts",
        "input_schema": {
            "type": "object",
            "properties": {
                "verdicts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "passed": {"type": "boolean"},
                            "evidence": {"type": "string"},
                        },
                    },
                }
            },
        },
    }
    judged = ask(
        c,
        "Assertions to verify:\n<assertions>\n1. The file out.txt exists\n2. It is written in French\n</assertions>\n",
        tools=[verdict_tool],
        tool_choice={"type": "tool", "name": "submit_verdicts"},
    )
    block = judged.content[0]
    assert block.type == "tool_use" and block.name == "submit_verdicts"
    assert [(v["id"], v["passed"]) for v in block.input["verdicts"]] == [(1, True), (2, False)]

    counted = c.messages.count_tokens(
        model="claude-sonnet-5", messages=[{"role": "user", "content": "x" * 400}]
    )
    assert counted.input_tokens == 100

    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [e["rule"] for e in entries] == ["hello", "tool", "hello", "judge", None]
    assert entries[-1]["path"] == "/v1/messages/count_tokens" and entries[-1]["input_tokens"] == 100
    assert srv.requests[0]["usage"] == {
        "input_tokens": msg.usage.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": msg.usage.output_tokens,
    }


@pytest.mark.parametrize(
    ("prompt", "error", "status", "kind"),
    [
        ("overloaded", anthropic.OverloadedError, 529, "overloaded_error"),
        ("limited", anthropic.RateLimitError, 429, "rate_limit_error"),
    ],
)
def test_sdk_sees_anthropic_error_bodies(
    model_server: Callable[..., ModelServer],
    prompt: str,
    error: type[Exception],
    status: int,
    kind: str,
) -> None:
    srv = model_server(SDK_POLICY)
    with pytest.raises(error) as info:
        ask(client(srv), prompt)
    assert isinstance(info.value, anthropic.APIStatusError)
    assert info.value.status_code == status
    assert info.value.body["error"] == {  # type: ignore[index]
        "type": kind,
        "message": "Overloaded (scripted)" if status == 529 else "scripted fault",
    }


def test_sdk_retries_a_transient_fault_then_succeeds(
    model_server: Callable[..., ModelServer],
) -> None:
    srv = model_server(SDK_POLICY)
    assert ask(client(srv, retries=2), "flaky").content[0].text == "recovered"
    assert [(r["rule"], r["status"]) for r in srv.messages()] == [("flaky", 500), ("flaky", 200)]


@pytest.mark.parametrize("prompt", ["drop", "garbled"])
def test_broken_streams_raise_in_the_sdk(
    model_server: Callable[..., ModelServer], prompt: str
) -> None:
    srv = model_server(SDK_POLICY)
    # The SDK surfaces a cut stream as the HTTP library's protocol error and bad data as a JSON error.
    with (
        pytest.raises(Exception) as info,
        client(srv).messages.stream(
            model="m", max_tokens=64, messages=[{"role": "user", "content": prompt}]
        ) as stream,
    ):
        stream.get_final_message()
    assert not isinstance(info.value, AssertionError)
    assert srv.messages()[0]["fault"] == ("disconnect" if prompt == "drop" else "malformed")


def test_concurrent_requests_and_policy_swap(model_server: Callable[..., ModelServer]) -> None:
    srv = model_server(SDK_POLICY)
    c = client(srv)
    answers: dict[int, str] = {}

    def work(i: int) -> None:
        answers[i] = ask(c, f"slow request {i}").content[0].text

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == {i: f"slow request {i}" for i in range(6)}
    assert sorted(r["seq"] for r in srv.messages()) == list(range(1, 7))
    srv.set_policy({"default": "swapped"})
    assert ask(c, "hello").content[0].text == "swapped"


def test_cli_command_prints_url_and_serves(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("default: from the CLI\n", encoding="utf-8")
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evolve_action",
            "model-server",
            "--policy",
            str(policy),
            "--log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        c = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0)
        assert ask(c, "hi").content[0].text == "from the CLI"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)  # a bound, not a timing claim: a loaded machine is slow
    assert proc.returncode == 130
    assert json.loads(log.read_text(encoding="utf-8").splitlines()[0])["rule"] == "default"


def test_port_in_use_is_an_environment_problem(model_server: Callable[..., ModelServer]) -> None:
    from evolve_action.errors import EnvironmentProblem

    srv = model_server({})
    with pytest.raises(EnvironmentProblem, match=f"cannot listen on 127.0.0.1:{srv.port}"):
        ModelServer({}, port=srv.port).start()


def test_command_rejects_a_bad_policy(tmp_path: Path) -> None:
    import argparse
    import io

    from evolve_action.cli import _model_server as model_server
    from evolve_action.cli._common import Invocation
    from evolve_action.errors import SpecError

    policy = tmp_path / "bad.yaml"
    policy.write_text("rules: [{name: a, bogus: 1}]\n", encoding="utf-8")
    parser = argparse.ArgumentParser()
    model_server.register(parser.add_subparsers())
    args = parser.parse_args(["model-server", "--policy", str(policy)])
    inv = Invocation(
        args=args, environ={}, stdout=io.StringIO(), stderr=io.StringIO(), cwd=tmp_path
    )
    with pytest.raises(SpecError, match="unknown key 'bogus'") as info:
        model_server.run(inv)
    assert info.value.path == policy


# -- the real Claude Code CLI --------------------------------------------------------------------

CLAUDE_POLICY = """
rules:
  - name: scripted
    when: {prompt: "make the greeting"}
    steps:
      - {text: "Writing the file.", tool: Write, input: {file_path: "{cwd}/hello.txt", content: "hello world\\n"}}
      - {tool: Bash, input: {command: "wc -c hello.txt", description: "count bytes"}}
      - "Wrote hello.txt."
    fault: {status: 529, times: 1, retry_after: 0}
  - name: route
    when: {tools: [Skill]}
    route: {threshold: 0.3, read_first: true, answer: "Handled."}
"""


def run_claude(claude: Path, env: dict[str, str], cwd: Path, prompt: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [
            str(claude),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def tool_uses(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (b["name"], b["input"])
        for m in messages
        if m.get("type") == "assistant"
        for b in m["message"]["content"]
        if b.get("type") == "tool_use"
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for name, description in [
        ("pdf-tools", "Extract text and tables from PDF files, merge and split PDF documents."),
        (
            "csv-cleaner",
            "Clean CSV files: remove duplicate rows, normalise headers, fix encodings.",
        ),
    ]:
        skill = ws / ".claude" / "skills" / name
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n", encoding="utf-8"
        )
    return ws


def test_claude_code_runs_scripted_steps_and_reports_usage(
    model_server: Callable[..., ModelServer],
    claude_cli: Path,
    claude_env: Callable[[ModelServer], dict[str, str]],
    workspace: Path,
) -> None:
    srv = model_server(CLAUDE_POLICY)
    out = run_claude(claude_cli, claude_env(srv), workspace, "make the greeting file")
    assert tool_uses(out) == [
        ("Write", {"file_path": f"{workspace}/hello.txt", "content": "hello world\n"}),
        ("Bash", {"command": "wc -c hello.txt", "description": "count bytes"}),
    ]
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello world\n"
    results = [
        b
        for m in out
        if m.get("type") == "user"
        for b in m["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert "12 hello.txt" in str(results[-1]["content"])
    result = out[-1]
    assert (
        result["type"] == "result"
        and result["subtype"] == "success"
        and result["result"] == "Wrote hello.txt."
    )
    assert result["total_cost_usd"] > 0
    served = [r for r in srv.messages() if r["status"] == 200]
    assert [r["turn"] for r in served] == [1, 2, 3]
    assert srv.messages()[0]["status"] == 529  # the retried fault
    assert served[0]["query"] == "beta=true" and served[0]["stream"] is True
    for key in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        assert result["usage"][key] == sum(r["usage"][key] for r in served), key


def test_claude_code_routes_by_skill_listing(
    model_server: Callable[..., ModelServer],
    claude_cli: Path,
    claude_env: Callable[[ModelServer], dict[str, str]],
    workspace: Path,
) -> None:
    srv = model_server(CLAUDE_POLICY)
    out = run_claude(
        claude_cli, claude_env(srv), workspace, "remove the duplicate rows from my CSV"
    )
    assert tool_uses(out) == [
        ("Read", {"file_path": f"{workspace}/.claude/skills/csv-cleaner/SKILL.md"}),
        ("Skill", {"skill": "csv-cleaner"}),
    ]
    assert out[-1]["result"] == "Handled."
    first = srv.messages()[0]
    assert {"csv-cleaner", "pdf-tools"} <= set(first["skills"])
    assert first["prompt"] == "remove the duplicate rows from my CSV"
    assert (
        f"Primary working directory: {workspace}"
        in first["body"]["messages"][1]["content"][0]["text"]
    )


def test_accepted_connections_have_nagle_off() -> None:
    # Nagle's algorithm with the client's delayed ACK cost ~40 ms a request on a kept-alive
    # connection (BENCHMARKS.md); the server turns it off on every connection it accepts.
    import socket
    from http.server import BaseHTTPRequestHandler

    from evolve_action.modelserver._server import _HTTPServer

    server = _HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    try:
        with socket.create_connection(server.server_address[:2]) as client_sock:
            assert client_sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
            conn, _ = server.get_request()
            with conn:
                assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        server.server_close()
