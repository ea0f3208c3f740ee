"""The allowlisted environment every child process (agent, `command` assertion, git) gets.

Owns: `safe_env`. Guarantees: `GITHUB_TOKEN`, `GH_TOKEN`, `ACTIONS_*` tokens and every `INPUT_*`
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
