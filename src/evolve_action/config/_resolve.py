"""The resolver: a repository and its configuration, in one pass.

Owns: where the config file is (`find_config` in one directory, `config_search_path` above the
repository's root), `load_config` (one directory's file plus the environment), and
`resolve_repository`, the one way a command gets its `(Repository, Config)`:

1. the config file: the one in `--root` when given, else in the working directory; when that has
   none, the first found along `config_search_path` from where the repository is (`repo.locate`:
   by its markers alone, with the `--layout` flag, else `EVOLVE_LAYOUT`), so a plugin directory of
   a marketplace reads the marketplace's config (a deliberate improvement over evolve, see
   docs/checks.md);
2. that file read once (`read_config`), with the environment;
3. the layout decided once: `--layout`, else `EVOLVE_LAYOUT`/config `layout`;
4. the repository discovered once (`repo.discover`) with that layout.

This module sits above both `_settings` (which never looks at the repository) and `repo` (which
never reads configuration): imports point from here down to them, never back, and the layering
test ranks the `config` package above `repo`.

Guarantees: the config file that applies is opened once and the repository is modelled once per
call; the result is a frozen `Resolved` that unpacks as `(repository, config)`; the config says
where it came from (`Config.source_path`, None when no file applies); two config files in one
directory are a `ConfigError` naming both. Never does: read `os.environ` (callers pass
`environ`), print, write, look above the git work tree's top (or, outside git, the outermost
enclosing marketplace or multi-plugin repository) for a config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from evolve_action.config._settings import Config, read_config, with_flags
from evolve_action.errors import ConfigError
from evolve_action.repo import CONFIG_NAMES, Repository, absolute, classify, discover, locate

__all__ = [
    "Resolved",
    "config_search_path",
    "find_config",
    "load_config",
    "resolve_repository",
]


class Resolved(NamedTuple):
    """A repository and the configuration that applies to it (unpacks as `(repository, config)`)."""

    repository: Repository
    config: Config
    """`source_path` says which file was read (None: defaults and the environment only); a
    `--layout` flag is applied on top."""


def resolve_repository(
    root: Path | None,
    cwd: Path,
    layout_flag: str | None,
    environ: Mapping[str, str],
) -> Resolved:
    """The repository at `--root` (or found from `cwd`) and its configuration, in one pass.

    See the module docstring for the order: where the config is, read it once, decide the layout
    once, discover once. `UsageError` for a bad `--root`/`--layout`, `SpecError` when no
    repository is found, `ConfigError` for a bad config file or `EVOLVE_*` value.
    """
    base = absolute(cwd / root) if root is not None else cwd
    path = find_config(base if base.is_dir() else cwd)
    if path is None:
        environment_only = read_config(None, environ)
        where = locate(root, cwd, _layout(layout_flag, environment_only))
        path = _first_config(config_search_path(where), skip=absolute(base))
        config = environment_only if path is None else read_config(path, environ)
    else:
        config = read_config(path, environ)
    repository = discover(root, cwd, _layout(layout_flag, config))
    if layout_flag is not None:
        config = with_flags(config, {"layout": layout_flag})
    return Resolved(repository, config)


def _first_config(directories: list[Path], *, skip: Path) -> Path | None:
    """The config file of the first of `directories` that has one (`skip` was looked at)."""
    for directory in directories:
        if directory != skip and (found := find_config(directory)) is not None:
            return found
    return None


def _layout(flag: str | None, config: Config) -> str:
    """`--layout`, else `EVOLVE_LAYOUT`/config `layout` (already merged in `config`)."""
    return flag if flag is not None else config.layout


def load_config(directory: Path, environ: Mapping[str, str]) -> Config:
    """Read `directory/.evolve.<ext>` (if any) and `EVOLVE_*` from `environ` into a `Config`."""
    return read_config(find_config(directory), environ)


def find_config(directory: Path) -> Path | None:
    """The one `.evolve.<ext>` in `directory`, or None; `ConfigError` when several exist."""
    found = [directory / n for n in CONFIG_NAMES if _exists_not_dir(directory / n)]
    if len(found) > 1:
        shown = ", ".join(p.as_posix() for p in found)
        raise ConfigError(
            f"ambiguous config: found {shown}; keep exactly one",
            path=found[0],
            hint="delete or merge the extra config files",
        )
    return found[0] if found else None


def _exists_not_dir(path: Path) -> bool:
    return os.path.lexists(path) and not path.is_dir()


def config_search_path(repo_root: Path) -> list[Path]:
    """Where a repository's `.evolve.*` may live: its root, then the enclosing repository's.

    Run from a plugin directory of a marketplace, the plugin is the repository found, yet the
    config sits at the marketplace root: the search walks up from `repo_root` to the git work
    tree's top (the first directory holding `.git`); outside git, up to the outermost enclosing
    marketplace or multi-plugin repository. Never beyond either.
    """
    start = absolute(repo_root)
    chain = [start, *start.parents]
    top = next((i for i, d in enumerate(chain) if os.path.lexists(d / ".git")), None)
    if top is None:
        outer = [i for i, d in enumerate(chain) if classify(d) in ("marketplace", "multi")]
        top = outer[-1] if outer else 0
    return chain[: top + 1]
