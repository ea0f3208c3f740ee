"""The scripted model server: an HTTP server on loopback, driven by a policy, in two dialects.

Owns the package facade. The supported names are in `__all__`; the helper modules are private.
Guarantees: the real Claude Code CLI and the `anthropic` SDK accept its responses (streaming SSE and
JSON `/v1/messages`, `/v1/messages/count_tokens`, Anthropic-shaped errors), and so does the real
OpenAI Codex CLI (`/v1/responses`: OpenAI Responses SSE, OpenAI-shaped errors, 426 for its
WebSocket upgrade); one policy drives both (`_responses` maps the decisions onto Codex's tools).
Never does: network access beyond the address it listens on; reading the environment.

Quick use::

    from evolve_action.modelserver import ModelServer, Policy

    policy = Policy.from_yaml('''
    rules:
      - name: write-then-run
        when: {prompt: "make a file"}
        steps:
          - {tool: Write, input: {file_path: "{cwd}/out.txt", content: "hi\\n"}}
          - {tool: Bash, input: {command: "cat out.txt"}}
          - "All done."
      - name: route
        route: {threshold: 0.2}
    ''')
    with ModelServer(policy, port=0, log_path=None) as srv:
        srv.base_url          # "http://127.0.0.1:PORT"
        srv.requests          # logged requests (dicts), see `ModelServer`
        srv.set_policy(other) # swap between tests

The policy language is documented in `docs/model-server.md`.
"""

from __future__ import annotations

from evolve_action.modelserver._engine import Decision, Engine, route_score
from evolve_action.modelserver._policy import (
    ERROR_STATUSES,
    Fault,
    Judge,
    Match,
    Policy,
    PolicyError,
    Route,
    Rule,
    Step,
    ToolUse,
    Usage,
)
from evolve_action.modelserver._request import (
    Assertion,
    RequestView,
    Skill,
    count_tokens,
    find_skills,
    parse_assertions,
    parse_skill_listing,
    view,
)
from evolve_action.modelserver._server import ModelServer

__all__ = [
    "ERROR_STATUSES",
    "Assertion",
    "Decision",
    "Engine",
    "Fault",
    "Judge",
    "Match",
    "ModelServer",
    "Policy",
    "PolicyError",
    "RequestView",
    "Route",
    "Rule",
    "Skill",
    "Step",
    "ToolUse",
    "Usage",
    "count_tokens",
    "find_skills",
    "parse_assertions",
    "parse_skill_listing",
    "route_score",
    "view",
]
