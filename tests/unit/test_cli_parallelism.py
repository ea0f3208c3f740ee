"""The `parallelism:` line says what really runs at once: `--jobs`, or the agent-user pool's size
when agents run as agent users and the pool is smaller."""

from __future__ import annotations

import pytest

from evolve_action.cli._common import parallelism_line
from evolve_action.harness import _confine as confine
from evolve_action.harness import _sandbox as sandbox


def test_the_line_names_jobs_and_any_cap_of_the_agent_user_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(confine, "_current", None)
    assert parallelism_line(4, "agent runs") == "parallelism: 4 concurrent agent runs\n"
    users = tuple(confine.AgentUser(f"evolve-agent-{i}", 2001 + i, 2001 + i) for i in range(2))
    conf = confine.Confinement(sandbox=sandbox.Probe(None, "no"), user=users[0], pool=users)
    monkeypatch.setattr(confine, "_current", conf)
    assert parallelism_line(2, "evals") == "parallelism: 2 concurrent evals\n"
    assert parallelism_line(4, "evals") == (
        "parallelism: 2 concurrent evals (4 asked; the agent-user pool has 2 uids: "
        "EVOLVE_AGENT_USER lists more)\n"
    )
