"""Issue 8 units: the credentials preflight (against the real scripted server), the sweep tally,
the error classification of Claude Code results (banners, `is_error` with text, skill not loaded)
and the judge's failure reason."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from claude_agent_sdk import ResultMessage, SystemMessage

from evolve_action.errors import EnvironmentProblem
from evolve_action.grading import Judge, JudgeRequest
from evolve_action.harness import ErrorClass, SessionTally, check_credentials, sweep_failed
from evolve_action.harness._claude_code import parse_messages
from evolve_action.modelserver import ModelServer, Policy


@pytest.fixture
def server() -> Any:
    srv = ModelServer(Policy(), port=0).start()
    yield srv
    srv.stop()


def env(base_url: str, **extra: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": base_url, **extra}


def test_accepted_key_passes_with_one_counting_call(server: Any) -> None:
    check_credentials(env(server.base_url, ANTHROPIC_API_KEY="sk-ok"), model="claude-sonnet-5")
    assert [(r["path"], r["model"]) for r in server.requests] == [
        ("/v1/messages/count_tokens", "claude-sonnet-5")
    ]


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_names_the_variable_and_status(server: Any, status: int) -> None:
    server.set_policy(f"auth_error: {status}\n")
    with pytest.raises(EnvironmentProblem) as info:
        check_credentials(env(server.base_url, CLAUDE_CODE_OAUTH_TOKEN="tok"))
    text = info.value.render()
    assert f"refused CLAUDE_CODE_OAUTH_TOKEN (HTTP {status}" in text
    assert "set a valid CLAUDE_CODE_OAUTH_TOKEN" in text and "nothing was run" in text


def test_missing_credentials(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem, match="no Anthropic credentials") as info:
        check_credentials({"HOME": str(tmp_path)})
    assert "ANTHROPIC_API_KEY" in (info.value.hint or "")
    # A login stored in the Claude config dir is named: sessions run with their own config dir.
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / ".credentials.json").write_text("{}")
    with pytest.raises(EnvironmentProblem, match=r"\.credentials\.json exists"):
        check_credentials({"HOME": str(tmp_path)})


def test_unreachable_endpoint() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EnvironmentProblem, match=f"cannot reach the model API at .*:{port}"):
        check_credentials(env(f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="sk"))


def test_other_statuses_are_not_a_credential_problem(server: Any) -> None:
    server.set_policy("rules: []\n")
    check_credentials(env(server.base_url + "/nowhere", ANTHROPIC_API_KEY="sk"))  # 404: goes on


def test_bedrock_is_not_checked() -> None:
    check_credentials({"CLAUDE_CODE_USE_BEDROCK": "1"})


def test_tally_trips_only_when_the_first_sessions_fail_alike() -> None:
    t = SessionTally(trip_after=3)
    t.record("API error 401")
    t.record("API error 401")
    assert t.tripped == "" and t.all_failed == "API error 401"
    t.record("API error 401")
    assert t.tripped == "API error 401"
    mixed = SessionTally(trip_after=2)
    mixed.record("a")
    mixed.record("b")
    mixed.record("a")
    assert mixed.tripped == "" and mixed.all_failed == ""
    ok_first = SessionTally(trip_after=1)
    ok_first.record("")
    ok_first.record("a")
    assert ok_first.tripped == "" and ok_first.all_failed == ""
    assert SessionTally().all_failed == ""
    err = sweep_failed("API error 401 (credentials refused): x", tier="triggers")
    assert "triggers: every agent session failed" in err.message
    assert "ANTHROPIC_API_KEY" in (err.hint or "")


def _result(**kw: Any) -> ResultMessage:
    base: dict[str, Any] = {
        "subtype": "success",
        "duration_ms": 10,
        "duration_api_ms": 5,
        "is_error": False,
        "num_turns": 1,
        "session_id": "s",
    }
    base.update(kw)
    return ResultMessage(**base)


@pytest.mark.parametrize(
    ("result", "error", "fragment"),
    [
        (
            _result(is_error=True, result="Not logged in · Please run /login"),
            ErrorClass.AUTH,
            "Not logged in",
        ),
        (_result(result="Invalid API key · Please run /login"), ErrorClass.AUTH, "Invalid API key"),
        (
            _result(
                is_error=True,
                result="Failed to authenticate. API Error: 401 x",
                api_error_status=401,
            ),
            ErrorClass.AUTH,
            "API error 401 (credentials refused)",
        ),
        (
            _result(is_error=True, result="Credit balance is too low"),
            ErrorClass.CREDIT,
            "Credit balance",
        ),
        (
            _result(is_error=True, result="Something odd happened"),
            ErrorClass.RUN_ERROR,
            "Something odd",
        ),
    ],
    ids=["login", "invalid-key-without-is-error", "http-401", "credit", "is-error-with-text"],
)
def test_error_results_are_errors_whatever_text_they_carry(
    result: ResultMessage, error: ErrorClass, fragment: str
) -> None:
    t = parse_messages([result])
    assert t.error is error and fragment in t.error_message


def test_an_answer_that_mentions_a_banner_is_not_an_error() -> None:
    t = parse_messages(
        [_result(result="Invalid API key errors mean the key was revoked; rotate it.")]
    )
    assert t.ok


def test_max_turns_with_text_stays_gradable() -> None:
    t = parse_messages([_result(is_error=True, subtype="error_max_turns", result="partial work")])
    assert t.error is None


def _init(skills: list[str]) -> SystemMessage:
    return SystemMessage(
        subtype="init", data={"type": "system", "subtype": "init", "skills": skills}
    )


def test_skill_not_loaded_is_an_error_naming_the_skill() -> None:
    t = parse_messages([_init(["other", "init"]), _result(result="OK")], expect_skill="csv-clean")
    assert t.error is ErrorClass.SKILL_NOT_LOADED
    assert '"csv-clean" was not loaded' in t.error_message and "2 skills" in t.error_message
    assert parse_messages(
        [_init(["docs-kit:csv-clean"]), _result(result="OK")], expect_skill="csv-clean"
    ).ok
    assert parse_messages([_result(result="OK")], expect_skill="csv-clean").ok  # no init: unknown
    assert parse_messages([_init([]), _result(result="OK")]).ok  # baselines expect nothing


class _OneVerdict:
    """A judge client whose model submits a verdict for assertion 1 only."""

    def __init__(self) -> None:
        self.messages = SimpleNamespace(create=self._create)

    async def _create(self, **_: Any) -> Any:
        use = {
            "type": "tool_use",
            "id": "t1",
            "name": "submit_verdicts",
            "input": {"verdicts": [{"id": 1, "passed": True, "evidence": "ok"}]},
        }
        return SimpleNamespace(content=[use])

    async def close(self) -> None:
        return None


def test_judge_reports_why_it_could_not_answer(tmp_path: Path) -> None:
    req = JudgeRequest(assertions=("a", "b"), final_text="x", workspace=tmp_path)
    verdicts, why = asyncio.run(Judge(None, model="m", unavailable="no key").grade_checked(req))
    assert why == "judge unavailable: no key" and [v.passed for v in verdicts] == [False, False]
    judge = Judge(_OneVerdict(), model="m")  # type: ignore[arg-type]
    verdicts, why = asyncio.run(judge.grade_checked(req))
    assert why == "no verdict for assertion 2" and verdicts[0].passed is True


def test_tier0_flags_a_skill_directory_claude_code_may_not_load(tmp_path: Path) -> None:
    from evolve_action.checks import CheckOptions, run_checks
    from evolve_action.config import Config
    from evolve_action.repo import discover

    root = tmp_path / "repo"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "kit", "version": "1.0.0"}')
    for d in ("csv-clean", "Bad_Name"):
        (root / "skills" / d).mkdir(parents=True)
        (root / "skills" / d / "SKILL.md").write_text(
            f"---\nname: {d.lower().replace('_', '-')}\ndescription: Does it. Use when x.\n---\nx\n"
        )
    report = run_checks(discover(root, root), Config(), CheckOptions(signals=False))
    flagged = [f for f in report.findings if f.check == "skill.dirname"]
    assert [f.path for f in flagged] == ["skills/Bad_Name/SKILL.md"]
    assert "skill directory 'Bad_Name' not kebab-case" in flagged[0].message
