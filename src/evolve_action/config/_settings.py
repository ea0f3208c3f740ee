"""Settings: the key table, one config file's decoding, `EVOLVE_*` environment and flags.

Owns: decoding one `.evolve.{yaml,yml,json,jsonc}` file given by path (`read_config`: YAML 1.2
core schema via `encoding`, so `yes`/`no` stay strings; the file's bytes are read once), the key
table of engine spec §2.2 with types and defaults, the `EVOLVE_<KEY>` environment mapping, and the
precedence defaults < file < environment < flags (`with_flags`). Keys are case-insensitive like
viper's.

Guarantees: the result is a frozen, fully typed `Config`; a wrong type or value is a `ConfigError`
naming the key, the file and the line where known; unknown keys become warnings (never silently
dropped, never fatal). Never does: decide where a config file is or look at the repository
(`_resolve` does, above this module and `repo`), read `os.environ` (callers pass `environ`),
print, write.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evolve_action.catalog import DEFAULT_JUDGE_MODEL, HARNESSES
from evolve_action.encoding import (
    Format,
    Re2Error,
    compile_re2,
    decode_bytes_with_lines,
    parse_format,
    read_capped,
)
from evolve_action.errors import ConfigError, EvolveError

__all__ = [
    "BASE_MODES",
    "DEFAULT_BASE_MODE",
    "DEFAULT_DESCRIPTION_PATTERN",
    "DEFAULT_MAX_RUNS",
    "DEFAULT_MAX_TURNS",
    "INSTALL_MODES",
    "KEYS",
    "KNOWN_HARNESSES",
    "MANIFEST_KINDS",
    "BaseMode",
    "ChecksConfig",
    "Config",
    "Kind",
    "PrConfig",
    "RemoteConfig",
    "ReportConfig",
    "SandboxConfig",
    "Thresholds",
    "as_committed",
    "compile_description_pattern",
    "env_name",
    "read_config",
    "resolve_results_format",
    "with_flags",
]

KNOWN_HARNESSES: tuple[str, ...] = HARNESSES
"""Harness ids accepted in `harnesses` (the catalog's built-in list)."""
MANIFEST_KINDS: tuple[str, ...] = ("claude", "codex")
DEFAULT_DESCRIPTION_PATTERN = "Use (when|after|before)"

Kind = Literal["str", "int", "float", "bool", "list", "object"]

INSTALL_MODES: tuple[str, ...] = ("skills", "plugin")
"""`install`: `skills` links the plugin's skills into the workspace (evolve's way); `plugin` loads
the plugin as users get it (`claude --plugin-dir`: namespaced skills, its hooks run)."""

BaseMode = Literal["stored", "rerun", "auto"]
BASE_MODES: tuple[BaseMode, ...] = ("stored", "rerun", "auto")
"""`pr.base` (the action's `base` input, `pr --local --base-evidence`): what a PR's base side is.
`stored`: the base's committed results; `rerun`: the base commit's version re-run in the job;
`auto`: re-run when the stored evidence is missing, thin, early-stopped or another version's."""
DEFAULT_BASE_MODE: BaseMode = "auto"
DEFAULT_MAX_RUNS = 18
"""`pr.max_runs`: runs per query per side a PR comparison may grow to. With selective rounds
(only queries whose pooled runs differ get more) a 20-point drop on 10 queries is called ≥ 80 %
of the time at no more sessions than cap 6 cost before (bench/noise.py's fourth table)."""

# Every leaf key with its type. Parents of dotted keys are objects.
KEYS: dict[str, Kind] = {
    "version": "str",
    "layout": "str",
    "models": "list",
    "harnesses": "list",
    "cache_dir": "str",
    "results_format": "str",
    "install": "str",
    "telemetry.dir": "str",
    "max_turns": "int",
    "judge_model": "str",
    "baseline": "bool",
    "stale_results": "str",
    "remote.url": "str",
    "remote.default": "bool",
    "sandbox.enabled": "bool",
    "sandbox.protected_roots": "list",
    "checks.license": "str",
    "checks.description_pattern": "str",
    "checks.max_skill_lines": "int",
    "checks.ideal_skill_lines": "int",
    "checks.signals": "bool",
    "checks.plugin_manifests": "list",
    "checks.marketplace": "bool",
    "report.thresholds.triggers_min_pass_rate": "float",
    "report.thresholds.evals_min_pass_rate": "float",
    "report.thresholds.models": "list",
    "report.thresholds.maturity": "list",
    "report.junit": "str",
    "report.cobertura": "str",
    "report.strict": "bool",
    "pr.base": "str",
    "pr.max_runs": "int",
    "providers": "object",
}
_GROUPS = frozenset(
    {"telemetry", "remote", "sandbox", "checks", "report", "report.thresholds", "pr"}
)
_IGNORED_TOP = frozenset({"$schema"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ChecksConfig:
    """`checks.*`: Tier 0 settings (spec §2.2, §5)."""

    license: str | None = None
    """Required SKILL.md `license` value; `any` allows any license or none; unset means the key is
    forbidden under evolve's conventions and unchecked otherwise (docs/checks.md)."""
    description_pattern: str = DEFAULT_DESCRIPTION_PATTERN
    """RE2 pattern the description must contain (unanchored search)."""
    max_skill_lines: int = 500
    ideal_skill_lines: int = 200
    signals: bool = True
    plugin_manifests: tuple[str, ...] = MANIFEST_KINDS
    """Required per-plugin manifests, in order (`claude`, `codex`)."""
    marketplace: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    """`report.thresholds.*`: the report gate."""

    triggers_min_pass_rate: float = 0.5
    evals_min_pass_rate: float = 0.66
    models: tuple[str, ...] | None = None
    maturity: tuple[str, ...] = ("stable", "unstable", "prerelease")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportConfig:
    """`report.*`."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    junit: str | None = None
    cobertura: str | None = None
    strict: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PrConfig:
    """`pr.*`: how a pull request's comparison gets its power (an evolve-action extension)."""

    base: BaseMode = DEFAULT_BASE_MODE
    max_runs: int = DEFAULT_MAX_RUNS


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxConfig:
    """`sandbox.*`: OS write sandbox for agent runs."""

    enabled: bool = True
    protected_roots: tuple[str, ...] | None = None
    """Unset means `[dirname(root)]`; expansion happens where the sandbox is built."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteConfig:
    """`remote.*` (remote execution; accepted for compatibility, not used)."""

    url: str | None = None
    default: bool = False


DEFAULT_MAX_TURNS = 20
"""Agent turn cap per eval run when neither the case, `--max-turns` nor config `max_turns` sets one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The effective configuration: defaults < file < `EVOLVE_*` < flags."""

    version: str | None = None
    """Version constraint pin (`"~> 0.4"`), unchecked here."""
    layout: str = "auto"
    models: tuple[str, ...] | None = None
    """Model-universe restriction (tokens); None = unrestricted."""
    harnesses: tuple[str, ...] | None = None
    cache_dir: str | None = None
    results_format: Literal["json", "jsonc", "yaml"] = "json"
    install: Literal["skills", "plugin"] = "skills"
    """How trigger sessions get the plugin under test: evolve's skill linking, or `--plugin-dir`."""
    telemetry_dir: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    judge_model: str = DEFAULT_JUDGE_MODEL
    baseline: bool = True
    stale_results: Literal["keep", "drop"] | None = None
    remote: RemoteConfig = field(default_factory=RemoteConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    checks: ChecksConfig = field(default_factory=ChecksConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    pr: PrConfig = field(default_factory=PrConfig)
    providers: Mapping[str, Any] = field(default_factory=dict)
    """Raw `providers.<name>.models` overrides (shape-checked by `catalog`)."""
    source_path: Path | None = None
    """The config file read, if any."""
    warnings: tuple[str, ...] = ()
    """Unknown keys and other non-fatal remarks, one message each."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Explicitly set keys (dotted) → typed value, from file, environment and flags."""

    def is_set(self, key: str) -> bool:
        """True when `key` (dotted) was set by the file, the environment or a flag."""
        return key in self.settings


def env_name(key: str) -> str:
    """The environment variable for a dotted key: `checks.max_skill_lines` → `EVOLVE_CHECKS_MAX_SKILL_LINES`."""
    return "EVOLVE_" + key.upper().replace(".", "_")


def read_config(path: Path | None, environ: Mapping[str, str]) -> Config:
    """The `Config` of the file at `path` (None: no file) and `EVOLVE_*` from `environ`.

    The file is opened once; a file problem is a `ConfigError` naming it (before any environment
    problem)."""
    settings: dict[str, Any] = {}
    warnings: list[str] = []
    if path is not None:
        settings.update(_read_file(path, warnings))
    settings.update(_read_env(environ))
    return _build(settings, source_path=path, warnings=tuple(warnings))


def as_committed(config: Config) -> Config:
    """The configuration the repository's file alone gives (no `EVOLVE_*` environment, no flags):
    what a committed document may depend on, so the same commit renders the same report
    whatever the job's environment."""
    return read_config(config.source_path, {})


def with_flags(config: Config, flags: Mapping[str, Any]) -> Config:
    """Apply explicitly set command-line flags (dotted key → value; `None` = not set) on top."""
    settings = dict(config.settings)
    for key, value in flags.items():
        if value is None:
            continue
        if key not in KEYS:
            raise ValueError(f"unknown config key {key!r}")  # a programming error, not user input
        coerced = _coerce(key, value, where=f"flag for {key}")
        settings[key] = _check_value(key, coerced, where=f"flag for {key}")
    return _build(settings, source_path=config.source_path, warnings=config.warnings)


# --- reading ------------------------------------------------------------------------------


def _read_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        data = read_capped(path)
        if path.suffix in (".yaml", ".yml") and _blank_yaml(data):
            return {}  # an empty or comment-only YAML config means "no settings" (as with viper)
        decoded = decode_bytes_with_lines(data, path)
    except EvolveError as exc:
        raise ConfigError(
            f"parse config: {exc.message}",
            path=path,
            line=exc.line,
            hint=exc.hint or "fix the syntax of the config file",
        ) from exc
    line_of: Callable[[str], int | None] = decoded.line_of
    value = decoded.value
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError("config must be a mapping of keys to values", path=path, line=line_of(""))
    settings: dict[str, Any] = {}
    _walk(value, "", "", path, line_of, settings, warnings)
    return settings


def _walk(
    mapping: dict[str, Any],
    prefix: str,
    pointer: str,
    path: Path,
    line_of: Callable[[str], int | None],
    settings: dict[str, Any],
    warnings: list[str],
) -> None:
    for raw_key, value in mapping.items():
        key = f"{prefix}{str(raw_key).lower()}"
        ptr = f"{pointer}/{_escape_pointer(str(raw_key))}"
        if not prefix and raw_key in _IGNORED_TOP:
            continue
        line = _safe_line(line_of, ptr)
        if key in _GROUPS:
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{key}: expected a mapping of keys, got {_describe(value)}",
                    path=path,
                    line=line,
                    hint=f"see the {key}.* keys in docs/checks.md",
                )
            _walk(value, key + ".", ptr, path, line_of, settings, warnings)
            continue
        if key not in KEYS:
            where = f"{path.name}:{line}" if line else path.name
            warnings.append(f'{where}: unknown config key "{key}" (ignored)')
            continue
        if value is None:  # viper: null is unset
            continue
        try:
            typed = _typed(key, value)
            settings[key] = _check_value(key, typed, where=key)
        except ConfigError as exc:
            raise ConfigError(exc.message, path=path, line=line, hint=exc.hint) from None


def _safe_line(line_of: Callable[[str], int | None], pointer: str) -> int | None:
    try:
        return line_of(pointer)
    except Exception:  # a line lookup must never turn a config error into a crash
        return None


def _escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f'the string "{value}"'
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


_EXPECTED: dict[Kind, str] = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "list": "a list of strings",
    "object": "a mapping",
}


def _typed(key: str, value: Any) -> Any:
    """Strict type check of a value decoded from a config file."""
    kind = KEYS[key]
    ok: bool
    if kind == "str":
        ok = isinstance(value, str)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
        if isinstance(value, float) and value.is_integer():
            value, ok = int(value), True
    elif kind == "float":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "list":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        value = tuple(value) if ok else value
    else:
        ok = isinstance(value, dict)
    if not ok:
        raise ConfigError(
            f"{key}: expected {_EXPECTED[kind]}, got {_describe(value)}",
            hint=f"set {key} to {_EXPECTED[kind]}",
        )
    return value


def _read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for key, kind in KEYS.items():
        if kind == "object":
            continue  # providers cannot usefully come from the environment
        name = env_name(key)
        raw = environ.get(name, "")
        if raw == "":
            continue
        settings[key] = _check_value(key, _coerce(key, raw, where=name), where=name)
    return settings


_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _coerce(key: str, value: Any, *, where: str) -> Any:
    """Convert an environment string (or a flag value) to the key's type."""
    kind = KEYS[key]
    if not isinstance(value, str) or kind == "str":
        return _typed_or_error(key, value, where)
    text = value.strip()
    if kind == "bool":
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    elif kind == "int":
        try:
            return int(text, 10)
        except ValueError:
            pass
    elif kind == "float":
        try:
            number = float(text)
            if math.isfinite(number):
                return number
        except ValueError:
            pass
    elif kind == "list":
        return tuple(text.split())
    raise ConfigError(
        f'{where}: expected {_EXPECTED[kind]}, got "{value}"',
        hint=f"set {where} to {_EXPECTED[kind]}",
    )


def _typed_or_error(key: str, value: Any, where: str) -> Any:
    try:
        return _typed(key, list(value) if isinstance(value, tuple) else value)
    except ConfigError as exc:
        raise ConfigError(exc.message.replace(key, where, 1), hint=exc.hint) from None


def _check_value(key: str, value: Any, *, where: str) -> Any:
    """Semantic checks beyond the type; returns the canonical value."""
    if key == "layout" and value not in ("", "auto", "marketplace", "multi", "single"):
        raise ConfigError(
            f'{where}: unknown layout "{value}" (want auto, marketplace, multi, or single)'
        )
    if key == "results_format":
        try:
            return parse_format(value)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc.message}") from None
    if key == "install" and value not in INSTALL_MODES:
        raise ConfigError(f'{where}: unknown install "{value}" (want skills or plugin)')
    if key == "pr.base" and value not in BASE_MODES:
        raise ConfigError(f'{where}: unknown base "{value}" (want stored, rerun or auto)')
    if key == "pr.max_runs" and not 1 <= value <= 100:
        raise ConfigError(f"{where}: must be between 1 and 100 runs per query (got {value})")
    if key == "stale_results" and value not in ("keep", "drop"):
        raise ConfigError(f'{where}: unknown stale_results "{value}" (want keep or drop)')
    if key == "harnesses":
        for item in value:
            if item not in KNOWN_HARNESSES:
                raise ConfigError(
                    f'config harnesses: unknown harness "{item}"',
                    hint="known harnesses: " + ", ".join(KNOWN_HARNESSES),
                )
    if key == "checks.plugin_manifests":
        for item in value:
            if item not in MANIFEST_KINDS:
                raise ConfigError(
                    f'checks.plugin_manifests: unknown manifest "{item}" (want one of claude, codex)'
                )
    if key == "checks.description_pattern":
        compile_description_pattern(value)
    if key in ("max_turns", "checks.max_skill_lines", "checks.ideal_skill_lines") and value < 0:
        raise ConfigError(f"{where}: must not be negative (got {value})")
    if key.startswith("report.thresholds.") and key.endswith("_rate") and not 0 <= value <= 1:
        raise ConfigError(f"{where}: must be between 0 and 1 (got {value})")
    return value


def compile_description_pattern(pattern: str) -> Any:
    """Compile `checks.description_pattern` with Go's RE2 semantics; `ConfigError` when invalid."""
    try:
        return compile_re2(pattern)
    except Re2Error as exc:
        raise ConfigError(
            f"checks.description_pattern: invalid pattern: {exc}",
            hint="RE2 syntax: no lookaround or backreferences",
        ) from None


# --- building -------------------------------------------------------------------------------


def _build(
    settings: Mapping[str, Any], *, source_path: Path | None, warnings: tuple[str, ...]
) -> Config:
    s = settings
    default = Config()
    checks = ChecksConfig(
        license=s.get("checks.license") or None,
        description_pattern=s.get("checks.description_pattern", DEFAULT_DESCRIPTION_PATTERN),
        max_skill_lines=s.get("checks.max_skill_lines", 500),
        ideal_skill_lines=s.get("checks.ideal_skill_lines", 200),
        signals=s.get("checks.signals", True),
        plugin_manifests=s.get("checks.plugin_manifests", MANIFEST_KINDS),
        marketplace=s.get("checks.marketplace", True),
    )
    thresholds = Thresholds(
        triggers_min_pass_rate=s.get("report.thresholds.triggers_min_pass_rate", 0.5),
        evals_min_pass_rate=s.get("report.thresholds.evals_min_pass_rate", 0.66),
        models=s.get("report.thresholds.models"),
        maturity=s.get("report.thresholds.maturity", ("stable", "unstable", "prerelease")),
    )
    return Config(
        version=s.get("version") or None,
        layout=s.get("layout") or "auto",
        models=s.get("models"),
        harnesses=s.get("harnesses"),
        cache_dir=s.get("cache_dir") or None,
        results_format=s.get("results_format", "json"),
        install=s.get("install", "skills"),
        telemetry_dir=s.get("telemetry.dir") or None,
        max_turns=s.get("max_turns", default.max_turns),
        judge_model=s.get("judge_model") or default.judge_model,
        baseline=s.get("baseline", True),
        stale_results=s.get("stale_results"),
        remote=RemoteConfig(
            url=s.get("remote.url") or None, default=s.get("remote.default", False)
        ),
        sandbox=SandboxConfig(
            enabled=s.get("sandbox.enabled", True),
            protected_roots=s.get("sandbox.protected_roots"),
        ),
        checks=checks,
        report=ReportConfig(
            thresholds=thresholds,
            junit=s.get("report.junit") or None,
            cobertura=s.get("report.cobertura") or None,
            strict=s.get("report.strict", False),
        ),
        pr=PrConfig(
            base=s.get("pr.base", DEFAULT_BASE_MODE),
            max_runs=s.get("pr.max_runs", DEFAULT_MAX_RUNS),
        ),
        providers=dict(s.get("providers") or {}),
        source_path=source_path,
        warnings=warnings,
        settings=dict(s),
    )


def _blank_yaml(data: bytes) -> bool:
    if len(data) > 64 * 1024:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False  # let the decoder report it
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def resolve_results_format(flag: str | None, config: Config) -> Format:
    """The results file format: `--results-format`, else config `results_format` (`yml` = yaml)."""
    return parse_format(flag or config.results_format)
