"""The judge through the real `anthropic` SDK against the scripted model server (no agent CLI)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evolve_action import grading as judge
from evolve_action.grading import Verdict

pytestmark = pytest.mark.integration

POLICY = """
rules:
  - name: flaky
    when: {tools: [submit_verdicts], prompt: 'flaky'}
    fault: {status: 529, times: 2, retry_after: 0.01}
    judge: {pass: 'good'}
  - name: down
    when: {tools: [submit_verdicts], prompt: 'down'}
    status: 529
    retry_after: 0.01
  - name: judge
    when: {tools: [submit_verdicts]}
    judge: {pass: 'good', fail: 'bad'}
"""


def grade(srv: Any, ws: Path, texts: tuple[str, ...], final: str = "done") -> list[Verdict]:
    client = judge.client_from_env(
        {"ANTHROPIC_BASE_URL": srv.base_url, "ANTHROPIC_API_KEY": "sk-x"}, max_retries=2
    )
    j = judge.Judge(client, model="claude-sonnet-5")

    async def go() -> list[Verdict]:
        try:
            return await j.grade(
                judge.JudgeRequest(assertions=texts, final_text=final, workspace=ws, timeout=60)
            )
        finally:
            await j.aclose()

    return asyncio.run(go())


def test_verdicts_by_id_retries_and_outage(tmp_path: Path, model_server: Any) -> None:
    srv = model_server(POLICY)
    out = grade(srv, tmp_path, ("a good thing", "a bad thing", "neither"))
    assert [v.passed for v in out] == [True, False, False]
    assert out[1].evidence.startswith("scripted judge: failed")
    req = srv.requests[-1]["body"]
    assert req["tool_choice"] == {"type": "any"}
    assert (
        "<assertions>\n1. a good thing\n2. a bad thing\n3. neither\n</assertions>"
        in req["messages"][0]["content"]
    )

    srv.clear()
    out = grade(srv, tmp_path, ("good one",), final="flaky")
    assert out == [Verdict(passed=True, evidence=out[0].evidence)] and out[0].passed is True
    assert [r["status"] for r in srv.requests] == [529, 529, 200]

    srv.clear()
    out = grade(srv, tmp_path, ("good one", "other"), final="down")
    assert [v.passed for v in out] == [False, False]
    assert out[0].evidence.startswith("judge error: HTTP 529")
    assert len(srv.requests) == 3  # the first try plus max_retries
