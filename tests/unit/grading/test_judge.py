"""The LLM judge: prompt, verdict mapping by id, tool loop, failures, and workspace confinement.

The SDK client is replaced by an in-memory fake with the same `messages.create` surface (no network);
the real SDK against the scripted server is exercised in tests/integration/test_evals_cli.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evolve_action.catalog import BUILTIN_CATALOG
from evolve_action.errors import ConfigError
from evolve_action.grading import Judge, JudgeRequest, ToolRefused, Verdict, WorkspaceTools
from evolve_action.grading import _judge as judge

Reply = list[dict[str, Any]]


class _Resp:
    def __init__(self, content: Reply) -> None:
        self.content = content


class FakeClient:
    """Answers each `messages.create` call with the next scripted reply (or a callable of the request)."""

    def __init__(
        self, replies: list[Reply | Callable[[dict[str, Any]], Reply] | Exception]
    ) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.messages = self

    async def create(self, **params: Any) -> _Resp:
        self.requests.append(params)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return _Resp(reply(params) if callable(reply) else reply)


def verdicts(*items: tuple[Any, bool, str]) -> Reply:
    return [
        {
            "type": "tool_use",
            "id": "tu_v",
            "name": "submit_verdicts",
            "input": {"verdicts": [{"id": i, "passed": p, "evidence": e} for i, p, e in items]},
        }
    ]


def tool(name: str, **inp: Any) -> Reply:
    return [{"type": "tool_use", "id": f"tu_{name}", "name": name, "input": inp}]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\nUsage: run it\n")
    (root / "src" / "main.py").write_text("print('hi')\n# TODO later\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    (root / "escape").symlink_to(secret)
    (root / "escape_dir").symlink_to(tmp_path)
    return root


def request(ws: Path, n: int = 2, **kw: Any) -> JudgeRequest:
    texts = tuple(f"assertion number {i}" for i in range(1, n + 1))
    return JudgeRequest(assertions=texts, final_text="I wrote the README.", workspace=ws, **kw)


def grade(client: Any, req: JudgeRequest, **kw: Any) -> list[Verdict]:
    return asyncio.run(Judge(client, model="claude-sonnet-5", **kw).grade(req))


def test_prompt_format(ws: Path) -> None:
    req = JudgeRequest(
        assertions=("The README\nexplains usage", "No TODO left"),
        final_text="done",
        expected_output="A README with a usage section",
        workspace=ws,
    )
    text = judge.build_prompt(req)
    assert text.startswith(
        "You are grading an AI coding agent's work against 2 numbered assertions.\n\n"
    )
    assert (
        "Assertions to verify:\n<assertions>\n1. The README explains usage\n2. No TODO left\n</assertions>\n"
        in text
    )
    assert (
        "The eval author's description of the expected output (context, not a separate assertion):\n"
        "---\nA README with a usage section\n---\n\nThe agent's final response was:\n---\ndone\n---\n"
    ) in text
    assert text.endswith("with exactly one verdict for every assertion id, 1 through 2.")


def test_prompt_without_expected_output_and_truncation(ws: Path) -> None:
    req = JudgeRequest(assertions=("a",), final_text="x" * 9000, workspace=ws)
    text = judge.build_prompt(req)
    assert "expected output" not in text
    assert "</assertions>\nThe agent's final response was:\n---\n" + "x" * 8000 + "\n---\n" in text


def test_verdicts_matched_by_id_in_any_order(ws: Path) -> None:
    client = FakeClient([verdicts((2, False, "no usage"), (1, True, "README exists"))])
    out = grade(client, request(ws))
    assert out == [
        Verdict(passed=True, evidence="README exists"),
        Verdict(passed=False, evidence="no usage"),
    ]
    req = client.requests[0]
    assert req["model"] == "claude-sonnet-5"
    assert [t["name"] for t in req["tools"]] == [
        "list_files",
        "read_file",
        "grep",
        "submit_verdicts",
    ]
    assert req["tool_choice"] == {"type": "any"}


def test_missing_duplicate_out_of_range_and_string_ids(ws: Path) -> None:
    client = FakeClient(
        [verdicts(("1", True, "first"), (1, False, "dup ignored"), (7, True, "out of range"))]
    )
    out = grade(client, request(ws, n=3))
    assert out[0] == Verdict(passed=True, evidence="first")
    assert out[1] == Verdict(passed=False, evidence="judge error: no verdict for assertion 2")
    assert out[2] == Verdict(passed=False, evidence="judge error: no verdict for assertion 3")


def test_tool_loop_reads_workspace_then_submits(ws: Path) -> None:
    def check(params: dict[str, Any]) -> Reply:
        results = params["messages"][-1]["content"]
        assert results[0]["type"] == "tool_result" and "Usage: run it" in results[0]["content"]
        return verdicts((1, True, "README has usage"), (2, True, "ok"))

    client = FakeClient([tool("list_files", path="."), tool("read_file", path="README.md"), check])
    out = grade(client, request(ws))
    assert [v.passed for v in out] == [True, True]
    listing = client.requests[-1]["messages"][2]["content"][0]["content"]
    assert listing.splitlines() == [".git/", "README.md", "escape", "escape_dir/", "src/"]
    assert len(client.requests) == 3


def test_refused_tool_call_is_reported_to_the_model(ws: Path) -> None:
    def check(params: dict[str, Any]) -> Reply:
        res = params["messages"][-1]["content"][0]
        assert res["is_error"] is True and "outside the workspace" in res["content"]
        return verdicts((1, True, "ok"))

    client = FakeClient([tool("read_file", path="../secret.txt"), check])
    assert grade(client, request(ws, n=1))[0].passed is True


def test_turn_cap_forces_the_verdict_tool(ws: Path) -> None:
    client = FakeClient([tool("list_files") for _ in range(3)] + [verdicts((1, True, "late"))])
    out = grade(client, request(ws, n=1), max_turns=4)
    assert out == [Verdict(passed=True, evidence="late")]
    assert [r["tool_choice"] for r in client.requests] == [{"type": "any"}] * 3 + [
        {"type": "tool", "name": "submit_verdicts"}
    ]


def test_turn_cap_exhausted_fails_all(ws: Path) -> None:
    client = FakeClient([[{"type": "text", "text": "thinking"}]] * 2)
    out = grade(client, request(ws), max_turns=2)
    assert out == [Verdict(passed=False, evidence="judge error: no JSON verdicts in response")] * 2


def test_text_envelope_fallback(ws: Path) -> None:
    text = 'Sure. {"verdicts": [{"id": 1, "passed": true, "evidence": {"k": 1}}, {"id": 2, "passed": false}]}'
    out = grade(FakeClient([[{"type": "text", "text": text}]]), request(ws))
    assert out == [Verdict(passed=True, evidence='{"k": 1}'), Verdict(passed=False, evidence="")]


def test_api_failure_fails_every_assertion(ws: Path) -> None:
    import anthropic
    import httpx2 as httpx  # type: ignore[import-not-found]

    resp = httpx.Response(529, request=httpx.Request("POST", "http://x/v1/messages"), json={})
    err = anthropic.APIStatusError("Overloaded", response=resp, body=None)
    out = grade(FakeClient([err]), request(ws))
    assert out == [Verdict(passed=False, evidence="judge error: HTTP 529: Overloaded")] * 2


def test_no_client_means_judge_unavailable(ws: Path) -> None:
    out = asyncio.run(Judge(None, model="m", unavailable="no creds").grade(request(ws, n=1)))
    assert out == [Verdict(passed=False, evidence="judge error: judge unavailable: no creds")]


def test_timeout(ws: Path) -> None:
    class Slow(FakeClient):
        async def create(self, **params: Any) -> _Resp:
            await asyncio.sleep(10)
            raise AssertionError

    out = grade(Slow([]), request(ws, n=1, timeout=0.05))
    assert out == [Verdict(passed=False, evidence="judge error: timed out")]


# --- workspace confinement ------------------------------------------------------------------

REFUSED = [
    "../secret.txt",
    "/etc/passwd",
    "escape",
    "escape_dir",
    "escape_dir/secret.txt",
    "src/../../secret.txt",
]


@pytest.mark.parametrize("path", REFUSED)
def test_read_outside_workspace_refused(ws: Path, path: str) -> None:
    tools = WorkspaceTools(ws)
    with pytest.raises(ToolRefused, match="outside the workspace"):
        tools.call("read_file", {"path": path})


@pytest.mark.parametrize("path", ["..", "escape_dir", "/tmp"])
def test_list_outside_workspace_refused(ws: Path, path: str) -> None:
    with pytest.raises(ToolRefused, match="outside the workspace"):
        WorkspaceTools(ws).call("list_files", {"path": path})


def test_grep_skips_symlinks_out_and_refuses_outside(ws: Path) -> None:
    tools = WorkspaceTools(ws)
    out = tools.call("grep", {"pattern": "SECRET|TODO"})
    assert out == "src/main.py:2: # TODO later"
    with pytest.raises(ToolRefused):
        tools.call("grep", {"pattern": "x", "path": "../"})
    with pytest.raises(ToolRefused, match="invalid pattern"):
        tools.call("grep", {"pattern": "(?=x)"})


def test_inside_paths_allowed(ws: Path) -> None:
    tools = WorkspaceTools(ws)
    assert tools.call("read_file", {"path": "src/main.py", "offset": 2}) == "# TODO later\n"
    assert tools.call("read_file", {"path": str(ws / "README.md"), "limit": 1}) == "# Demo"
    assert tools.call("list_files", {"path": "src", "recursive": True}) == "src/main.py"
    link = ws / "inner"
    link.symlink_to(ws / "README.md")
    assert tools.call("read_file", {"path": "inner"}).startswith("# Demo")


def test_resolve_judge_model() -> None:
    assert judge.resolve_judge_model(BUILTIN_CATALOG, None).key == "anthropic/claude-sonnet-5"
    assert (
        judge.resolve_judge_model(BUILTIN_CATALOG, "claude-haiku-4-5").key
        == "anthropic/claude-haiku-4-5"
    )
    with pytest.raises(ConfigError, match='judge model "gpt-9": not a known model'):
        judge.resolve_judge_model(BUILTIN_CATALOG, "gpt-9")
    with pytest.raises(ConfigError, match="only Anthropic models"):
        judge.resolve_judge_model(BUILTIN_CATALOG, "openai/gpt-5.4")


@pytest.mark.parametrize(
    ("env", "kind"),
    [
        ({}, None),
        ({"ANTHROPIC_API_KEY": "k"}, "api_key"),
        ({"CLAUDE_CODE_OAUTH_TOKEN": "t"}, "auth_token"),
        ({"EVOLVE_ANTHROPIC_API_KEY": "e", "ANTHROPIC_API_KEY": "k"}, "api_key"),
    ],
)
def test_client_from_env(env: dict[str, str], kind: str | None) -> None:
    client = judge.client_from_env({**env, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    if kind is None:
        assert client is None
        return
    assert client is not None
    assert getattr(client, kind)
    assert str(client.base_url).startswith("http://127.0.0.1:9")


@pytest.mark.parametrize("path", ["a\x00b", "/\x00"])
def test_nul_byte_in_path_is_refused_not_raised(ws: Path, path: str) -> None:
    for name in ("read_file", "list_files"):
        with pytest.raises(ToolRefused, match="cannot resolve path"):
            WorkspaceTools(ws).call(name, {"path": path})


def test_any_tool_failure_becomes_an_error_result_and_grade_never_raises(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    def check(params: dict[str, Any]) -> Reply:
        seen.extend(params["messages"][-1]["content"])
        return verdicts((1, True, "ok"))

    def boom(self: WorkspaceTools, pattern: str, path: str = ".") -> str:
        raise LookupError("unexpected")

    monkeypatch.setattr(WorkspaceTools, "grep", boom)
    replies: list[Any] = [
        [*tool("read_file", path="x\x00y"), {**tool("grep", pattern="x")[0], "id": "tu_g"}],
        check,
    ]
    out = grade(FakeClient(replies), request(ws, n=1))
    assert out[0].passed is True
    assert [r["is_error"] for r in seen] == [True, True]
    assert "cannot resolve path" in seen[0]["content"] and "unexpected" in seen[1]["content"]


def test_read_file_reads_only_the_head_of_a_large_file(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "big.txt").write_text("a" * 100 + "\n" + "TAIL\n")
    monkeypatch.setattr(judge, "_READ_CAP", 10)

    def whole(self: Path) -> bytes:
        raise AssertionError(f"{self} read whole")

    monkeypatch.setattr(Path, "read_bytes", whole)
    out = WorkspaceTools(ws).call("read_file", {"path": "big.txt", "offset": 2})
    assert "TAIL" not in out
    assert WorkspaceTools(ws).call("grep", {"pattern": "TAIL"}) == "(no matches)"


def test_a_grading_is_cached_by_transcript_expectation_and_model(ws: Path) -> None:
    """A re-read of the same transcript and files costs nothing; a new expectation, a changed
    file, another final text or another judge model is graded afresh; only the new part asks."""
    client = FakeClient(
        [
            verdicts((1, True, "a"), (2, False, "b")),
            verdicts((1, True, "c")),
            verdicts((1, False, "d"), (2, True, "e")),
            verdicts((1, True, "f"), (2, True, "g")),
        ]
    )
    j = Judge(client, model="claude-sonnet-5")  # type: ignore[arg-type]
    first = asyncio.run(j.grade(request(ws)))
    assert asyncio.run(j.grade(request(ws))) == first and len(client.requests) == 1
    three = asyncio.run(j.grade(request(ws, n=3)))  # one new expectation: only it is asked
    assert three[:2] == first and three[2] == Verdict(passed=True, evidence="c")
    assert "1. assertion number 3\n" in client.requests[1]["messages"][0]["content"]
    (ws / "README.md").write_text("# Demo\nchanged\n")  # the judge could read another file
    assert [v.evidence for v in asyncio.run(j.grade(request(ws)))] == ["d", "e"]
    other = Judge(client, model="claude-opus-5", gradings=j.gradings)  # type: ignore[arg-type]
    assert [v.evidence for v in asyncio.run(other.grade(request(ws)))] == ["f", "g"]
    assert len(client.requests) == 4 and j.gradings.hits == 4


def test_a_judge_error_is_an_error_and_never_cached(ws: Path) -> None:
    import anthropic
    import httpx2 as httpx  # type: ignore[import-not-found]

    resp = httpx.Response(529, request=httpx.Request("POST", "http://x/v1/messages"), json={})
    err = anthropic.APIStatusError("Overloaded", response=resp, body=None)
    client = FakeClient([err, verdicts((1, True, "ok"), (2, True, "ok"))])
    j = Judge(client, model="claude-sonnet-5", max_turns=1)  # type: ignore[arg-type]
    verdicts_, why = asyncio.run(j.grade_checked(request(ws)))
    assert why and all(v.evidence.startswith("judge error") for v in verdicts_)
    again, why = asyncio.run(j.grade_checked(request(ws)))
    assert not why and [v.passed for v in again] == [True, True] and len(client.requests) == 2
