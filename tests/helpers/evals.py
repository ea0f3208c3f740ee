"""Fakes and fixtures shared by the eval engine's unit tests and the eval-workspace integration test."""

from __future__ import annotations

import datetime

from evolve_action.grading import JudgeRequest, Verdict

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0, tzinfo=datetime.UTC)


EVALS = {
    "evals": [
        {
            "id": "good",
            "prompt": "[good] write out.txt",
            "files": ["files/in/data.txt"],
            "expectations": ["out.txt is friendly"],
            "assertions": [
                {"type": "file_exists", "path": "out.txt"},
                {"type": "file_exists", "path": "in/data.txt"},
                {"type": "tool_call", "tool": "Write", "pattern": "out"},
            ],
        },
        {
            "id": "bad",
            "prompt": "[bad] do nothing",
            "assertions": [{"type": "file_exists", "path": "out.txt"}, "The agent apologised"],
        },
        {"id": 3, "prompt": "[error] crash", "assertions": [{"type": "file_exists", "path": "x"}]},
    ]
}


class FakeJudge:
    """A judge that passes every assertion mentioning "friendly"."""

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    async def grade(self, request: JudgeRequest) -> list[Verdict]:
        self.requests.append(request)
        return [Verdict(passed="friendly" in t, evidence=f"judged {t}") for t in request.assertions]

    async def grade_checked(self, request: JudgeRequest) -> tuple[list[Verdict], str]:
        return await self.grade(request), ""

    async def aclose(self) -> None:
        return None


class FakeCounter:
    """A token counter that answers 1000 for everything."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    async def count(self, provider: str, model: str, payload: str) -> int | None:
        return 1000
