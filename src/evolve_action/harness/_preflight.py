"""Before a sweep: are there credentials the model API accepts? During it: did every session fail alike?

Owns: `check_credentials()` (issue 8: before the first agent or judge session, the credential the
agent, the judge and token counting share — `procenv.chosen_credential` — must exist and the
endpoint must accept it with one free `count_tokens` call; otherwise one `EnvironmentProblem`,
exit 2, naming the cause and what to set, before anything is written), `config_dir_credentials()`
and `SessionTally` (a sweep's tally of session outcomes: once the first sessions all failed with
one cause it trips, so the sweep stops launching sessions, and `all_failed` names the cause when
no session of the sweep succeeded).

Guarantees: never prints and never reads `os.environ` (callers pass the environment); a dry run or
`report` never calls it. Codex sessions (openai/* models) also need an OpenAI key the endpoint accepts
(`check_openai_credentials`). Bedrock/Vertex (`CLAUDE_CODE_USE_BEDROCK`/`_VERTEX`) are not checked (their
credentials are the cloud's own). Never does: run agent sessions or write results.
"""

from __future__ import annotations

import asyncio
import collections
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _procenv as procenv
from evolve_action.harness import _tokens as tokens
from evolve_action.harness._upstream import OPENAI_PUBLIC_URL

if TYPE_CHECKING:
    from evolve_action.catalog import BoundModel

PREFLIGHT_MODEL = "claude-haiku-4-5"
"""The model named in the counting call when the sweep names no Anthropic model."""
SET_HINT = (
    "set ANTHROPIC_API_KEY (an API key) or CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`), "
    "or ANTHROPIC_AUTH_TOKEN; the agent, the judge and token counting all use it"
)
TRIP_AFTER = 3
"""Sessions that must all fail with one cause, before any succeeded, to stop a sweep early."""


def config_dir_credentials(environ: Mapping[str, str]) -> Path | None:
    """The Claude config dir's `.credentials.json` (`CLAUDE_CONFIG_DIR`, else `~/.claude`), if any."""
    base = environ.get("CLAUDE_CONFIG_DIR") or (
        str(Path(environ["HOME"]) / ".claude") if environ.get("HOME") else ""
    )
    if not base:
        return None
    path = Path(base) / ".credentials.json"
    return path if path.is_file() else None


def check_credentials(environ: Mapping[str, str], *, model: str = PREFLIGHT_MODEL) -> None:
    """Raise `EnvironmentProblem` unless the model API accepts the sweep's credential.

    One `POST /v1/messages/count_tokens` (free) with the chosen credential to `ANTHROPIC_BASE_URL`
    (else the public API). 401/403 → refused; a connection failure or timeout → unreachable;
    no credential → missing. Any other answer (200, 404 for an unknown model, 429, 5xx) means the
    credential was accepted or the problem is not the credential: the sweep goes on and its
    sessions report whatever happens.
    """
    if environ.get("CLAUDE_CODE_USE_BEDROCK") or environ.get("CLAUDE_CODE_USE_VERTEX"):
        return
    chosen = procenv.chosen_credential(environ)
    if chosen is None:
        stored = config_dir_credentials(environ)
        extra = (
            f" ({stored} exists, but every session runs with its own isolated config dir and "
            "cannot use it)"
            if stored is not None
            else ""
        )
        raise EnvironmentProblem(
            "no Anthropic credentials: no agent or judge session can run" + extra,
            hint=SET_HINT + "; nothing was run or written",
        )
    name = chosen[0]
    base_url = environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
    status, detail = asyncio.run(tokens.probe(environ, model))
    if status in (401, 403):
        raise EnvironmentProblem(
            f"the model API at {base_url} refused {name} (HTTP {status}: {detail}): the key is "
            "invalid, expired or revoked",
            hint=f"set a valid {name} ({SET_HINT}); nothing was run or written",
        )
    if status is None:
        raise EnvironmentProblem(
            f"cannot reach the model API at {base_url}: {detail}",
            hint="check the network and ANTHROPIC_BASE_URL; nothing was run or written",
        )


@dataclass(slots=True)
class SessionTally:
    """A sweep's session outcomes: `record("")` for a usable session, `record(cause)` for an error."""

    trip_after: int = TRIP_AFTER
    ok: int = 0
    causes: collections.Counter[str] = field(default_factory=collections.Counter)

    def record(self, cause: str) -> None:
        """Count one finished session (`""` when it was usable)."""
        if cause:
            self.causes[cause] += 1
        else:
            self.ok += 1

    @property
    def tripped(self) -> str:
        """The shared cause once `trip_after` sessions failed alike before any succeeded, else `""`."""
        if self.ok or len(self.causes) != 1:
            return ""
        cause, n = next(iter(self.causes.items()))
        return cause if n >= self.trip_after else ""

    @property
    def all_failed(self) -> str:
        """The cause when sessions ran, none was usable and all failed alike, else `""`."""
        if self.ok or len(self.causes) != 1:
            return ""
        return next(iter(self.causes))


def sweep_failed(cause: str, *, tier: str) -> EnvironmentProblem:
    """The exit-2 error of a sweep whose every session failed with `cause`."""
    return EnvironmentProblem(
        f"{tier}: every agent session failed: {cause}",
        hint="stored results were left unchanged; fix the cause and re-run"
        + (f" ({SET_HINT})" if _is_credential_cause(cause) else ""),
    )


def _is_credential_cause(cause: str) -> bool:
    low = cause.lower()
    return any(
        s in low for s in ("credentials refused", "not authenticated", "401", "403", "login")
    )


__all__ = [
    "PREFLIGHT_MODEL",
    "SessionTally",
    "check_credentials",
    "check_for_models",
    "check_openai_credentials",
    "config_dir_credentials",
    "sweep_failed",
]


def check_for_models(
    environ: Mapping[str, str], models: Iterable[BoundModel], *, judge: bool = True
) -> None:
    """`check_credentials`, naming the sweep's first Anthropic model in the counting call, unless
    every model runs through Codex and no judge runs (a trigger sweep of openai/* models needs no
    Anthropic key); then `check_openai_credentials` when a model runs through Codex."""
    models = list(models)
    anthropic_ids = [m.model.id for m in models if m.model.provider == "anthropic"]
    if judge or any(m.harness != "codex" for m in models):
        check_credentials(environ, model=anthropic_ids[0] if anthropic_ids else PREFLIGHT_MODEL)
    if any(m.harness == "codex" for m in models):
        check_openai_credentials(environ)


OPENAI_HINT = "set OPENAI_API_KEY (or EVOLVE_OPENAI_API_KEY); Codex sessions use it"


def check_openai_credentials(environ: Mapping[str, str], *, timeout: float = 15.0) -> None:
    """Raise `EnvironmentProblem` unless the OpenAI endpoint accepts the Codex sessions' key.

    One `GET <base>/models` (free) with the key, to `OPENAI_BASE_URL` (else the public API):
    401/403 → refused; a connection failure → unreachable; no key → missing. Any other answer lets
    the sweep go on (its sessions report what happens).
    """
    chosen = procenv.openai_credential(environ)
    if chosen is None:
        raise EnvironmentProblem(
            "no OpenAI credentials: no Codex session (openai/* models) can run",
            hint=OPENAI_HINT + "; nothing was run or written",
        )
    name, key = chosen
    base_url = procenv.openai_base_url(environ) or OPENAI_PUBLIC_URL
    request = urllib.request.Request(
        f"{base_url}/models", headers={"Authorization": f"Bearer {key}"}, method="GET"
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler(procenv.proxies(environ)))
    try:
        with opener.open(request, timeout=timeout):
            return
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise EnvironmentProblem(
                f"the OpenAI API at {base_url} refused {name} (HTTP {exc.code}): the key is "
                "invalid, expired or revoked",
                hint=f"set a valid {name} ({OPENAI_HINT}); nothing was run or written",
            ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise EnvironmentProblem(
            f"cannot reach the OpenAI API at {base_url}: {reason}",
            hint="check the network and OPENAI_BASE_URL; nothing was run or written",
        ) from None
