"""Step outputs, the step summary and masks, parsed back the way the runner parses them."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import pytest

from evolve_action.errors import PublishError
from evolve_action.github import (
    OUTPUT_NAMES,
    ActionOutputs,
    CommandFiles,
    append_summary,
    format_output,
    mask_secrets,
    write_outputs,
)


def parse_output_file(text: str) -> dict[str, str]:
    """The runner's reader: `name=value` lines and `name<<DELIM` … `DELIM` blocks."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            while lines[index] != delimiter:
                body.append(lines[index])
                index += 1
            index += 1
            values[name] = "\n".join(body)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def test_outputs_round_trip_multiline_and_hostile(tmp_path: Path) -> None:
    path = tmp_path / "output"
    hostile = "line1\nstatus<<EOF\nstatus=failed\nEOF\n\nghadelimiter_x\n"
    write_outputs(path, {"report": hostile, "empty": "", "plain": "a=b"})
    assert parse_output_file(path.read_text(encoding="utf-8")) == {
        "report": hostile,
        "empty": "",
        "plain": "a=b",
    }


def test_delimiter_never_collides() -> None:
    candidates = itertools.chain(["VALUE", "VALUE", "fresh"])
    record = format_output("x", "has VALUE inside", delimiter=lambda: next(candidates))
    assert record == "x<<fresh\nhas VALUE inside\nfresh\n"


def test_delimiter_exhaustion_is_an_error() -> None:
    with pytest.raises(PublishError, match="delimiter"):
        format_output("x", "same", delimiter=lambda: "same")


@pytest.mark.parametrize("name", ["", "1abc", "a b", "a\nb", "x<<y", "a=b", "é"])
def test_bad_output_names(name: str) -> None:
    with pytest.raises(PublishError, match="output name"):
        format_output(name, "v")


def test_appends_never_truncates(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier<<D\nx\nD\n", encoding="utf-8")
    write_outputs(path, {"later": "y"})
    assert parse_output_file(path.read_text(encoding="utf-8")) == {"earlier": "x", "later": "y"}


def test_action_outputs_cover_action_yml_names(tmp_path: Path) -> None:
    outputs = ActionOutputs(
        status="passed",
        evaluated_skills=("p/a", "p/b"),
        triggers_pass_rate=0.875,
        evals_pass_rate=1.0,
        delta="within noise",
        cost_usd=0.12345,
        sessions=4,
        comment_id=99,
        commit_sha="a" * 40,
        report_path="EVALUATION.md",
    )
    values = outputs.as_strings()
    assert tuple(values) == OUTPUT_NAMES
    assert json.loads(values["evaluated_skills"]) == ["p/a", "p/b"]
    assert values["triggers_pass_rate"] == "0.875" and values["evals_pass_rate"] == "1"
    assert values["cost_usd"] == "0.1235" and values["comment_id"] == "99"
    path = tmp_path / "out"
    assert write_outputs(path, outputs)
    assert parse_output_file(path.read_text(encoding="utf-8"))["delta"] == "within noise"
    empty = ActionOutputs(status="skipped").as_strings()
    assert empty["evaluated_skills"] == "[]" and empty["triggers_pass_rate"] == ""
    assert empty["comment_id"] == "" and empty["commit_sha"] == ""


def test_no_files_outside_actions(tmp_path: Path) -> None:
    files = CommandFiles.from_env({})
    assert files.output is None and files.summary is None
    assert write_outputs(files.output, {"a": "b"}) is False
    assert append_summary(files.summary, "x") is False
    files = CommandFiles.from_env(
        {"GITHUB_OUTPUT": str(tmp_path / "o"), "GITHUB_STEP_SUMMARY": str(tmp_path / "s")}
    )
    assert files.output == tmp_path / "o" and files.summary == tmp_path / "s"


def test_summary_appends_and_stays_under_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_summary(path, "# One")
    append_summary(path, "two\n")
    assert path.read_text(encoding="utf-8") == "# One\ntwo\n"
    big = "\n".join("row ✓ " + str(i) for i in range(400))
    append_summary(path, big, limit=1000)
    data = path.read_bytes()
    assert len(data) <= 1000
    text = data.decode("utf-8")  # never cut inside a character
    assert text.endswith("GitHub accepts at most 1 MiB per step.\n")
    assert text.startswith("# One\ntwo\nrow ✓ 0\n")
    # Full: later appends are dropped, the file stays valid.
    append_summary(path, "more " * 100, limit=1000)
    assert path.read_bytes() == data


def test_unwritable_files_are_publish_errors(tmp_path: Path) -> None:
    target = tmp_path / "dir"
    target.mkdir()
    with pytest.raises(PublishError, match="GITHUB_OUTPUT"):
        write_outputs(target, {"a": "b"})
    with pytest.raises(PublishError, match="GITHUB_STEP_SUMMARY"):
        append_summary(target / "missing" / "s.md", "x")


def test_mask_secrets_each_line() -> None:
    stream = io.StringIO()
    mask_secrets(stream, ["one", "", "  ", "two\nthree%"])
    assert stream.getvalue().splitlines() == [
        "::add-mask::one",
        "::add-mask::two",
        "::add-mask::three%25",
    ]


def test_outputs_and_summary_are_redacted(tmp_path: Path) -> None:
    from evolve_action import redact

    secret = "sk-ant-test-outputs-0123456789"
    redact.register(secret)  # forgotten after the test (suite fixture)
    out, summary = tmp_path / "out", tmp_path / "summary.md"
    write_outputs(out, {"report_path": f"x/{secret}", "status": "passed"})
    append_summary(summary, f"| evidence | exit 1: {secret} |\n")
    assert parse_output_file(out.read_text()) == {"report_path": "x/***", "status": "passed"}
    assert summary.read_text() == "| evidence | exit 1: *** |\n"
