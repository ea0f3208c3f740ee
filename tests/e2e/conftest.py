"""E2E fixtures: the `--update-golden` flag and a byte-exact golden comparison helper.

`pytest --update-golden` rewrites the golden files under `tests/golden/`; a normal run
never writes them and fails with a unified diff on any byte difference.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


GoldenCheck = Callable[[str, bytes], None]


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> GoldenCheck:
    """`golden(relpath, data)`: compare `data` with `tests/golden/<relpath>` byte for byte."""
    update = bool(request.config.getoption("--update-golden", default=False))

    def check(rel: str, data: bytes) -> None:
        path = GOLDEN / rel
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            return
        if not path.is_file():
            pytest.fail(f"missing golden file {path}; run pytest --update-golden")
        want = path.read_bytes()
        if want != data:
            diff = "".join(
                difflib.unified_diff(
                    want.decode("utf-8", "replace").splitlines(keepends=True),
                    data.decode("utf-8", "replace").splitlines(keepends=True),
                    fromfile=f"golden/{rel}",
                    tofile="rendered",
                )
            )
            pytest.fail(f"{rel} differs from its golden file:\n{diff}")

    return check
