"""Issue 9 item 3: decoding is bounded for every file the tool reads.

YAML aliases are counted before anything expands them ("billion laughs" is refused), nesting
depth is capped (a clear error, never `RecursionError`), the size cap applies before any byte is
read (results files included), and paths with NUL or control characters in specs are problems
(findings / errors), never internal errors.
"""

from __future__ import annotations

import io
import json
import pathlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import EXAMPLES

from evolve_action import encoding, specs
from evolve_action import results as R
from evolve_action.cli import main
from evolve_action.config import load_config
from evolve_action.encoding._yaml import MAX_ALIAS_VALUES
from evolve_action.errors import EvolveError, SpecError
from evolve_action.modelserver import Policy


def laughs(key: str = "triggers", levels: int = 9) -> str:
    """The classic alias bomb: 9**(levels+1) values once expanded, a few hundred bytes of text."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\n{key}: *a{levels}\n"


def test_alias_bomb_in_triggers_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "triggers.yaml"
    path.write_text(laughs())
    with pytest.raises(SpecError, match="excessive aliasing") as info:
        specs.load_triggers(path)
    assert info.value.path == path and info.value.line is not None


def test_alias_bomb_in_evals_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evals.yaml"
    path.write_text(laughs("evals"))
    with pytest.raises(SpecError, match="excessive aliasing"):
        specs.load_evals(path)


def test_alias_bomb_in_config_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".evolve.yaml").write_text(laughs("models"))
    with pytest.raises(EvolveError, match="excessive aliasing"):
        load_config(tmp_path, {})


def test_alias_bomb_in_policy_is_refused() -> None:
    with pytest.raises(SpecError, match="excessive aliasing"):
        Policy.from_yaml(laughs("rules"))


def test_alias_bomb_in_results_yaml_is_refused_and_left_untouched(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    text = "schema: 5\n" + laughs("models")
    (d / "results.yaml").write_text(text)
    with pytest.raises(SpecError, match="excessive aliasing"):
        R.load_results(d)
    assert (d / "results.yaml").read_text() == text


def test_alias_bomb_through_run_checks_is_a_clean_error(tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    target = root / "plugins/release-tools/evals/commit-message/triggers.yaml"
    target.write_text(laughs())
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", "checks", "--strict", "--root", str(root)], environ={}, stdout=out, stderr=err
    )
    text = out.getvalue() + err.getvalue()
    assert code == 1, text  # a finding (FAIL) naming the file
    assert "commit-message/triggers.yaml" in text
    assert "excessive aliasing" in text and "Traceback" not in text and "internal error" not in text


def test_aliases_within_the_budget_still_work(tmp_path: Path) -> None:
    path = tmp_path / "evals.yaml"
    path.write_text(
        "shared: &checks\n"
        "  - {type: file_exists, path: out.txt}\n"
        "evals:\n"
        "  - {id: one, prompt: p, assertions: *checks}\n"
        "  - {id: two, prompt: p, assertions: *checks}\n"
    )
    spec = specs.load_evals(path)
    assert [a.path for c in spec.evals for a in c.assertions] == ["out.txt", "out.txt"]


def test_alias_budget_counts_expanded_values() -> None:
    # 1 anchor of 1,001 values used 100 times: 100,100 expanded values, over the budget.
    items = ",".join(["1"] * 1000)
    text = f"a: &a [{items}]\nb: [" + ",".join(["*a"] * 100) + "]\n"
    assert MAX_ALIAS_VALUES < 100 * 1001
    with pytest.raises(SpecError, match="excessive aliasing"):
        encoding.decode_bytes(text.encode(), Path("x.yaml"))
    ok = f"a: &a [{items}]\nb: [" + ",".join(["*a"] * 50) + "]\n"
    assert len(encoding.decode_bytes(ok.encode(), Path("x.yaml"))["b"]) == 50


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(SpecError, match='anchor "x" value contains itself'):
        encoding.decode_bytes(b"a: &x [1, *x]\n", Path("x.yaml"))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("x.yaml", "[" * 990 + "]" * 990),
        ("x.yaml", "".join("  " * i + f"k{i}:\n" for i in range(600)) + "  " * 600 + "v\n"),
        ("x.json", "[" * 990 + "]" * 990),
        ("x.json", "[" * 50_000 + "]" * 50_000),
        ("x.jsonc", '{"a":' * 990 + "1" + "}" * 990),
        # depth reached through aliases: 3 x 60 levels
        ("x.yaml", "a: &a " + "[" * 60 + "]" * 60 + "\nb: &b " + "[" * 60 + "*a" + "]" * 60 + "\n"
         "c: " + "[" * 60 + "*b" + "]" * 60 + "\n"),
    ],
    ids=["yaml-flow", "yaml-block", "json", "json-50k", "jsonc", "yaml-aliases"],
)  # fmt: skip
def test_deep_nesting_is_a_clear_error(name: str, text: str) -> None:
    with pytest.raises(SpecError, match="nested too deeply"):
        encoding.decode_bytes(text.encode(), Path(name))


def test_deep_triggers_yaml_is_a_spec_error_not_recursion(tmp_path: Path) -> None:
    path = tmp_path / "triggers.yaml"
    path.write_text("triggers:\n  - query: " + "[" * 700 + "]" * 700 + "\n")
    with pytest.raises(SpecError, match="nested too deeply"):
        specs.load_triggers(path)


def test_nesting_up_to_the_cap_is_accepted() -> None:
    depth = encoding.MAX_DEPTH
    for name in ("x.json", "x.yaml"):
        value = encoding.decode_bytes(("[" * depth + "]" * depth).encode(), Path(name))
        assert isinstance(value, list)


class _ReadCounter:
    def __init__(self) -> None:
        self.bytes = 0


def test_huge_results_file_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    path = d / "results.json"
    with path.open("wb") as f:  # sparse: 2 GiB on paper, nothing on disk
        f.truncate(2 * 1024**3)
    counter = _ReadCounter()
    real_open = pathlib.Path.open

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        f = real_open(self, *args, **kwargs)
        real_read = f.read

        def read(*a: Any) -> Any:
            data = real_read(*a)
            counter.bytes += len(data)
            return data

        f.read = read
        return f

    monkeypatch.setattr(pathlib.Path, "open", counting_open)
    with pytest.raises(SpecError, match="too large"):
        R.load_results(d)
    assert counter.bytes == 0


def _evals_with(tmp_path: Path, case: dict[str, Any]) -> Path:
    path = tmp_path / "evals.json"
    path.write_text(json.dumps({"evals": [{"id": "one", "prompt": "p", **case}]}))
    return path


@pytest.mark.parametrize(
    ("case", "where"),
    [
        ({"files": ["in\u0000put.txt"]}, "files[0]"),
        ({"files": ["line\nbreak.txt"]}, "files[0]"),
        ({"assertions": [{"type": "file_exists", "path": "out\u0000.txt"}]}, "assertions[0]: path"),
        ({"assertions": [{"type": "command", "run": "true", "cwd": "a\u001bb"}]}, "assertions[0]: cwd"),
    ],
    ids=["nul-fixture", "newline-fixture", "nul-assertion-path", "esc-cwd"],
)  # fmt: skip
def test_control_characters_in_spec_paths_are_problems(
    tmp_path: Path, case: dict[str, Any], where: str
) -> None:
    path = _evals_with(tmp_path, case)
    with pytest.raises(SpecError, match="contains a control character") as info:
        specs.load_evals(path)
    assert where in info.value.message
    _, problems = specs.parse_evals_lenient(json.loads(path.read_text()), path)
    assert any("contains a control character" in p.message for p in problems)


def test_nul_fixture_path_is_a_checks_finding_not_an_internal_error(tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    target = root / "plugins/release-tools/evals/changelog/evals.json"
    doc = json.loads(target.read_text())
    doc["evals"][0]["files"] = ["bad\u0000name.txt"]
    target.write_text(json.dumps(doc))
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", "checks", "--strict", "--root", str(root)], environ={}, stdout=out, stderr=err
    )
    text = out.getvalue() + err.getvalue()
    assert "contains a control character" in text, text
    assert "internal error" not in text and "Traceback" not in text
    assert code == 1
