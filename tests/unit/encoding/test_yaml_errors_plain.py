"""YAML syntax errors name the right line and say in plain words what to fix (issue 24)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.encoding import decode_path
from evolve_action.errors import SpecError


@pytest.mark.parametrize(
    ("text", "line", "hint"),
    [
        (
            'triggers:\n  - query: "a"\n    should_trigger: true\n  - query: "b"\n'
            "      should_trigger: false\n",
            5,
            "at column 7: this line is indented deeper than the line above",
        ),
        ("a: 1\n b: 2\n", 2, "at column 3: a `key: value` appears where a plain value"),
        ('triggers:\n  - query: "a\n', 3, "at column 1: the file ends inside a quoted string"),
    ],
)
def test_a_syntax_error_names_its_line_and_says_what_to_do(
    tmp_path: Path, text: str, line: int, hint: str
) -> None:
    path = tmp_path / "triggers.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        decode_path(path)
    assert info.value.line == line
    assert (info.value.hint or "").startswith(hint), info.value.hint
    assert info.value.message.startswith(f"yaml: line {line}: ")
