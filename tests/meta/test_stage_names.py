"""The PR job's stage files exchange no private names (issue 44's acceptance), checked with `ast`.

The job is composed in `flows/_action.py` from its stages, `flows/_pr_*.py`; they talk through
values and public names only. A `_`-prefixed name imported from another `flows` module (or read
off one imported whole, `_pr_job._Run`) is a private object crossing a stage boundary: it fails
here, naming the file, the line and the name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FLOWS = Path(__file__).resolve().parents[2] / "src" / "evolve_action" / "flows"
PACKAGE = "evolve_action.flows"


def stage_files() -> list[Path]:
    return sorted([*FLOWS.glob("_pr_*.py"), FLOWS / "_action.py"])


def _flows_module(node: ast.ImportFrom) -> str | None:
    """The `flows` module an import names (`evolve_action.flows._pr_job` or `._pr_job`), else None."""
    if node.level == 1:
        return f"{PACKAGE}.{node.module}" if node.module else PACKAGE
    if node.level == 0 and node.module and node.module.startswith(PACKAGE + "."):
        return node.module
    return None


def private_imports(path: Path) -> list[str]:
    """`file:line: name from module` for each private name `path` takes from another flows module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    me = f"{PACKAGE}.{path.stem}"
    found: list[str] = []
    aliases: dict[str, str] = {}  # a flows module imported whole: local name -> module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (module := _flows_module(node)) not in (None, me):
            for alias in node.names:
                if module == PACKAGE and alias.name.startswith("_"):  # `from . import _pr_job`
                    aliases[alias.asname or alias.name] = f"{PACKAGE}.{alias.name}"
                elif alias.name.startswith("_"):
                    found.append(f"{path.name}:{node.lineno}: {alias.name} from {module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + ".") and alias.name != me and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
        ):
            found.append(f"{path.name}:{node.lineno}: {node.attr} from {aliases[node.value.id]}")
    return found


def test_the_stage_files_are_found() -> None:
    names = {p.name for p in stage_files()}
    assert {"_action.py", "_pr_job.py", "_pr_touched.py", "_pr_publish.py"} <= names


@pytest.mark.parametrize("path", stage_files(), ids=lambda p: p.name)
def test_no_private_name_crosses_a_stage_file(path: Path) -> None:
    crossing = private_imports(path)
    assert not crossing, (
        "a stage file takes a private (`_`-prefixed) name from another flows module; pass a value "
        "or make the name public where it is defined:\n" + "\n".join(crossing)
    )


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    source = tmp_path / "_pr_x.py"
    source.write_text(
        "from evolve_action.flows._pr_job import JobContext, _Run\n"
        "from ._pr_compare import _hidden\n"
        "from . import _pr_publish as pub\n"
        "import evolve_action.flows._ledger as ledger\n"
        "from ._pr_x import _mine\n"
        "x = pub._said, ledger._codec, pub.Said\n",
        encoding="utf-8",
    )
    assert private_imports(source) == [
        "_pr_x.py:1: _Run from evolve_action.flows._pr_job",
        "_pr_x.py:2: _hidden from evolve_action.flows._pr_compare",
        "_pr_x.py:6: _said from evolve_action.flows._pr_publish",
        "_pr_x.py:6: _codec from evolve_action.flows._ledger",
    ]
