"""The allowlisted environment every child process (agent, `command` assertion, git) gets.

Owns: `safe_env`, the one choice of Anthropic credential (`chosen_credential`,
`agent_credential_env`) shared by the agent, the judge and token counting, and the one choice of
OpenAI credential and endpoint for Codex (`openai_credential`, `openai_base_url`). Guarantees: `GITHUB_TOKEN`, `GH_TOKEN`, `ACTIONS_*` tokens and every `INPUT_*`
variable never reach a child, whatever the caller passes in `extra`. Never reads `os.environ` itself:
callers pass the environment they were given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# Variables a child may inherit from the parent environment, when present.
BASE_ALLOW: frozenset[str] = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TERM",
        "TMPDIR",
        "TZ",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
    }
)

# Extra variables an agent session may inherit (credentials and endpoint of the model API).
AGENT_ALLOW: frozenset[str] = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
    }
)

CREDENTIAL_VARS: tuple[str, ...] = (
    "EVOLVE_ANTHROPIC_API_KEY",
    "EVOLVE_CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
)
"""Anthropic credentials, first set wins; a name ending in `_API_KEY` is an API key, else a bearer token."""

# Where the agent (Claude Code) reads each chosen credential.
_AGENT_CREDENTIAL_NAME = {
    "EVOLVE_ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY",
    "EVOLVE_CLAUDE_CODE_OAUTH_TOKEN": "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN": "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN": "ANTHROPIC_AUTH_TOKEN",
}

_NEVER_PREFIXES = ("INPUT_", "ACTIONS_")
_NEVER = frozenset({"GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT", "GH_ENTERPRISE_TOKEN"})


def is_forbidden(name: str) -> bool:
    """True for variables that must never reach a child process."""
    upper = name.upper()
    return upper in _NEVER or upper.startswith(_NEVER_PREFIXES)


def safe_env(
    environ: Mapping[str, str],
    *,
    allow: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Build a child environment: allowlisted names from `environ`, then `extra`, minus forbidden names."""
    allowed = BASE_ALLOW | frozenset(allow)
    env = {k: v for k, v in environ.items() if k in allowed and not is_forbidden(k)}
    for key, value in (extra or {}).items():
        if not is_forbidden(key):
            env[key] = value
    return env


def chosen_credential(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The Anthropic credential in use: `(name, value)` of the first set `CREDENTIAL_VARS`, or None."""
    name = next((n for n in CREDENTIAL_VARS if environ.get(n)), None)
    return None if name is None else (name, environ[name])


def agent_credential_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The agent's credential variables: exactly the chosen credential, under the name Claude Code
    reads (`EVOLVE_ANTHROPIC_API_KEY` → `ANTHROPIC_API_KEY`, `EVOLVE_CLAUDE_CODE_OAUTH_TOKEN` →
    `CLAUDE_CODE_OAUTH_TOKEN`), so the agent uses the same key as the judge and token counting;
    every other credential variable is left out (callers drop them from the allowlist)."""
    chosen = chosen_credential(environ)
    if chosen is None:
        return {}
    return {_AGENT_CREDENTIAL_NAME[chosen[0]]: chosen[1]}


OPENAI_CREDENTIAL_VARS: tuple[str, ...] = (
    "EVOLVE_OPENAI_API_KEY",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
)
"""OpenAI credentials (for Codex), first set wins; the agent gets it as `OPENAI_API_KEY`."""


def openai_credential(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The OpenAI credential in use: `(name, value)` of the first set `OPENAI_CREDENTIAL_VARS`."""
    name = next((n for n in OPENAI_CREDENTIAL_VARS if environ.get(n)), None)
    return None if name is None else (name, environ[name])


def openai_base_url(environ: Mapping[str, str]) -> str:
    """The user's OpenAI endpoint (`OPENAI_BASE_URL`, trailing `/` removed), or `""` for the public API."""
    return (environ.get("OPENAI_BASE_URL") or "").strip().rstrip("/")


def proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """The HTTP(S) proxies the given environment names (`https_proxy` before `HTTPS_PROXY`), for
    our own requests (`urllib.request.ProxyHandler`), never read from `os.environ`."""
    out: dict[str, str] = {}
    for scheme in ("http", "https"):
        value = environ.get(f"{scheme}_proxy") or environ.get(f"{scheme.upper()}_PROXY")
        if value:
            out[scheme] = value
    return out


AGENT_PASSTHROUGH: frozenset[str] = AGENT_ALLOW - frozenset(CREDENTIAL_VARS)
"""`AGENT_ALLOW` without credentials (those come from `agent_credential_env`)."""
