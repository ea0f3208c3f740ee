"""Integration fixtures: the scripted model server, started on port 0 in a background thread.

`model_server` is a factory: `model_server(policy) -> ModelServer` where `policy` is YAML text, a dict,
a `Policy` or a `Path`. Every server it starts is stopped at the end of the test. Use
`srv.base_url` for `ANTHROPIC_BASE_URL`, `srv.requests` for the request log, `srv.set_policy(...)` to
swap the policy. `shared_model_server` is one session-wide server (call `set_policy` and `clear` as
needed); `claude_cli` is the path of the Claude Code CLI bundled in claude-agent-sdk (skips when absent);
`claude_env` builds the environment to run it against a server.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from evolve_action.modelserver import ModelServer, Policy

PolicyLike = Policy | Mapping[str, Any] | str | Path
ModelServerFactory = Callable[..., ModelServer]

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/integration is an `integration` test (outside the quick loop)."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def model_server() -> Iterator[ModelServerFactory]:
    """Factory fixture: `model_server(policy, log_path=None) -> ModelServer` (running)."""
    started: list[ModelServer] = []

    def start(policy: PolicyLike, *, log_path: Path | None = None) -> ModelServer:
        srv = ModelServer(policy, port=0, log_path=log_path).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


@pytest.fixture(scope="session")
def shared_model_server() -> Iterator[ModelServer]:
    """One server for the whole session, starting with the default policy (answers `OK`)."""
    srv = ModelServer(Policy(), port=0).start()
    yield srv
    srv.stop()


def _bundled_claude() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("claude_agent_sdk")  # located without importing it (slow)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "_bundled" / "claude"
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    """The Claude Code CLI bundled in the claude-agent-sdk wheel; skips the test when absent."""
    path = _bundled_claude()
    if path is None:
        pytest.skip("the Claude Code CLI bundled in claude-agent-sdk is not available")
    return path


@pytest.fixture
def claude_env(tmp_path: Path) -> Callable[[ModelServer], dict[str, str]]:
    """`claude_env(srv) -> env`: an allowlisted environment pointing Claude Code at `srv`."""
    from evolve_action.harness import safe_env

    def build(srv: ModelServer) -> dict[str, str]:
        config = tmp_path / "claude-config"
        config.mkdir(exist_ok=True)
        extra = {
            "ANTHROPIC_BASE_URL": srv.base_url,
            "ANTHROPIC_API_KEY": "sk-scripted",
            "CLAUDE_CONFIG_DIR": str(config),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            extra["IS_SANDBOX"] = "1"
        return safe_env(os.environ, extra=extra)

    return build


@pytest.fixture
def agent_scratch() -> Iterator[Path]:
    """A temp root for a run's scratch dir (its `TMPDIR`): `live_agents(root)` finds that run's
    agents only (see `tests.helpers.agents.agent_tmp`)."""
    from tests.helpers.agents import agent_tmp

    with agent_tmp() as root:
        yield root
