"""Issue 21: invalid definitions never run. A unit whose definition fails validation (unknown
assertion type, missing prompt, a schema error) is skipped with an error naming file:line and the
fix; the rest of the repository still plans and runs."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.helpers.repo_shapes import bare_skills, put, trigger_array

from evolve_action import plan as P
from evolve_action.cli import main
from evolve_action.repo import discover


def broken(root: Path) -> Path:
    bare_skills(root)  # alpha-skill: evolve's triggers, valid
    put(
        root,
        "evals/beta-skill/evals.json",
        '{\n  "evals": [\n    {"id": 1, "prompt": "p", "assertions": [\n'
        '      {"type": "notregex", "pattern": "x"}]}\n  ]\n}\n',
    )
    put(root, "evals/beta-skill/triggers.json", json.dumps({"triggers": trigger_array("b")}))
    return root


def test_an_invalid_evals_file_is_refused_and_the_rest_planned(tmp_path: Path) -> None:
    root = broken(tmp_path / "shape")
    built = P.build_inputs(discover(root, root).eval_sets(), root=root)
    by_skill = {s.skill: s for s in built.sets}
    assert by_skill["beta-skill"].evals is None  # refused
    assert by_skill["beta-skill"].triggers is not None  # its valid triggers still run
    assert by_skill["alpha-skill"].triggers is not None
    (message,) = built.invalid
    assert message.startswith("error: evals/beta-skill/evals.json:4: ")
    assert "notregex" in message and "shape/beta-skill's evals did not run" in message


def test_run_evals_plans_nothing_for_it_and_says_why(tmp_path: Path) -> None:
    root = broken(tmp_path / "shape")
    put(
        root,
        "evals/alpha-skill/evals.json",
        {"evals": [{"id": 1, "prompt": "go", "expectations": ["ok"]}]},
    )
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", "evals", "--dry-run", "--json", "--root", str(root), "--model", "claude-sonnet-5"],
        environ={},
        stdout=out,
        stderr=err,
        cwd=root,
    )
    assert code == 0, err.getvalue()
    planned = {json.loads(line)["skill"] for line in out.getvalue().splitlines()}
    assert planned == {"alpha-skill"}
    assert "error: evals/beta-skill/evals.json:4: " in err.getvalue()


def test_a_missing_prompt_refuses_the_unit(tmp_path: Path) -> None:
    root = bare_skills(tmp_path / "shape")
    put(root, "evals/beta-skill/evals.json", {"evals": [{"id": 1, "expectations": ["e"]}]})
    built = P.build_inputs(discover(root, root).eval_sets(), root=root, tiers=(P.Tier.EVALS,))
    assert [s.skill for s in built.sets] == ["alpha-skill"]
    assert "missing prompt" in built.invalid[0]
