"""The touched-skill rule, as a pure function of the repository model and the changed paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.github import ChangedPath, ChangeStatus, touched_skills
from evolve_action.repo import discover


def write(root: Path, rel: str, text: str = "x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def multi(root: Path) -> Path:
    for plugin, skills in (("alpha", ("one", "two")), ("beta", ("three",))):
        write(root, f"plugins/{plugin}/.claude-plugin/plugin.json", f'{{"name": "{plugin}"}}\n')
        for skill in skills:
            write(root, f"plugins/{plugin}/skills/{skill}/SKILL.md", "---\nname: x\n---\n")
            write(root, f"plugins/{plugin}/evals/{skill}/triggers.json", "[]\n")
    # An eval set whose skill directory is gone: a removed skill, never run (issue 20).
    write(root, "plugins/beta/evals/orphan/evals.json", "[]\n")
    return root


def keys(root: Path, *changes: ChangedPath, prefix: str = "") -> tuple[str, ...]:
    return touched_skills(discover(root, root), changes, prefix=prefix).keys


def mod(path: str) -> ChangedPath:
    return ChangedPath(path=path, status=ChangeStatus.MODIFIED)


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["plugins/alpha/skills/one/SKILL.md"], ("alpha/one",)),
        (["plugins/alpha/skills/one/references/deep/x.md"], ("alpha/one",)),
        (["plugins/alpha/evals/two/fixtures/data.csv"], ("alpha/two",)),
        (["plugins/alpha/evals/two/triggers.json"], ("alpha/two",)),
        (["plugins/beta/evals/orphan/evals.json"], ()),
        (["plugins/alpha/.claude-plugin/plugin.json"], ("alpha/one", "alpha/two")),
        (["plugins/beta/.codex-plugin/plugin.json"], ("beta/three",)),
        ([".evolve.yaml"], ("alpha/one", "alpha/two", "beta/three")),
        ([".claude-plugin/marketplace.json"], ("alpha/one", "alpha/two", "beta/three")),
        (["README.md", "plugins/alpha/README.md", "docs/x.md", "sub/.evolve.yaml"], ()),
        (["plugins/alpha/skills/ghost/notes.md"], ()),
        (["plugins/alpha/skills/one"], ()),  # a file named like a directory: not inside it
        (
            ["plugins/beta/skills/three/SKILL.md", "plugins/alpha/skills/one/SKILL.md"],
            ("alpha/one", "beta/three"),
        ),
    ],
)
def test_rule(tmp_path: Path, paths: list[str], expected: tuple[str, ...]) -> None:
    assert keys(multi(tmp_path), *(mod(p) for p in paths)) == expected


def test_reasons_deduplicated_and_named(tmp_path: Path) -> None:
    repo = discover(multi(tmp_path), tmp_path)
    got = touched_skills(
        repo,
        [
            mod("plugins/alpha/skills/one/SKILL.md"),
            ChangedPath(path="plugins/alpha/evals/one/fixtures/new.txt", status=ChangeStatus.ADDED),
            mod("plugins/alpha/.claude-plugin/plugin.json"),
            mod("plugins/alpha/.claude-plugin/plugin.json"),
        ],
    )
    one = got.skills[0]
    assert one.key == "alpha/one"
    assert one.reasons == (
        "changed plugins/alpha/skills/one/SKILL.md",
        "added plugins/alpha/evals/one/fixtures/new.txt",
        "changed plugins/alpha/.claude-plugin/plugin.json (plugin manifest)",
    )


def test_rename_reports_the_new_name(tmp_path: Path) -> None:
    root = multi(tmp_path)
    # The head has alpha/uno (renamed from alpha/one).
    (root / "plugins/alpha/skills/one").rename(root / "plugins/alpha/skills/uno")
    (root / "plugins/alpha/evals/one").rename(root / "plugins/alpha/evals/uno")
    got = touched_skills(
        discover(root, root),
        [
            ChangedPath(
                path="plugins/alpha/skills/uno/SKILL.md",
                status=ChangeStatus.RENAMED,
                previous_path="plugins/alpha/skills/one/SKILL.md",
            ),
            ChangedPath(
                path="plugins/alpha/evals/uno/triggers.json",
                status=ChangeStatus.RENAMED,
                previous_path="plugins/alpha/evals/one/triggers.json",
            ),
        ],
    )
    assert got.keys == ("alpha/uno",)
    assert got.skills[0].renamed_from == "alpha/one"
    assert got.skills[0].reasons == ("renamed from alpha/one",)
    assert got.removed == ()


def test_deleted_skill_is_removed_not_run(tmp_path: Path) -> None:
    root = multi(tmp_path)
    for rel in ("plugins/beta/skills/three", "plugins/beta/evals/three"):
        for path in sorted((root / rel).rglob("*"), reverse=True):
            path.unlink()
        (root / rel).rmdir()
    got = touched_skills(
        discover(root, root),
        [
            ChangedPath(path="plugins/beta/skills/three/SKILL.md", status=ChangeStatus.REMOVED),
            ChangedPath(path="plugins/beta/evals/three/triggers.json", status=ChangeStatus.REMOVED),
            ChangedPath(
                path="plugins/alpha/evals/one/fixtures/old.txt", status=ChangeStatus.REMOVED
            ),
        ],
    )
    assert got.keys == ("alpha/one",)
    assert [r.key for r in got.removed] == ["beta/three"]
    assert got.removed[0].reasons == (
        "removed plugins/beta/evals/three/triggers.json and 1 more files",
    )


def test_moving_a_file_between_existing_skills_touches_both(tmp_path: Path) -> None:
    got = touched_skills(
        discover(multi(tmp_path), tmp_path),
        [
            ChangedPath(
                path="plugins/alpha/skills/two/ref.md",
                status=ChangeStatus.RENAMED,
                previous_path="plugins/alpha/skills/one/ref.md",
            )
        ],
    )
    assert got.keys == ("alpha/one", "alpha/two")
    assert got.removed == ()


def test_deleted_plugin(tmp_path: Path) -> None:
    root = multi(tmp_path)
    got = touched_skills(
        discover(root, root),
        [ChangedPath(path="plugins/gamma/skills/old/SKILL.md", status=ChangeStatus.REMOVED)],
    )
    assert got.keys == () and [r.key for r in got.removed] == ["gamma/old"]


def test_prefix_for_a_working_directory(tmp_path: Path) -> None:
    root = multi(tmp_path / "sub" / "dir")
    assert keys(root, mod("sub/dir/plugins/alpha/skills/one/SKILL.md"), prefix="sub/dir") == (
        "alpha/one",
    )
    assert keys(root, mod("plugins/alpha/skills/one/SKILL.md"), prefix="sub/dir") == ()
    assert keys(root, mod("sub/dir/.evolve.json"), prefix="sub/dir/")[0] == "alpha/one"
    assert keys(root, mod(".evolve.json"), prefix="sub/dir") == ()


def test_single_layout(tmp_path: Path) -> None:
    write(tmp_path, ".claude-plugin/plugin.json", '{"name": "solo"}\n')
    write(tmp_path, "skills/a/SKILL.md", "---\nname: a\n---\n")
    write(tmp_path, "skills/b/SKILL.md", "---\nname: b\n---\n")
    assert keys(tmp_path, mod("skills/b/x.md")) == ("solo/b",)
    assert keys(tmp_path, mod(".claude-plugin/plugin.json")) == ("solo/a", "solo/b")
    assert keys(tmp_path, mod("evals/a/evals.yaml")) == ("solo/a",)


@pytest.mark.parametrize(
    "path",
    [
        "../plugins/alpha/skills/one/SKILL.md",
        "plugins/alpha/skills/../skills/one/SKILL.md",
        "",
        "/",
    ],
)
def test_hostile_paths_touch_nothing(tmp_path: Path, path: str) -> None:
    assert keys(multi(tmp_path), mod(path)) == ()


def test_api_statuses() -> None:
    assert ChangedPath.from_api("a", "renamed", "b") == ChangedPath(
        path="a", status=ChangeStatus.RENAMED, previous_path="b"
    )
    assert ChangedPath.from_api("a", "weird").status is ChangeStatus.MODIFIED
    assert ChangedPath.from_api("a", "removed", "").previous_path is None


def test_renamed_config_or_manifest_counts_on_either_side(tmp_path: Path) -> None:
    root = multi(tmp_path)
    renamed_config = ChangedPath(
        path="config/evolve.yaml", status=ChangeStatus.RENAMED, previous_path=".evolve.yaml"
    )
    assert len(keys(root, renamed_config)) == 3
    moved_manifest = ChangedPath(
        path="plugins/beta/manifest-old.json",
        status=ChangeStatus.RENAMED,
        previous_path="plugins/beta/.claude-plugin/plugin.json",
    )
    assert keys(root, moved_manifest) == ("beta/three",)


def test_skill_moved_out_of_the_plugins_is_removed(tmp_path: Path) -> None:
    root = multi(tmp_path)
    got = touched_skills(
        discover(root, root),
        [
            ChangedPath(
                path="archive/ghost/SKILL.md",
                status=ChangeStatus.RENAMED,
                previous_path="plugins/alpha/skills/ghost/SKILL.md",
            )
        ],
    )
    assert got.keys == () and [r.key for r in got.removed] == ["alpha/ghost"]
    assert not got.empty


def test_a_skill_deleted_while_its_evals_stay_is_removed(tmp_path: Path) -> None:
    """Issue 20: `skills/three/` deleted, `evals/three/` kept: removed, the others still run."""
    root = multi(tmp_path)
    (root / "plugins/beta/skills/three/SKILL.md").unlink()
    got = touched_skills(
        discover(root, root),
        [
            ChangedPath(path="plugins/beta/skills/three/SKILL.md", status=ChangeStatus.REMOVED),
            mod("plugins/beta/evals/three/triggers.json"),
            mod("plugins/alpha/skills/one/SKILL.md"),
        ],
    )
    assert got.keys == ("alpha/one",)
    assert [(r.key, r.reasons) for r in got.removed] == [
        ("beta/three", ("removed plugins/beta/evals/three/triggers.json and 1 more files",))
    ]
    # An untouched orphan stays out of it; a touched one is removed.
    orphan = touched_skills(discover(root, root), [mod("plugins/beta/evals/orphan/evals.json")])
    assert orphan.keys == () and [r.key for r in orphan.removed] == ["beta/orphan"]
