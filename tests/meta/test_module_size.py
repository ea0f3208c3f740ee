"""Module sizes (issue 44): a thin CLI, and no module too long to read as one concept.

- every module under `cli/` is at most `CLI_MAX_LINES` lines: parse arguments, call a flow, print
  (the work lives in `flows` or the stage package that owns the concept);
- no module anywhere under `src/` is over `MAX_LINES` lines.

Counted on the source text (nothing is imported), so the test is fast.
"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "evolve_action"

CLI_MAX_LINES = 250
MAX_LINES = 1_000


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_every_cli_module_is_thin() -> None:
    cli = sorted((PACKAGE / "cli").glob("*.py"))
    assert cli, "no cli modules found"
    long = [
        f"{p.relative_to(SRC)}: {lines_of(p)} lines (at most {CLI_MAX_LINES}: move the work into "
        "flows or the stage package that owns it)"
        for p in cli
        if lines_of(p) > CLI_MAX_LINES
    ]
    assert long == [], "\n".join(long)


def test_no_module_is_over_the_limit() -> None:
    sizes = {p.relative_to(SRC).as_posix(): lines_of(p) for p in sorted(PACKAGE.rglob("*.py"))}
    long = [
        f"{name}: {n} lines (at most {MAX_LINES}: split it where a concept boundary exists)"
        for name, n in sizes.items()
        if n > MAX_LINES
    ]
    assert long == [], "\n".join(long)
