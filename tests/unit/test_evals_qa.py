"""QA regressions for eval staging: a missing or escaping fixture names the eval and the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve_action import eval_assembly, evals, specs
from evolve_action.errors import SpecError


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (["files/gone.txt"], 'eval "first": fixture gone.txt: No such file or directory'),
        (["files/sub"], 'eval "first": fixture sub: Is a directory'),
    ],
)
def test_missing_fixture_names_eval_and_file(
    tmp_path: Path, files: list[str], message: str
) -> None:
    d = tmp_path / "p" / "evals" / "sk"
    (d / "files" / "sub").mkdir(parents=True)
    doc = {"evals": [{"id": "first", "prompt": "do it", "files": files, "assertions": ["x"]}]}
    (d / "evals.json").write_text(json.dumps(doc))
    case = specs.load_evals(d / "evals.json").evals[0]
    with pytest.raises(SpecError) as info:
        evals.stage_workspace(case, skill_dir=None, environ={})
    assert message in info.value.message
    assert info.value.hint is not None and "--new" in info.value.hint


@pytest.mark.parametrize("dest", ["../x", "/abs", ".", ".."])
def test_escaping_fixture_dest_names_the_eval(dest: str) -> None:
    with pytest.raises(SpecError, match=r'^eval "e1": fixture path .* escapes the workspace'):
        eval_assembly._check_dest(dest, 'eval "e1"')


def test_unwritable_results_stop_the_sweep_before_any_session(tmp_path: Path) -> None:
    from tests.unit.test_evals import EVALS, FakeHarness, FakeJudge, sweep, write

    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "demo"}')
    write(root, "skills/sk/SKILL.md", "---\nname: sk\ndescription: Use when testing.\n---\nb\n")
    write(root, "evals/sk/evals.json", json.dumps(EVALS))
    write(root, "evals/sk/files/in/data.txt", "data\n")
    (root / "evals/sk/results.json").mkdir()
    harness = FakeHarness()
    with pytest.raises(
        SpecError, match=r"cannot write results: the path exists|the results path is a directory"
    ):
        sweep(root, harness, FakeJudge(), baseline=False)
    assert harness.specs == []
