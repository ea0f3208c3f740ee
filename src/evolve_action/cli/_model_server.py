"""`evolve-action model-server`: run the scripted model server until interrupted.

Owns the subcommand's flags. Prints the base URL (one line, `http://127.0.0.1:PORT`) on stdout as soon as
the server listens, so scripts can read it; then serves until Ctrl-C (exit 130 via the CLI's handler).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evolve_action.cli._common import Invocation
from evolve_action.errors import UsageError
from evolve_action.modelserver import ModelServer, Policy

_MAX_PORT = 65535


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `model-server` subcommand."""
    p = subparsers.add_parser(
        "model-server",
        help="run the scripted model server (Anthropic and OpenAI Responses; tests and demos)",
        description=(
            "Serve /v1/messages (streaming and JSON), /v1/messages/count_tokens and /v1/responses "
            "(OpenAI Responses, streaming) on loopback, answering from a YAML policy. Point Claude "
            "Code or the anthropic SDK at the printed URL with ANTHROPIC_BASE_URL, OpenAI Codex "
            "with OPENAI_BASE_URL=<URL>/v1. See docs/model-server.md for the policy language."
        ),
    )
    p.add_argument("--policy", type=Path, required=True, help="policy file (YAML or JSON)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port (default: 0 = pick a free port)")
    p.add_argument(
        "--log", type=Path, default=None, help="append every request as one JSON line to FILE"
    )
    p.add_argument(
        "--no-log-bodies",
        action="store_true",
        help="leave request bodies out of the --log file",
    )
    p.set_defaults(handler=run)


def run(inv: Invocation) -> int:
    """Load the policy, start the server, print its URL and serve until interrupted."""
    args = inv.args
    if not 0 <= args.port <= _MAX_PORT:
        raise UsageError(
            f"--port {args.port}: want 0-{_MAX_PORT}", hint="use 0 to pick a free port"
        )
    path = args.policy if args.policy.is_absolute() else inv.cwd / args.policy
    policy = Policy.from_file(path)
    log = None
    if args.log is not None:
        log = args.log if args.log.is_absolute() else inv.cwd / args.log
    server = ModelServer(
        policy,
        host=args.host,
        port=args.port,
        log_path=log,
        log_bodies=not args.no_log_bodies,
        keep_requests=False,
    )
    server.start()
    inv.stdout.write(f"{server.base_url}\n")
    inv.stdout.flush()
    server.serve_forever()
    return 0
