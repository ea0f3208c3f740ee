"""Suite-wide fixtures: an isolated environment for every test, and the repo's paths."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
CORPUS = REPO.parent / "shared" / "corpus" / "bitwise-skills"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files under tests/golden/ instead of comparing",
    )


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Point HOME/XDG/CLAUDE_CONFIG_DIR at temp dirs, drop GitHub/Anthropic/INPUT_ vars, pin git identity."""
    import os

    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if (
            name.startswith(("GITHUB_", "INPUT_", "ANTHROPIC_", "EVOLVE_", "CLAUDE_"))
            or name == "CI"
        ):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    yield


@pytest.fixture(autouse=True)
def _redactor_per_test() -> Iterator[None]:
    """Secrets a test registers (a masked input, a CLI run's environment) end with the test."""
    from evolve_action import redact

    with redact.scoped():
        yield


_MARKERS = (".git", ".agents", ".codex", ".claude")
"""Directories that, directly in the system temp dir, make every repository a later test builds
under it look nested in another: Claude Code then did not load the skill under test (CI saw
`/tmp/.git`, `/tmp/.agents` and `/tmp/.codex`, empty, appear during a run)."""


@pytest.fixture(autouse=True)
def _temp_dir_left_clean(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, an empty marker directory in the system temp dir is removed, with a
    warning naming the test that ran when it was found (a non-empty one is only reported)."""
    import tempfile
    import warnings

    yield
    temp = Path(tempfile.gettempdir())
    for name in _MARKERS:
        path = temp / name
        if not path.is_dir() or path.is_symlink():
            continue
        try:
            path.rmdir()
            what = "removed"
        except OSError:
            what = "not empty: left in place"
        warnings.warn(f"{path} found after {request.node.nodeid} ({what})", stacklevel=1)


@pytest.fixture
def corpus() -> Path:
    """The read-only real marketplace corpus; skips when shared/ is not beside the checkout."""
    if not CORPUS.is_dir():
        pytest.skip("shared/corpus/bitwise-skills not available")
    return CORPUS
