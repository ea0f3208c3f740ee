"""The resolver (`config.resolve_repository`): configuration, then discovery, once (issue 44).

On real trees: the config file that applies is opened once and the repository is modelled once
(the files one `discover` of the final layout opens, no more), whichever directory the config sits
in; and the precedence of the config's place (working directory or `--root`, then up to the
marketplace) and of the layout (`--layout` > `EVOLVE_LAYOUT` > config `layout`). File opens are
observed with an audit hook (`sys.addaudithook`, the interpreter's own `open` event): nothing of
ours is replaced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from evolve_action.cli import build_parser
from evolve_action.cli._report import resolve_options
from evolve_action.config import Resolved, resolve_repository
from evolve_action.errors import ConfigError
from evolve_action.repo import CONFIG_NAMES, discover

_RECORDINGS: list[list[str]] = []
_HOOKED: list[bool] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _RECORDINGS and isinstance(args[0], str | os.PathLike):
        path = os.fspath(args[0])
        if isinstance(path, str):
            _RECORDINGS[-1].append(path)


@contextmanager
def opens(under: Path) -> Iterator[list[str]]:
    """The files opened inside the block, as paths relative to `under` (others are dropped)."""
    if not _HOOKED:  # an audit hook cannot be removed: one, idle unless a block records
        sys.addaudithook(_hook)
        _HOOKED.append(True)
    seen: list[str] = []
    _RECORDINGS.append(seen)
    relative: list[str] = []
    try:
        yield relative
    finally:
        _RECORDINGS.pop()
        for path in seen:
            try:
                relative.append(Path(path).relative_to(under).as_posix())
            except ValueError:
                continue


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def market(
    root: Path,
    *,
    config: str | None = "layout: marketplace\n",
    name: str = ".evolve.yaml",
    git: bool = False,
) -> Path:
    """A marketplace with one plugin `p` (one skill) under `plugins/`; `config` at its root."""
    listing = {
        "name": "m",
        "owner": {"name": "o"},
        "plugins": [{"name": "p", "source": "./plugins/p"}],
    }
    write(root / ".claude-plugin/marketplace.json", json.dumps(listing))
    write(root / "plugins/p/.claude-plugin/plugin.json", '{"name": "p"}')
    write(root / "plugins/p/skills/s/SKILL.md", "---\nname: s\ndescription: Use when x.\n---\nx\n")
    if config is not None:
        write(root / name, config)
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def configs(opened: list[str]) -> list[str]:
    return [p for p in opened if Path(p).name in CONFIG_NAMES]


def test_from_a_plugin_directory_the_marketplace_config_is_read_once_and_discovery_done_once(
    tmp_path: Path,
) -> None:
    """The marketplace's config sets `layout: marketplace`: the plugin directory is where the
    search starts, the marketplace is what is discovered, and only once (before, the plugin was
    modelled first, then the marketplace). JSON, so the count is not about YAML's blank check."""
    config_text, name = '{"layout": "marketplace"}\n', ".evolve.json"
    first = market(tmp_path / "a", config=config_text, name=name)
    second = market(tmp_path / "b", config=config_text, name=name)
    with opens(first) as resolving:
        repository, config = resolve_repository(None, first / "plugins/p", None, {})
    with opens(second) as discovering:
        discover(None, second / "plugins/p", "marketplace")
    assert (repository.root, repository.layout) == (first, "marketplace")
    assert config.source_path == first / name
    assert configs(resolving) == [name]
    assert Counter(resolving) == Counter(discovering) + Counter([name])


def test_the_config_of_the_working_directory_wins_and_nothing_above_is_opened(
    tmp_path: Path,
) -> None:
    """Each YAML file opened once too (its bytes serve the blank-file check and the decoding)."""
    root = market(tmp_path / "m", config="layout: marketplace\nchecks:\n  license: MIT\n")
    write(root / "plugins/p/.evolve.yaml", "checks:\n  license: Apache-2.0\n")
    with opens(root) as resolving:
        repository, config = resolve_repository(None, root / "plugins/p", None, {})
    assert configs(resolving) == ["plugins/p/.evolve.yaml"]
    assert (repository.root, repository.layout) == (root / "plugins/p", "single")
    assert config.checks.license == "Apache-2.0"
    with opens(root) as resolving:
        repository, config = resolve_repository(None, root, None, {})
    assert configs(resolving) == [".evolve.yaml"]
    assert (repository.root, config.checks.license) == (root, "MIT")


def test_a_marketplace_config_without_a_layout_keeps_the_plugin(tmp_path: Path) -> None:
    """Found by the walk, the marketplace's config applies; its `auto` layout keeps the plugin
    directory as the repository."""
    root = market(tmp_path / "m", config="checks:\n  license: MIT\n", git=True)
    repository, config = resolve_repository(None, root / "plugins/p", None, {})
    assert (repository.root, repository.layout) == (root / "plugins/p", "single")
    assert (config.source_path, config.checks.license) == (root / ".evolve.yaml", "MIT")


def test_the_layout_is_the_flag_else_the_environment_else_the_file(tmp_path: Path) -> None:
    """A root that is both a marketplace and a multi-plugin repository, its config saying `multi`."""
    root = market(tmp_path / "m", config="layout: multi\n")
    assert resolve_repository(root, root, None, {}).repository.layout == "multi"
    env = {"EVOLVE_LAYOUT": "marketplace"}
    repository, config = resolve_repository(root, root, None, env)
    assert (repository.layout, config.layout) == ("marketplace", "marketplace")
    repository, config = resolve_repository(root, root, "multi", env)
    assert (repository.layout, config.layout) == ("multi", "multi")


def test_the_layout_flag_or_environment_decides_where_the_walk_starts(tmp_path: Path) -> None:
    """From the plugin directory with `single` (flag or `EVOLVE_LAYOUT`), the plugin is the
    repository, and the marketplace's config (which says `marketplace`) still applies otherwise."""
    root = market(tmp_path / "m", config="layout: marketplace\nchecks:\n  license: MIT\n")
    plugin = root / "plugins/p"
    for flag, env in (("single", {}), (None, {"EVOLVE_LAYOUT": "single"})):
        with opens(root) as resolving:
            repository, config = resolve_repository(None, plugin, flag, env)
        assert (repository.root, repository.layout) == (plugin, "single"), (flag, env)
        assert (config.source_path, config.layout) == (root / ".evolve.yaml", "single")
        assert config.checks.license == "MIT"
        assert configs(resolving) == [".evolve.yaml"]


def test_root_given_reads_its_config_never_the_working_directorys(tmp_path: Path) -> None:
    root = market(tmp_path / "m", config="checks:\n  license: MIT\n")
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / ".evolve.yaml", "checks:\n  license: GPL-3.0\n")
    for given in (Path("../m"), Path("../m/plugins/p"), root / "plugins/p"):
        with opens(tmp_path) as resolving:
            repository, config = resolve_repository(given, elsewhere, None, {})
        assert repository.root == Path(os.path.normpath(elsewhere / given)), given
        assert configs(resolving) == ["m/.evolve.yaml"], given
        assert config.checks.license == "MIT"


def test_no_config_anywhere_is_defaults_and_the_environment(tmp_path: Path) -> None:
    """A config above the git work tree's top, or (outside git) above the outermost
    marketplace, is not the repository's: never read."""
    write(tmp_path / ".evolve.yaml", "checks:\n  license: GPL-3.0\n")
    for name, git in (("in-git", True), ("no-git", False)):
        root = market(tmp_path / "x" / name, config=None, git=git)
        env = {"EVOLVE_CHECKS_LICENSE": "MIT"}
        with opens(tmp_path) as resolving:
            resolved = resolve_repository(None, root / "plugins/p", None, env)
        assert isinstance(resolved, Resolved)
        assert resolved.config.source_path is None, name
        assert resolved.config.checks.license == "MIT"
        assert (resolved.repository.root, resolved.repository.layout) == (
            root / "plugins/p",
            "single",
        )
        assert configs(resolving) == []


def test_two_config_files_in_one_place_are_an_error_naming_both(tmp_path: Path) -> None:
    root = market(tmp_path / "m", config="{}\n")
    write(root / ".evolve.json", "{}\n")
    for cwd in (root, root / "plugins/p"):  # where it starts, and found by the walk
        with pytest.raises(ConfigError) as caught:
            resolve_repository(None, cwd, None, {})
        message = str(caught.value)
        assert "ambiguous config" in message, cwd
        assert (root / ".evolve.yaml").as_posix() in message
        assert (root / ".evolve.json").as_posix() in message


def test_report_resolves_like_the_other_commands(tmp_path: Path) -> None:
    """`report` from a plugin directory reads the marketplace's config, as `run` does (it read
    none before, so its gate used the defaults where the run had used the repository's)."""
    root = market(
        tmp_path / "m", config="report:\n  thresholds:\n    evals_min_pass_rate: 0.9\n", git=True
    )
    args = build_parser().parse_args(["report"])
    options = resolve_options(args, {}, root / "plugins/p")
    assert options.config.source_path == root / ".evolve.yaml"
    assert options.config.report.thresholds.evals_min_pass_rate == 0.9
    assert options.repo.root == root / "plugins/p"
