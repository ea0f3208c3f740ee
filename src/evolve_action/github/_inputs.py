"""The action's inputs: read from `INPUT_*`, validated up front, returned as one frozen value.

Owns: `read_inputs` (every input of `action.yml`, in both spellings the runner may use:
`INPUT_FOO_BAR` and `INPUT_FOO-BAR`), the closed sets of the enumerated inputs and `INPUT_DEFAULTS`
(kept equal to `action.yml` by a meta-test).

Guarantees: every problem is found before any is reported, and all of them come back in one
`ConfigError` naming the input, the bad value (shortened and cleaned; a secret's value is never
shown) and what is allowed. Secrets are masked through the given log stream before anything is
validated. Never reads `os.environ` (the environment is passed in) and never prints otherwise.
"""

from __future__ import annotations

import json
import os.path
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO, TypeVar, get_args

from evolve_action.config import BASE_MODES, BaseMode
from evolve_action.errors import ConfigError
from evolve_action.github._api import LOGIN
from evolve_action.github._workflow import mask
from evolve_action.sanitise import clean_line

__all__ = [
    "COMMENT_MODES",
    "FAIL_ON",
    "INPUT_DEFAULTS",
    "MODES",
    "SECRET_INPUTS",
    "TIERS",
    "ActionInputs",
    "CommentMode",
    "FailOn",
    "Mode",
    "Tier",
    "input_value",
    "read_inputs",
]

Mode = Literal["pr", "gate", "run", "plan", "shard", "merge"]
CommentMode = Literal["always", "changes", "failures", "off"]
FailOn = Literal["regression", "threshold", "error", "never"]
Tier = Literal["checks", "triggers", "evals"]

MODES: tuple[Mode, ...] = get_args(Mode)
COMMENT_MODES: tuple[CommentMode, ...] = get_args(CommentMode)
FAIL_ON: tuple[FailOn, ...] = get_args(FailOn)
TIERS: tuple[Tier, ...] = get_args(Tier)
EXTRA_HARNESSES: tuple[str, ...] = ("codex",)
"""What `extra_harnesses` may name (Claude Code always comes with the image)."""

INPUT_DEFAULTS: dict[str, str] = {
    "mode": "pr",
    "anthropic_api_key": "",
    "claude_code_oauth_token": "",
    "openai_api_key": "",
    "extra_harnesses": "",
    "github_token": "${{ github.token }}",
    "models": "",
    "tiers": "checks,triggers,evals",
    "runs": "",
    "jobs": "",
    "max_turns": "",
    "timeout": "",
    "judge_model": "",
    "max_cost_usd": "",
    "base": "",
    "max_runs": "",
    "shards": "",
    "shard": "",
    "fragments": ".evolve-fragments",
    "commit": "true",
    "comment": "always",
    "comment_author": "",
    "fail_on": "regression",
    "min_triggers_pass_rate": "",
    "min_evals_pass_rate": "",
    "working_directory": ".",
    "skills": "",
    "commit_message": "evolve-action: update evaluation results",
    "allow_fork_target": "false",
}
"""Every input with the default `action.yml` declares (an expression stays as written)."""

SECRET_INPUTS: tuple[str, ...] = (
    "anthropic_api_key",
    "claude_code_oauth_token",
    "openai_api_key",
    "github_token",
)
"""Inputs whose values are masked and never shown in an error."""

# Upper bounds that catch typos (an extra digit) long before they cost money.
_MAX_RUNS = 100
_MAX_JOBS = 64
_MAX_TURNS = 1000
_MAX_TIMEOUT = 6 * 3600  # a GitHub-hosted job's own limit
_MAX_MESSAGE = 10_000
_MAX_TOKEN_LIST = 100
_MAX_SHARDS = 64
_SHOWN = 60

_T = TypeVar("_T", bound=str)
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_MODEL_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+\[\]-]{0,199}")
_SKILL_TOKEN = re.compile(
    r"(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,199}/)?[A-Za-z0-9_][A-Za-z0-9._-]{0,199}"
)
_SPLIT = re.compile(r"[,\n]")


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionInputs:
    """The validated inputs of one action step."""

    mode: Mode
    """`pr`, `gate` or `run`."""
    anthropic_api_key: str
    """Empty when not given (fork PRs: Tier 0 only)."""
    claude_code_oauth_token: str
    """Empty when not given."""
    openai_api_key: str = ""
    """For openai/* models through Codex; empty when not given."""
    extra_harnesses: tuple[str, ...] = ()
    """Agent CLIs to install beside Claude Code (`codex`)."""
    github_token: str
    """Empty when not given (local runs)."""
    models: tuple[str, ...]
    """Model tokens as given (`all`, a provider, ids); empty: the repository config decides."""
    tiers: tuple[Tier, ...]
    """The tiers to run, in checks → triggers → evals order, without duplicates."""
    runs: int | None
    """Trigger sessions per query; None: the engine default."""
    jobs: int | None
    """Concurrent sessions; None: the engine default."""
    max_turns: int | None
    """Agent turn cap per eval; None: the repository config."""
    timeout: int | None
    """Per-session timeout in seconds; None: the tier defaults."""
    judge_model: str | None
    """Judge model id; None: the repository config."""
    max_cost_usd: float | None
    """The job's spending cap in US dollars (`--max-cost-usd`); None: no cap."""
    base: BaseMode | None
    """What the PR's base side is (`stored | rerun | auto`); None: the config's `pr.base`."""
    max_runs: int | None
    """Runs per query per side an undecided comparison may grow to; None: config `pr.max_runs`."""
    commit: bool
    """Commit the results back to the PR branch."""
    comment: CommentMode
    """When to post or update the sticky comment."""
    comment_author: str = ""
    """The login the sticky comment is written by; empty: the token's identity, from the API."""
    fail_on: FailOn
    """What fails the step."""
    min_triggers_pass_rate: float | None
    """Gate threshold (0–1); None: the repository config."""
    min_evals_pass_rate: float | None
    """Gate threshold (0–1); None: the repository config."""
    working_directory: Path
    """Absolute plugin repository root, inside the workspace."""
    all_skills: bool
    """`skills: all`: every skill, touched or not."""
    skills: tuple[str, ...]
    """Explicit skills (`name` or `plugin/name`); empty with `all_skills` False: the touched ones."""
    commit_message: str
    """Message of the results commit."""
    allow_fork_target: bool
    """Accept `pull_request_target` on a fork's head."""
    shards: int | None = None
    """`mode: plan`: how many shards (None: not given)."""
    shard: tuple[int, int] | None = None
    """`mode: shard`: `(i, N)` of `i/N` (None: not given)."""
    fragments: Path | None = None
    """`mode: shard` writes its fragments here; `mode: merge` reads every fragment below it."""

    def __repr__(self) -> str:
        """The fields with the secrets hidden (a repr may end up in a log)."""
        shown = []
        for name in self.__slots__:
            value = getattr(self, name)
            if name in SECRET_INPUTS:
                value = "***" if value else ""
            shown.append(f"{name}={value!r}")
        return f"ActionInputs({', '.join(shown)})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The non-empty secret values (for masking and for scrubbing text)."""
        return tuple(v for v in (getattr(self, n) for n in SECRET_INPUTS) if v)

    @property
    def explicit_skills(self) -> bool:
        """True when `skills` overrides the touched-skill rule."""
        return self.all_skills or bool(self.skills)


def _env_names(name: str) -> tuple[str, str]:
    upper = name.upper()
    return f"INPUT_{upper}", f"INPUT_{upper.replace('_', '-')}"


def input_value(environ: Mapping[str, str], name: str) -> str | None:
    """The raw value of input `name` (either spelling; underscores first), None when unset."""
    for key in dict.fromkeys(_env_names(name)):
        if key in environ:
            return environ[key]
    return None


def _show(value: str) -> str:
    text = clean_line(value)
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + f"… ({len(value)} characters)"
    return json.dumps(text, ensure_ascii=False)


class _Problems:
    """Collects one line per bad input."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, name: str, value: str | None, what: str) -> None:
        shown = "" if value is None else f" {_show(value)}"
        self.lines.append(f"{name}:{shown} {what}")


def read_inputs(
    environ: Mapping[str, str],
    *,
    workspace: Path,
    log: TextIO | None = None,
) -> ActionInputs:
    """Read and validate every input; raise one `ConfigError` listing all problems.

    Args:
        environ: the step's environment (`INPUT_*` as the runner sets them).
        workspace: the checkout (`GITHUB_WORKSPACE`); `working_directory` must stay inside it.
        log: where `::add-mask::` commands go (the step's stdout); None: no masking (local use).

    Raises:
        ConfigError: one or more inputs are unusable; the message lists every one.
    """
    raw: dict[str, str] = {}
    problems = _Problems()
    for name, default in INPUT_DEFAULTS.items():
        spellings = [environ[k] for k in dict.fromkeys(_env_names(name)) if k in environ]
        value = spellings[0] if spellings else None
        if name in SECRET_INPUTS:
            for secret in spellings:
                if log is not None and secret.strip():
                    mask(log, secret.strip())
        if len(spellings) == 2 and spellings[0].strip() != spellings[1].strip():
            shown = None if name in SECRET_INPUTS else spellings[0]
            problems.add(
                name,
                shown,
                f"is set twice with different values ({_env_names(name)[0]} and "
                f"{_env_names(name)[1]}); set it once, in the step's `with:`",
            )
        text = (value or "").strip()
        if not text and default and not default.startswith("${{"):
            text = default
        raw[name] = text

    mode = _choice(problems, "mode", raw["mode"], MODES)
    secrets = {n: _secret(problems, n, raw[n]) for n in SECRET_INPUTS}
    tiers = _tiers(problems, raw["tiers"])
    models = _tokens(
        problems,
        "models",
        raw["models"],
        _MODEL_TOKEN,
        "model ids like anthropic/claude-sonnet-5, a provider, or all",
    )
    judge = raw["judge_model"]
    if judge and not _MODEL_TOKEN.fullmatch(judge):
        problems.add(
            "judge_model", judge, "is not a model id (want one id like anthropic/claude-sonnet-5)"
        )
    skills_all, skills = _skills(problems, raw["skills"])
    message = raw["commit_message"]
    if len(message) > _MAX_MESSAGE or "\x00" in message:
        problems.add(
            "commit_message", message, f"must be text of at most {_MAX_MESSAGE} characters"
        )
    inputs = ActionInputs(
        mode=mode or "pr",
        anthropic_api_key=secrets["anthropic_api_key"],
        claude_code_oauth_token=secrets["claude_code_oauth_token"],
        openai_api_key=secrets["openai_api_key"],
        extra_harnesses=_extra_harnesses(problems, raw["extra_harnesses"]),
        github_token=secrets["github_token"],
        models=models,
        tiers=tiers,
        runs=_count(problems, "runs", raw["runs"], _MAX_RUNS, "trigger sessions per query"),
        jobs=_count(problems, "jobs", raw["jobs"], _MAX_JOBS, "concurrent sessions"),
        max_turns=_count(problems, "max_turns", raw["max_turns"], _MAX_TURNS, "agent turns"),
        timeout=_count(problems, "timeout", raw["timeout"], _MAX_TIMEOUT, "seconds per session"),
        judge_model=judge or None,
        max_cost_usd=_dollars(problems, "max_cost_usd", raw["max_cost_usd"]),
        base=_choice(problems, "base", raw["base"], BASE_MODES) if raw["base"] else None,
        max_runs=_count(
            problems, "max_runs", raw["max_runs"], _MAX_RUNS, "runs per query per side"
        ),
        commit=_flag(problems, "commit", raw["commit"]),
        comment=_choice(problems, "comment", raw["comment"], COMMENT_MODES) or "always",
        comment_author=_login(problems, "comment_author", raw["comment_author"]),
        fail_on=_choice(problems, "fail_on", raw["fail_on"], FAIL_ON) or "regression",
        min_triggers_pass_rate=_rate(
            problems, "min_triggers_pass_rate", raw["min_triggers_pass_rate"]
        ),
        min_evals_pass_rate=_rate(problems, "min_evals_pass_rate", raw["min_evals_pass_rate"]),
        working_directory=_directory(problems, raw["working_directory"], workspace),
        all_skills=skills_all,
        skills=skills,
        commit_message=message,
        allow_fork_target=_flag(problems, "allow_fork_target", raw["allow_fork_target"]),
        shards=_count(problems, "shards", raw["shards"], _MAX_SHARDS, "shards"),
        shard=_shard(problems, raw["shard"]),
        fragments=_fragments(problems, raw["fragments"], workspace),
    )
    if inputs.mode == "plan" and inputs.shards is None:
        problems.add("shards", raw["shards"], "is needed by mode: plan (want 1–64 shards)")
    if inputs.mode == "shard" and inputs.shard is None:
        problems.add("shard", raw["shard"], "is needed by mode: shard (want i/N, e.g. 2/4)")
    if problems.lines:
        count = len(problems.lines)
        noun = "input is" if count == 1 else "inputs are"
        raise ConfigError(
            f"{count} action {noun} not usable:\n" + "\n".join(f"  - {p}" for p in problems.lines),
            hint="fix the `with:` block of the evolve-action step (docs/action.md lists every input)",
        )
    return inputs


def _extra_harnesses(problems: _Problems, value: str) -> tuple[str, ...]:
    names = [n.strip() for n in _SPLIT.split(value) if n.strip()]
    wrong = [n for n in names if n not in EXTRA_HARNESSES]
    if wrong:
        problems.add(
            "extra_harnesses",
            value,
            f"names {', '.join(wrong)}: want "
            + ", ".join(EXTRA_HARNESSES)
            + " (Claude Code always comes with the image)",
        )
    return tuple(dict.fromkeys(n for n in names if n in EXTRA_HARNESSES))


def _choice(problems: _Problems, name: str, value: str, allowed: tuple[_T, ...]) -> _T | None:
    for option in allowed:
        if value == option:
            return option
    problems.add(name, value, "is not allowed (want one of " + ", ".join(allowed) + ")")
    return None


def _secret(problems: _Problems, name: str, value: str) -> str:
    if any(c.isspace() or not c.isprintable() for c in value):
        problems.add(
            name,
            None,
            "contains whitespace or control characters inside the value (the value is not shown); "
            "check the secret for a pasted line break",
        )
    return value


def _login(problems: _Problems, name: str, value: str) -> str:
    if value and not (value.isascii() and LOGIN.fullmatch(value)):
        problems.add(
            name, value, "is not a GitHub login (want a user's login or an App's `<slug>[bot]`)"
        )
        return ""
    return value


def _flag(problems: _Problems, name: str, value: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    problems.add(name, value, "is not a boolean (want true or false)")
    return False


def _count(problems: _Problems, name: str, value: str, limit: int, what: str) -> int | None:
    if not value:
        return None
    if not value.isascii() or not value.isdigit():
        problems.add(
            name, value, f"is not a whole number (want 1–{limit} {what}, or empty for the default)"
        )
        return None
    number = int(value)
    if not 1 <= number <= limit:
        problems.add(
            name, value, f"is out of range (want 1–{limit} {what}, or empty for the default)"
        )
        return None
    return number


_SHARD = re.compile(r"([1-9][0-9]{0,2})/([1-9][0-9]{0,2})")


def _shard(problems: _Problems, value: str) -> tuple[int, int] | None:
    if not value:
        return None
    match = _SHARD.fullmatch(value.strip()) if value.isascii() else None
    if match is None or not 1 <= int(match.group(1)) <= int(match.group(2)) <= _MAX_SHARDS:
        problems.add("shard", value, f"is not a shard (want i/N with 1 ≤ i ≤ N ≤ {_MAX_SHARDS})")
        return None
    return int(match.group(1)), int(match.group(2))


def _fragments(problems: _Problems, value: str, workspace: Path) -> Path | None:
    rel = value.strip() or ".evolve-fragments"
    path = Path(rel)
    if path.is_absolute() or ".." in path.parts or "\x00" in rel:
        problems.add("fragments", value, "must be a directory inside the workspace")
        return None
    return workspace / path


_RATE = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(%?)")
_DOLLARS = re.compile(r"\$?(\d{1,9}(?:\.\d{1,6})?|\.\d{1,6})")


def _dollars(problems: _Problems, name: str, value: str) -> float | None:
    if not value:
        return None
    match = _DOLLARS.fullmatch(value.strip()) if value.isascii() else None
    if match is None:
        problems.add(name, value, "is not an amount (want US dollars like 5 or 2.50, or empty)")
        return None
    return float(match.group(1))


def _rate(problems: _Problems, name: str, value: str) -> float | None:
    if not value:
        return None
    match = _RATE.fullmatch(value) if value.isascii() else None
    if match is None:
        problems.add(
            name, value, "is not a rate (want a fraction like 0.8 or a percentage like 80%)"
        )
        return None
    number = float(match.group(1))
    if match.group(2):
        number /= 100
    elif number > 1:
        problems.add(
            name,
            value,
            f"is above 1 (want a fraction like 0.8, or write {value}% for a percentage)",
        )
        return None
    if not 0 <= number <= 1:
        problems.add(name, value, "is out of range (want 0–1 or 0%–100%)")
        return None
    return number


def _split(value: str) -> list[str]:
    return [t.strip() for t in _SPLIT.split(value) if t.strip()]


def _tiers(problems: _Problems, value: str) -> tuple[Tier, ...]:
    tokens = _split(value)
    if not tokens:
        problems.add("tiers", value, "is empty (want checks, triggers and/or evals, or all)")
        return ()
    if tokens == ["all"]:
        return TIERS
    unknown = [t for t in tokens if t not in TIERS]
    if unknown:
        problems.add(
            "tiers",
            value,
            "names unknown tiers "
            + ", ".join(_show(t) for t in unknown[:5])
            + " (want checks, triggers and/or evals, comma-separated, or all)",
        )
        return ()
    return tuple(t for t in TIERS if t in tokens)


def _tokens(
    problems: _Problems, name: str, value: str, pattern: re.Pattern[str], want: str
) -> tuple[str, ...]:
    tokens = _split(value)
    if len(tokens) > _MAX_TOKEN_LIST:
        problems.add(name, value, f"lists {len(tokens)} entries (at most {_MAX_TOKEN_LIST})")
        return ()
    bad = [t for t in tokens if not pattern.fullmatch(t)]
    if bad:
        problems.add(
            name,
            value,
            "has entries that are not valid: "
            + ", ".join(_show(t) for t in bad[:5])
            + f" (want {want}, comma- or newline-separated)",
        )
        return ()
    return tuple(dict.fromkeys(tokens))


def _skills(problems: _Problems, value: str) -> tuple[bool, tuple[str, ...]]:
    tokens = _split(value)
    if tokens == ["all"]:
        return True, ()
    if "all" in tokens:
        problems.add("skills", value, "mixes all with skill names (want all, or a list of names)")
        return False, ()
    want = "skill directory names or plugin/skill, comma- or newline-separated; all for every skill"
    names = _tokens(problems, "skills", value, _SKILL_TOKEN, want)
    bad = [n for n in names if any(part in (".", "..") for part in n.split("/"))]
    if bad:
        problems.add("skills", value, f"names a path, not a skill: {_show(bad[0])} (want {want})")
        return False, ()
    return False, names


def _directory(problems: _Problems, value: str, workspace: Path) -> Path:
    base = Path(_abspath(workspace))
    if "\x00" in value:
        problems.add("working_directory", value, "contains a NUL character")
        return base
    candidate = Path(_abspath(base / value))
    real_base, real = base.resolve(), candidate.resolve()
    if (candidate != base and base not in candidate.parents) or (
        real != real_base and real_base not in real.parents
    ):
        problems.add(
            "working_directory",
            value,
            f"is outside the workspace {base.as_posix()} (want a path relative to the checkout)",
        )
        return base
    if not candidate.is_dir():
        problems.add(
            "working_directory",
            value,
            f"is not a directory in the workspace {base.as_posix()} (want the plugin repository's "
            "root, relative to the checkout)",
        )
    return candidate


def _abspath(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))  # noqa: PTH100 - lexical, keeps symlinks
