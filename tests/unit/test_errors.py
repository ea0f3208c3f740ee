"""Errors wrapped in exception groups (an engine's `asyncio.TaskGroup`) still reach the user as such."""

from __future__ import annotations

import argparse
import io
from typing import Any

import pytest

from evolve_action.cli import _main as cli
from evolve_action.errors import EvolveError, SpecError, UsageError, first_evolve_error


def test_first_evolve_error_searches_nested_groups() -> None:
    inner = SpecError("cannot write results: Is a directory", hint="re-run with --new")
    group = BaseExceptionGroup("outer", [ValueError("x"), ExceptionGroup("in", [inner])])
    assert first_evolve_error(group) is inner
    assert first_evolve_error(ExceptionGroup("none", [ValueError("x")])) is None


def _main_raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> tuple[int, str]:
    def handler(_inv: Any) -> int:
        raise exc

    def build_parser() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="evolve")
        parser.add_argument("-v", "--verbose", action="store_true")
        parser.set_defaults(handler=handler)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)
    err = io.StringIO()
    code = cli.main([], {}, stdout=io.StringIO(), stderr=err)
    return code, err.getvalue()


def test_cli_reports_a_grouped_evolve_error_with_its_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    error = SpecError("cannot write results: Is a directory", hint="fix it and re-run with --new")
    code, err = _main_raising(monkeypatch, ExceptionGroup("unhandled", [error]))
    assert code == 2
    assert "error: cannot write results: Is a directory" in err
    assert "hint: fix it and re-run with --new" in err
    assert "internal error" not in err


def test_cli_still_reports_a_group_without_evolve_error_as_a_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, err = _main_raising(monkeypatch, ExceptionGroup("unhandled", [ValueError("boom")]))
    assert code == 3 and "internal error: ExceptionGroup" in err


def test_cli_plain_evolve_error_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    code, err = _main_raising(monkeypatch, UsageError("bad flag"))
    assert code == 2 and err == "error: bad flag\n"
    assert issubclass(UsageError, EvolveError)
