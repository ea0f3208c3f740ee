"""Where the model gateway forwards: one route per configured credential, with the job's proxy.

Owns: `Upstream` (a route's base URL, the credential headers it adds, its proxy) and `upstreams`
(the routes of an environment's endpoints and credentials: the same choice the judge makes), and the
public API roots (`ANTHROPIC_PUBLIC_URL`, `OPENAI_PUBLIC_URL`).
Guarantees: a route exists only when its credential is set; `repr` never shows a credential;
Bedrock and Vertex are refused with an error that says what to use instead.
Never does: open a connection, read `os.environ` (callers pass the environment), print.
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _procenv as procenv

__all__ = ["ANTHROPIC_PUBLIC_URL", "OPENAI_PUBLIC_URL", "Upstream", "upstreams"]

ANTHROPIC_PUBLIC_URL = "https://api.anthropic.com"
OPENAI_PUBLIC_URL = "https://api.openai.com/v1"
_OAUTH_BETA = "oauth-2025-04-20"


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where one route forwards, and the credential headers it adds (never shown by `repr`)."""

    route: str
    """`anthropic` or `openai`: the first path segment of the gateway's URL."""
    base_url: str
    headers: tuple[tuple[str, str], ...] = field(repr=False, default=())
    proxy: str = field(repr=False, default="")
    """The HTTP(S) proxy for `base_url` (`HTTPS_PROXY`/`NO_PROXY` of the job), `""` for none."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """The credential values this route sends (scrubbed from every answer)."""
        out = []
        for name, value in self.headers:
            if name == "authorization" and value.lower().startswith("bearer "):
                value = value[7:]
            if name in ("authorization", "x-api-key") and len(value.strip()) >= 8:
                out.append(value.strip())
        return tuple(out)


def upstreams(environ: Mapping[str, str]) -> dict[str, Upstream]:
    """The routes of `environ`'s endpoints and credentials (the same choice the judge makes): a
    route exists only when its credential is set.

    Raises `EnvironmentProblem` for Bedrock or Vertex: the gateway cannot sign for them.
    """
    for name in ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"):
        if environ.get(name, "").strip() not in ("", "0", "false"):
            raise EnvironmentProblem(
                f"{name} is set: Bedrock and Vertex are not supported. Agents reach the model only "
                "through evolve-action's loopback gateway, which holds the credential for them, "
                "and a cloud identity cannot be held that way. Use an Anthropic API key "
                "(ANTHROPIC_API_KEY) or a Claude Code OAuth token (CLAUDE_CODE_OAUTH_TOKEN)."
            )
    out: dict[str, Upstream] = {}
    chosen = procenv.chosen_credential(environ)
    if chosen is not None:
        base = (environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_PUBLIC_URL).strip().rstrip("/")
        name, value = chosen
        headers: tuple[tuple[str, str], ...]
        if name.endswith("_API_KEY"):
            headers = (("x-api-key", value),)
        else:
            headers = (("authorization", f"Bearer {value}"),)
            if "OAUTH" in name:
                headers += (("anthropic-beta", _OAUTH_BETA),)
        out["anthropic"] = Upstream("anthropic", base, headers, _proxy_for(base, environ))
    openai = procenv.openai_credential(environ)
    if openai is not None:
        base = procenv.openai_base_url(environ) or OPENAI_PUBLIC_URL
        out["openai"] = Upstream(
            "openai",
            base,
            (("authorization", f"Bearer {openai[1]}"),),
            _proxy_for(base, environ),
        )
    return out


def _proxy_for(base_url: str, environ: Mapping[str, str]) -> str:
    """The proxy the job's environment names for `base_url`, unless `NO_PROXY` exempts its host."""
    parts = urllib.parse.urlsplit(base_url)
    proxy = procenv.proxies(environ).get(parts.scheme, "")
    no_proxy = environ.get("no_proxy") or environ.get("NO_PROXY") or ""
    host = parts.hostname or ""
    if (
        proxy
        and no_proxy
        and urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
            host, {"no": no_proxy}
        )
    ):
        return ""
    return proxy
