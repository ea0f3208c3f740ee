"""Configuration: the `.evolve.*` file, `EVOLVE_*` environment and flags, and the one resolver.

Owns: the effective `Config` (defaults < file < `EVOLVE_*` < flags, engine spec §2.2) and where it
comes from: `resolve_repository` is the one way a command gets its repository and configuration
together, in one pass (the config file found, read once, the layout decided once, the repository
discovered once).

Guarantees: a frozen, fully typed `Config`; every bad value is a `ConfigError` naming the key, the
file and the line where known; unknown keys are warnings. Never does: read `os.environ` (callers
pass `environ`), print, write.

Files (private; import from this package):
- `_settings`: the key table, the `Config` values, one file's decoding (`read_config`), the
  environment and flags (`with_flags`), `as_committed`. Knows nothing of repositories.
- `_resolve`: where the config file is (`find_config`, `config_search_path`), `load_config`, and
  `resolve_repository` → `Resolved(repository, config)`. The one module here that imports `repo`:
  it sits above both, so `_settings` and `repo` never import each other.
"""

from evolve_action.config._resolve import (
    Resolved,
    config_search_path,
    find_config,
    load_config,
    resolve_repository,
)
from evolve_action.config._settings import (
    BASE_MODES,
    DEFAULT_BASE_MODE,
    DEFAULT_DESCRIPTION_PATTERN,
    DEFAULT_MAX_RUNS,
    DEFAULT_MAX_TURNS,
    INSTALL_MODES,
    KEYS,
    KNOWN_HARNESSES,
    MANIFEST_KINDS,
    BaseMode,
    ChecksConfig,
    Config,
    Kind,
    PrConfig,
    RemoteConfig,
    ReportConfig,
    SandboxConfig,
    Thresholds,
    as_committed,
    compile_description_pattern,
    env_name,
    read_config,
    resolve_results_format,
    with_flags,
)

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
    "Resolved",
    "SandboxConfig",
    "Thresholds",
    "as_committed",
    "compile_description_pattern",
    "config_search_path",
    "env_name",
    "find_config",
    "load_config",
    "read_config",
    "resolve_repository",
    "resolve_results_format",
    "with_flags",
]
