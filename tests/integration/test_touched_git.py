"""The git fallback for changed files: real repositories, a local bare remote, shallow clones;
and every repository shape of issue 21 through `pr --local` and the action's PR flow (the fake
GitHub, real git, no credentials: Tier 0 and the touched-skill rule, no agent)."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.helpers.fake_github import FakeGitHub
from tests.helpers.repo_shapes import SHAPE_EDITS, project_skills, shape_links

from evolve_action.cli import main
from evolve_action.errors import EnvironmentProblem
from evolve_action.events import RecordingReporter
from evolve_action.flows import PrOptions, run_pr
from evolve_action.github import (
    ChangedPath,
    ChangeStatus,
    Touched,
    git_changed_paths,
    touched_skills,
)
from evolve_action.repo import discover

pytestmark = pytest.mark.integration

GIT_ENV = {
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


class Remote:
    """A bare remote holding `main` and a PR branch that diverged 30 commits ago."""

    def __init__(self, tmp: Path) -> None:
        self.bare = tmp / "remote.git"
        work = tmp / "author"
        git(tmp, "init", "-q", "--bare", "-b", "main", str(self.bare))
        # GitHub serves reachable commits by SHA; a plain bare repository needs to be told to.
        git(self.bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
        git(tmp, "init", "-q", "-b", "main", str(work))
        for plugin, skills in (("alpha", ("one", "two")), ("beta", ("three",))):
            write(work, f"plugins/{plugin}/.claude-plugin/plugin.json", f'{{"name": "{plugin}"}}\n')
            for skill in skills:
                write(
                    work, f"plugins/{plugin}/skills/{skill}/SKILL.md", f"---\nname: {skill}\n---\n"
                )
                write(work, f"plugins/{plugin}/evals/{skill}/triggers.json", "[]\n")
        commit(work, "initial")
        for i in range(20):
            write(work, "CHANGELOG.md", f"main {i}\n")
            commit(work, f"main {i}")
        self.fork_point = git(work, "rev-parse", "HEAD")
        git(work, "checkout", "-q", "-b", "feature")
        git(work, "mv", "plugins/alpha/skills/one", "plugins/alpha/skills/uno")
        git(work, "mv", "plugins/alpha/evals/one", "plugins/alpha/evals/uno")
        git(work, "rm", "-q", "-r", "plugins/beta/skills/three", "plugins/beta/evals/three")
        commit(work, "rename one, remove three")
        for i in range(30):
            write(work, "plugins/alpha/evals/two/fixtures/data.txt", f"fixture {i}\n")
            commit(work, f"feature {i}")
        self.head = git(work, "rev-parse", "HEAD")
        git(work, "checkout", "-q", "main")
        for i in range(25):
            write(work, "docs/notes.md", f"later main {i}\n")
            self.base = commit(work, f"later main {i}")
        git(work, "remote", "add", "origin", str(self.bare))
        git(work, "push", "-q", "origin", "main", "feature")
        # GitHub's test-merge commit of the PR, at refs/pull/1/merge.
        git(work, "checkout", "-q", "--detach", self.base)
        git(work, "merge", "-q", "--no-ff", "-m", "Merge feature into main", self.head)
        self.merge = git(work, "rev-parse", "HEAD")
        git(work, "push", "-q", "origin", "HEAD:refs/pull/1/merge")
        self.url = self.bare.resolve().as_uri()

    def clone(self, tmp: Path, name: str, *args: str) -> Path:
        target = tmp / name
        git(tmp, "clone", "-q", *args, self.url, str(target))
        return target


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Remote:
    env = {
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return Remote(tmp_path_factory.mktemp("git"))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


EXPECTED = [
    ChangedPath(
        path="plugins/alpha/evals/uno/triggers.json",
        status=ChangeStatus.RENAMED,
        previous_path="plugins/alpha/evals/one/triggers.json",
    ),
    ChangedPath(
        path="plugins/alpha/skills/uno/SKILL.md",
        status=ChangeStatus.RENAMED,
        previous_path="plugins/alpha/skills/one/SKILL.md",
    ),
    ChangedPath(path="plugins/alpha/evals/two/fixtures/data.txt", status=ChangeStatus.ADDED),
    ChangedPath(path="plugins/beta/evals/three/triggers.json", status=ChangeStatus.REMOVED),
    ChangedPath(path="plugins/beta/skills/three/SKILL.md", status=ChangeStatus.REMOVED),
]


def check(changes: list[ChangedPath], checkout: Path) -> None:
    assert sorted(changes, key=lambda c: c.path) == sorted(EXPECTED, key=lambda c: c.path)
    # Base-side changes (docs/notes.md on main) never show up: the diff starts at the merge base.
    assert all(not c.path.startswith("docs/") for c in changes)
    touched = touched_skills(discover(checkout, checkout), changes)
    assert touched.keys == ("alpha/two", "alpha/uno")
    assert touched.skills[1].renamed_from == "alpha/one"
    assert [r.key for r in touched.removed] == ["beta/three"]


def test_full_clone(remote: Remote, tmp_path: Path) -> None:
    repo = remote.clone(tmp_path, "full", "--branch", "feature")
    changes = git_changed_paths(repo, base=remote.base, head=remote.head, environ=os.environ)
    check(changes, repo)
    assert git(repo, "rev-parse", "--is-shallow-repository") == "false"


def test_depth_one_head_checkout(remote: Remote, tmp_path: Path) -> None:
    repo = remote.clone(tmp_path, "shallow", "--depth=1", "--branch", "feature")
    assert git(repo, "rev-parse", "--is-shallow-repository") == "true"
    changes = git_changed_paths(repo, base=remote.base, head=remote.head, environ=os.environ)
    check(changes, repo)
    assert git(repo, "merge-base", remote.base, remote.head) == remote.fork_point


def test_depth_one_merge_commit_checkout(remote: Remote, tmp_path: Path) -> None:
    # GitHub's default pull_request checkout: the detached test-merge commit, depth 1; neither the
    # PR head nor the base is in the clone.
    repo = tmp_path / "merge"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "remote", "add", "origin", remote.url)
    git(repo, "fetch", "-q", "--depth=1", "origin", "+refs/pull/1/merge:refs/remotes/pull/1/merge")
    git(repo, "checkout", "-q", "--detach", "refs/remotes/pull/1/merge")
    assert git(repo, "rev-parse", "HEAD") == remote.merge
    changes = git_changed_paths(repo, base=remote.base, head=remote.head, environ=os.environ)
    check(changes, repo)


def test_missing_commit_that_cannot_be_fetched(remote: Remote, tmp_path: Path) -> None:
    repo = remote.clone(tmp_path, "c", "--depth=1", "--branch", "feature")
    with pytest.raises(EnvironmentProblem, match="could not be fetched") as caught:
        git_changed_paths(repo, base="f" * 40, head=remote.head, environ=os.environ)
    assert "f" * 40 in caught.value.render()


def test_unrelated_histories(remote: Remote, tmp_path: Path) -> None:
    repo = remote.clone(tmp_path, "u", "--branch", "feature")
    git(repo, "checkout", "-q", "--orphan", "island")
    write(repo, "x.txt", "x\n")
    island = commit(repo, "island")
    with pytest.raises(EnvironmentProblem, match="no common history"):
        git_changed_paths(repo, base=remote.base, head=island, environ=os.environ)


def test_odd_file_names(tmp_path: Path) -> None:
    repo = tmp_path / "odd"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    write(repo, "a.txt", "a\n")
    base = commit(repo, "base")
    write(repo, "dir with space/tab\tand\nnewline ü.md", "x\n")
    (repo / "a.txt").unlink()
    head = commit(repo, "odd")
    changes = git_changed_paths(repo, base=base, head=head, environ=os.environ)
    assert sorted((c.path, c.status) for c in changes) == [
        ("a.txt", ChangeStatus.REMOVED),
        ("dir with space/tab\tand\nnewline ü.md", ChangeStatus.ADDED),
    ]


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem, match="git rev-parse"):
        git_changed_paths(tmp_path, base="a" * 40, head="b" * 40, environ=os.environ)


def test_depth_one_clone_of_a_long_history_is_deepened_only_as_needed(tmp_path: Path) -> None:
    # 400 commits on main before the fork point (written with fast-import: quick), 3 on the branch,
    # 5 more on main. The clone must end up with the merge base, not the whole history.
    bare = tmp_path / "long.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
    stream: list[str] = []
    mark = 0

    def add_commit(branch: str, parent: int | None, path: str, text: str) -> int:
        nonlocal mark
        mark += 1
        data = text.encode("utf-8")
        stream.append(f"commit refs/heads/{branch}\nmark :{mark}\n")
        stream.append(f"committer T <t@example.invalid> {1_700_000_000 + mark} +0000\n")
        stream.append("data 2\nc\n")
        if parent is not None:
            stream.append(f"from :{parent}\n")
        stream.append(f"M 100644 inline {path}\ndata {len(data)}\n{text}\n")
        return mark

    tip = add_commit("main", None, ".claude-plugin/plugin.json", '{"name": "solo"}\n')
    tip = add_commit("main", tip, "skills/a/SKILL.md", "---\nname: a\n---\n")
    for i in range(400):
        tip = add_commit("main", tip, "CHANGELOG.md", f"{i}\n")
    fork = tip
    head = fork
    for i in range(3):
        head = add_commit("feature", head, "skills/a/SKILL.md", f"---\nname: a\n---\n{i}\n")
    base = fork
    for i in range(5):
        base = add_commit("main", base, "docs/x.md", f"{i}\n")
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=bare,
        input="".join(stream).encode("utf-8"),
        check=True,
    )
    base_sha = git(bare, "rev-parse", "main")
    head_sha = git(bare, "rev-parse", "feature")
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", "--branch", "feature", bare.as_uri(), str(repo))
    changes = git_changed_paths(repo, base=base_sha, head=head_sha, environ=os.environ)
    assert changes == [ChangedPath(path="skills/a/SKILL.md", status=ChangeStatus.MODIFIED)]
    assert git(repo, "rev-parse", "--is-shallow-repository") == "true"
    assert int(git(repo, "rev-list", "--count", "--all")) < 200


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_workspace_owned_by_the_runner_uid(remote: Remote, tmp_path: Path) -> None:
    # A Docker action: root in the container, the checkout owned by the runner's uid (1001).
    # Plain git refuses it ("dubious ownership"); git_changed_paths passes safe.directory itself.
    workspace = remote.clone(tmp_path, "workspace", "--depth=1", "--branch", "feature")
    for path in [workspace, *workspace.rglob("*")]:
        os.lchown(path, 1001, 1001)
    plain = subprocess.run(
        ["git", "status"], cwd=workspace, capture_output=True, text=True, check=False
    )
    assert plain.returncode != 0 and "dubious ownership" in plain.stderr
    changes = git_changed_paths(workspace, base=remote.base, head=remote.head, environ=os.environ)
    check(changes, workspace)


# --- issue 21: every shape, through `pr --local` and the action's PR flow ---------------------


def shape_files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def local_pr(root: Path, change: dict[str, str | None]) -> Touched:
    """`pr --local` after one commit on a feature branch applying `change`; no credentials."""
    env = {**GIT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root.parent)}
    run = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=run, capture_output=True)
    subprocess.run(["git", "checkout", "-qb", "feature"], cwd=root, check=True, env=run)
    for rel, text in change.items():
        if text is None:
            (root / rel).unlink()
        else:
            write(root, rel, text)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=run)
    subprocess.run(["git", "commit", "-qm", "edit"], cwd=root, check=True, env=run)
    outcome = run_pr(
        PrOptions(
            environ=env,
            cwd=root,
            local=True,
            base="main",
            out_dir=root.parent / "out",
            fail_on="never",  # some shapes fail Tier 0 on purpose; the subject is what is touched
        ),
        reporter=RecordingReporter(),
        commands=io.StringIO(),
    )
    assert outcome.exit_code == 0, outcome.lines
    assert outcome.touched is not None, outcome.lines
    return outcome.touched


def action_pr(
    tmp_path: Path,
    files: dict[str, str],
    change: dict[str, str | None],
    links: dict[str, str] | None = None,
    fail_on: str = "error",
) -> dict[str, str]:
    """The action's `pr` job on a same-repository PR against the fake GitHub (Tier 0 only)."""
    with FakeGitHub.start(tmp_path) as gh:
        gh.add_token("ghs_t", kind="installation")
        repo = gh.add_repo("octo/shape")
        base = gh.commit(repo, dict(files), branch="main", symlinks=links)
        head = gh.commit(repo, dict(change), parents=[base], branch="feature")
        pull = gh.add_pull(repo, head_ref="feature", files=list(change))
        ws = tmp_path / "shape"  # GitHub checks out into a directory named after the repository
        git(tmp_path, "clone", "-q", "--branch", "feature", str(gh.git_dir(repo)), str(ws))
        event = tmp_path / "event.json"
        event.write_text(
            json.dumps(
                {
                    "number": pull.number,
                    "pull_request": {
                        "number": pull.number,
                        "head": {
                            "ref": "feature",
                            "sha": head,
                            "repo": {"full_name": "octo/shape"},
                        },
                        "base": {"ref": "main", "sha": base, "repo": {"full_name": "octo/shape"}},
                        "changed_files": len(change),
                    },
                    "repository": {"full_name": "octo/shape"},
                }
            )
        )
        output, summary = tmp_path / "output.txt", tmp_path / "summary.md"
        output.touch()
        summary.touch()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path / "home"),
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": "octo/shape",
            "GITHUB_API_URL": gh.base_url,
            "GITHUB_WORKSPACE": str(ws),
            "GITHUB_SHA": head,
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "INPUT_GITHUB_TOKEN": "ghs_t",
            "INPUT_ANTHROPIC_API_KEY": "",
            "INPUT_COMMENT": "always",
            "INPUT_FAIL_ON": fail_on,
        }
        out, err = io.StringIO(), io.StringIO()
        code = main(["pr"], env, stdout=out, stderr=err, cwd=ws)
        assert code == 0, out.getvalue() + err.getvalue()
        found = parse_outputs(output.read_text())
        found["summary"] = summary.read_text()
        return found


def parse_outputs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        name, _, delim = lines[i].partition("<<")
        j = lines.index(delim, i + 1)
        out[name] = "\n".join(lines[i + 1 : j])
        i = j + 1
    return out


def edited(root: Path, rel: str) -> str:
    return (root / rel).read_text(encoding="utf-8") + "\nOne more line.\n"


@pytest.mark.parametrize("name", list(SHAPE_EDITS))
def test_each_shape_through_pr_local_and_the_action(tmp_path: Path, name: str) -> None:
    case = SHAPE_EDITS[name]
    root = case.build(tmp_path / "shape")
    files = shape_files(root)
    change: dict[str, str | None] = {case.edit: edited(root, case.edit)}
    touched = local_pr(root, change)
    assert (touched.keys, touched.removed) == ((case.touched,), ())
    outputs = action_pr(tmp_path / "action", files, change, shape_links(root))
    assert json.loads(outputs["evaluated_skills"]) == [case.touched]


def test_a_skill_deleted_while_its_evals_stay_is_removed_and_the_rest_runs(tmp_path: Path) -> None:
    """Issue 20: `skills/commit/` deleted, `evals/commit/` kept, `review` edited: exit 0, review
    evaluated, commit reported as removed."""
    root = project_skills(tmp_path / "shape")
    files = shape_files(root)
    change: dict[str, str | None] = {
        ".claude/skills/commit/SKILL.md": None,
        ".claude/skills/review/SKILL.md": edited(root, ".claude/skills/review/SKILL.md"),
    }
    touched = local_pr(root, change)
    assert touched.keys == ("shape/review",)
    assert [r.key for r in touched.removed] == ["shape/commit"]
    outputs = action_pr(tmp_path / "action", files, change)
    assert json.loads(outputs["evaluated_skills"]) == ["shape/review"]
    assert "removed shape/commit" in outputs["summary"]


# --- issue 30: errors in skills a PR did not touch -------------------------------------------


def _broken_beside(root: Path) -> Path:
    project_skills(root)
    write(root, ".claude/skills/broken/SKILL.md", "no frontmatter here\n")
    return root


def _pr_local(root: Path, change: dict[str, str | None]) -> tuple[int, tuple[str, ...]]:
    env = {**GIT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root.parent)}
    run = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "checkout", "-qB", "feature", "main"], cwd=root, check=True, env=run)
    for rel, text in change.items():
        write(root, rel, text or "")
    subprocess.run(["git", "commit", "-qam", "edit"], cwd=root, check=True, env=run)
    outcome = run_pr(
        PrOptions(
            environ=env,
            cwd=root,
            local=True,
            base="main",
            out_dir=root.parent / "out",
            fail_on="regression",  # the default: Tier 0 failures fail the job
        ),
        reporter=RecordingReporter(),
        commands=io.StringIO(),
    )
    return outcome.exit_code, outcome.lines


def test_errors_in_untouched_skills_are_pre_existing_and_do_not_fail_the_pr(
    tmp_path: Path,
) -> None:
    root = _broken_beside(tmp_path / "shape")
    run = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=run, capture_output=True)
    # `run checks --strict` (and so a release gate running it) still fails on the broken skill
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", "checks", "--strict", "--no-signals"],
        dict(os.environ),
        stdout=out,
        stderr=err,
        cwd=root,
    )
    assert (
        code == 1
        and "FAIL: .claude/skills/broken/SKILL.md:1: no YAML frontmatter" in err.getvalue()
    )
    # a PR editing another skill: exit 0, the broken skill named once as pre-existing
    code, lines = _pr_local(
        root, {".claude/skills/commit/SKILL.md": edited(root, ".claude/skills/commit/SKILL.md")}
    )
    pre = [line for line in lines if "pre-existing" in line]
    assert code == 0, lines
    assert pre == [
        "notice: checks: 1 pre-existing failure in skills this change did not touch (shape/broken); "
        "not "
        "counted here — `run checks` lists them, `gate` and `run checks --strict` fail on them"
    ]
    assert not any(line.startswith("checks: 1 failure") for line in lines)
    # a PR touching the broken skill answers for it
    code, lines = _pr_local(root, {".claude/skills/broken/SKILL.md": "still no frontmatter\n"})
    assert code == 1, lines
    assert "checks: 1 failure(s) (see `run checks`)" in lines


def test_the_action_names_pre_existing_errors_once_and_passes(tmp_path: Path) -> None:
    root = _broken_beside(tmp_path / "shape")
    # The touched skill has no evals: with no credentials either, nothing else can fail the job
    # (a touched skill with stale evals would be "not evaluated", which fails it: issue 31).
    rel = ".claude/skills/review/SKILL.md"
    outputs = action_pr(
        tmp_path / "action", shape_files(root), {rel: edited(root, rel)}, fail_on="regression"
    )
    assert json.loads(outputs["evaluated_skills"]) == ["shape/review"]
    assert outputs["summary"].count("pre-existing failure") == 1, outputs["summary"]
