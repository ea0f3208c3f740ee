"""The scripted in-memory trigger harness and a small trigger repository, shared by the trigger
engine's unit tests and the concurrent-writer integration test (no agent processes)."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterable
from pathlib import Path

from evolve_action import events
from evolve_action.catalog import build_catalog, resolve_models
from evolve_action.harness import ErrorClass, SessionSpec, StopPredicate, ToolCall, Transcript
from evolve_action.repo import discover
from evolve_action.triggers import TriggerOptions, run


def call(name: str, **inp: object) -> ToolCall:
    return ToolCall(name=name, input=inp, raw_input=json.dumps(inp))


def transcript(*calls: ToolCall, error: ErrorClass | None = None, subtype: str = "") -> Transcript:
    return Transcript(
        tool_calls=calls, error=error, subtype=subtype, error_message=str(error or "")
    )


class ScriptedHarness:
    """Answers each prompt from a script of transcripts (cycled), tracking concurrency."""

    name = "scripted"

    def __init__(self, script: dict[str, list[Transcript]]) -> None:
        self.script = {k: itertools.cycle(v) for k, v in script.items()}
        self.calls: list[str] = []
        self.active = 0
        self.max_active = 0

    async def run(self, spec: SessionSpec, *, stop: StopPredicate | None = None) -> Transcript:
        self.calls.append(spec.prompt)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(0.001)
            t = next(self.script[spec.prompt])
            if stop is not None:
                for i, c in enumerate(t.tool_calls):
                    if stop(c):
                        return Transcript(tool_calls=t.tool_calls[: i + 1], stopped_early=True)
            return t
        finally:
            self.active -= 1


def make_repo(root: Path, queries: Iterable[tuple[str, bool]]) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "kit", "version": "1.0.0"}')
    for name in ("pdf", "pdf-extra"):
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: d\n---\nbody\n"
        )
    (root / "evals" / "pdf").mkdir(parents=True)
    doc = {"triggers": [{"query": q, "should_trigger": s} for q, s in queries]}
    (root / "evals" / "pdf" / "triggers.json").write_text(json.dumps(doc))
    return root


HIT = transcript(call("Skill", skill="pdf"))


SIBLING = transcript(call("Skill", skill="pdf-extra"))


MISS = transcript()


BUSY = transcript(error=ErrorClass.OVERLOADED)


BROKEN = transcript(error=ErrorClass.API_ERROR)


def engine(
    tmp_path: Path,
    script: dict[str, list[Transcript]],
    queries: list[tuple[str, bool]],
    **kw: object,
):
    root = make_repo(tmp_path / "repo", queries)
    models = resolve_models(
        build_catalog(), model_flags=["claude-sonnet-4-6"], available={"claude"}
    ).models
    ws = tmp_path / "ws"
    ws.mkdir()
    options = TriggerOptions(
        repo=discover(root, root),
        models=models,
        environ={},
        retry_backoff_seconds=0.0,
        count_tokens=False,
        **kw,  # type: ignore[arg-type]
    )
    harness = ScriptedHarness(script)
    reporter = events.RecordingReporter()
    outcome = asyncio.run(run(options, reporter, harness, make_workspace=lambda *a, **k: ws))
    return root, harness, reporter, outcome


QUERIES = [("merge pdf", True), ("watermark", False), ("weather", True), ("csv", False)]


SCRIPT = {"merge pdf": [HIT], "watermark": [SIBLING], "weather": [MISS], "csv": [MISS]}
