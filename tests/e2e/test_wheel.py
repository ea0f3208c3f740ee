"""Packaging: build the wheel, install it into a fresh venv, run `run checks` on `examples/` there.

This proves the installed package (not the source tree) works: the console script, the schemas
shipped as package data (found with `importlib.resources`), and the example marketplace.

To stay quick and need no network beyond the wheel build, the fresh venv gets its third-party
dependencies from the project's `.venv` through a plain path entry in a `.pth` file (a plain path
entry does not process that directory's own `.pth` files, so the editable install of the source
tree is not activated), and the wheel itself is installed with `--no-deps`. The build uses
`--no-isolation` when hatchling is importable, else an isolated build (hatchling from the package
index, through pip's cache).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from tests.conftest import EXAMPLES, REPO

from evolve_action.harness import safe_env

# Captured at import (before the autouse fixture points HOME at a temp dir) so pip's cache is reused.
_PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")


def _run(
    args: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def _has_hatchling() -> bool:
    try:
        import hatchling  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the freshly built wheel installed; returns its `bin/` directory."""
    work = tmp_path_factory.mktemp("wheel")
    env = safe_env(
        os.environ, extra={"PIP_CACHE_DIR": _PIP_CACHE, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    )
    dist = work / "dist"
    build = [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist)]
    if _has_hatchling():
        build.append("--no-isolation")
    done = _run([*build, str(REPO)], env=env, cwd=work, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = dist.glob("evolve_action-*.whl")

    venv = work / "venv"
    done = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            env=env,
            text=True,
        ).strip()
    )
    deps = Path(sysconfig.get_paths()["purelib"])  # the project's .venv site-packages
    (site / "_evolve_action_test_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    pip = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "--no-deps",
        "--no-index",
    ]
    done = _run([*pip, "--force-reinstall", str(wheel)], env=env, cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    return venv / "bin"


def test_installed_package_is_the_wheel(installed: Path, tmp_path: Path) -> None:
    code = (
        "import evolve_action, importlib.resources as r, json;"
        "print(json.dumps([evolve_action.__file__,"
        " sorted(p.name for p in (r.files('evolve_action') / 'schemas').iterdir())]))"
    )
    out = subprocess.check_output([str(installed / "python"), "-c", code], cwd=tmp_path, text=True)
    module, schemas = json.loads(out)
    assert Path(module).is_relative_to(installed.parent), module
    assert not Path(module).is_relative_to(REPO / "src")
    assert "evals.schema.json" in schemas and "triggers.schema.json" in schemas


def test_the_wheel_ships_the_demo_examples(installed: Path, tmp_path: Path) -> None:
    """`pip install evolve-action && evolve-action demo` needs no checkout: the demo's default
    source is the example marketplace inside the installed package, byte for byte the repository's."""
    code = "from evolve_action.flows import bundled_examples; print(bundled_examples())"
    out = subprocess.check_output([str(installed / "python"), "-c", code], cwd=tmp_path, text=True)
    bundled = Path(out.strip())
    assert bundled.is_relative_to(installed.parent), bundled
    ours = {
        p.relative_to(EXAMPLES.resolve()).as_posix(): p.read_bytes()
        for p in EXAMPLES.resolve().rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    shipped = {
        p.relative_to(bundled).as_posix(): p.read_bytes()
        for p in bundled.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped == ours
    assert "plugins/project-tools/skills/csv-report/SKILL.md" in shipped
    done = _run(
        [str(installed / "evolve-action"), "run", "checks", "--root", str(bundled), "--strict"],
        env=safe_env(os.environ),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_run_checks_on_examples_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    env = safe_env(os.environ)
    done = _run(
        [str(installed / "evolve-action"), "run", "checks", "--root", str(EXAMPLES), "--strict"],
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("checks: all checks passed (marketplace layout, 2 plugins)\n")


def test_report_from_the_wheel_matches_the_source_tree(installed: Path, tmp_path: Path) -> None:
    """Templates and schemas load from the installed wheel and render the same bytes."""
    import io

    from tests.helpers.report_fixtures import make_marketplace

    from evolve_action.cli import main

    by_wheel = make_marketplace(tmp_path / "wheel")
    by_source = make_marketplace(tmp_path / "source")
    done = _run(
        [str(installed / "evolve-action"), "report", "--root", str(by_wheel)],
        env=safe_env(os.environ),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out, err = io.StringIO(), io.StringIO()
    code = main(["report", "--root", str(by_source)], stdout=out, stderr=err, cwd=tmp_path)
    assert code == 0, err.getvalue()
    rendered = sorted(p.relative_to(by_wheel).as_posix() for p in by_wheel.rglob("EVALUATION.*"))
    assert "EVALUATION.md" in rendered and "plugins/alpha/EVALUATION.md" in rendered
    for rel in rendered:
        assert (by_wheel / rel).read_bytes() == (by_source / rel).read_bytes(), rel
