"""The GitHub Action's `pr` job end to end: the fake GitHub server, real git, the real Claude Code CLI
against the scripted model server.

A same-repository PR edits one of three skills (none has stored results); the workspace is GitHub's
default checkout, a detached test-merge commit. The job must start agent sessions for that skill only,
commit exactly its results file and the reports on top of the PR head, create one sticky comment and
write outputs and the step summary. A second run on the bot's own commit must plan nothing: no agent
session, no commit, no comment write. The cheaper cases (nothing touched, a fork, a refused
`pull_request_target`, an unsupported event, a 403 on the comment, a moved head, the gate, `--local`)
run Tier 0 only or no agent at all.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from tests.helpers.agents import MODEL, live_agents, skill_md, triggers_doc
from tests.helpers.fake_github import FakeFile, FakeGitHub, Fault

from evolve_action.catalog import PR_DEFAULT_MODEL
from evolve_action.cli import main
from evolve_action.events import RecordingReporter
from evolve_action.flows import COMMENT_MARKER, PrOptions, run_pr
from evolve_action.flows._pr_carry import parse_state
from evolve_action.github import RetryPolicy
from evolve_action.modelserver import ModelServer
from evolve_action.report import Label

pytestmark = pytest.mark.integration

REPO = "octo/skills"
TOKEN = "ghs_installation_token"
SKILLS = ("alpha", "beta", "gamma")
POLICY = "default: {route: {threshold: 0.1}}\n"


def base_files() -> dict[str, str]:
    files = {
        ".claude-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}\n',
        ".codex-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}\n',
        ".evolve.json": json.dumps({"models": [MODEL]}) + "\n",
        "README.md": "# kit\n",
    }
    for name in SKILLS:
        files[f"skills/{name}/SKILL.md"] = skill_md(
            name, f"Handle {name} spreadsheets. Use when asked about {name} data."
        )
        files[f"evals/{name}/triggers.json"] = triggers_doc(
            [(f"Summarise the {name} spreadsheet please", True), ("What is the weather?", False)]
        )
    return files


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


@dataclass
class Pr:
    gh: FakeGitHub
    workspace: Path
    env: dict[str, str]
    head_sha: str
    output: Path
    summary: Path

    def outputs(self) -> dict[str, str]:
        """Parse GITHUB_OUTPUT's `name<<DELIM` records."""
        out: dict[str, str] = {}
        lines = self.output.read_text().splitlines()
        i = 0
        while i < len(lines):
            name, _, delim = lines[i].partition("<<")
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1 : j])
            i = j + 1
        return out


def make_pr(
    tmp_path: Path,
    gh: FakeGitHub,
    *,
    change: dict[str, str | None],
    fork: bool = False,
    event: str = "pull_request",
    inputs: dict[str, str] | None = None,
    base_url: str = "http://127.0.0.1:9",
    extra_base: dict[str, str] | None = None,
    contents: Literal["read", "write"] = "write",
    base_after: dict[str, str | None] | None = None,
) -> Pr:
    """A repo on the fake, a PR changing `change`, and the checkout GitHub's runner would make.

    The token is what GitHub gives the job: read-only for a `pull_request` run from a fork
    (whatever the workflow asks), else the job's `contents:` permission."""
    gh.add_token(
        TOKEN,
        kind="installation",
        read_only=fork and event == "pull_request",
        contents=contents,
    )
    repo = gh.add_repo(REPO)
    base = gh.commit(repo, {**base_files(), **(extra_base or {})}, branch="main")
    head_repo = repo
    if fork:
        head_repo = gh.add_fork(repo, "stranger/skills")
    head = gh.commit(head_repo, change, parents=[base], branch="feature")
    if base_after:  # the base branch moves on after the PR branched
        base = gh.commit(repo, base_after, parents=[base], branch="main")
    files = [p for p in change]
    pull = gh.add_pull(repo, head_ref="feature", head_repo=head_repo, files=files)
    # The runner's default checkout: a detached test-merge commit of head into base, depth 1.
    ws = tmp_path / "workspace"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    git(ws, "fetch", "-q", str(gh.git_dir(repo)), "main")
    git(ws, "checkout", "-q", "--detach", "FETCH_HEAD")
    git(ws, "fetch", "-q", str(gh.git_dir(head_repo)), "feature")
    git(ws, "merge", "-q", "--no-ff", "-m", "Merge feature into main", "FETCH_HEAD")
    git(ws, "remote", "add", "origin", str(gh.git_dir(repo)))
    merge_sha = git(ws, "rev-parse", "HEAD")
    payload: dict[str, Any] = {
        "number": pull.number,
        "pull_request": {
            "number": pull.number,
            "head": {"ref": "feature", "sha": head, "repo": {"full_name": head_repo.full_name}},
            "base": {"ref": "main", "sha": base, "repo": {"full_name": REPO}},
            "changed_files": len(files),
            "merge_commit_sha": merge_sha,
        },
        "repository": {"full_name": REPO},
    }
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(payload))
    output, summary = tmp_path / "output.txt", tmp_path / "summary.md"
    output.touch()
    summary.touch()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(event_file),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh.base_url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_WORKSPACE": str(ws),
        "GITHUB_SHA": merge_sha,
        "GITHUB_REF": f"refs/pull/{pull.number}/merge",
        "GITHUB_RUN_ID": "42",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_TOKEN": "must-never-reach-an-agent",
        "ANTHROPIC_BASE_URL": base_url,
        "INPUT_GITHUB_TOKEN": TOKEN,
        "INPUT_ANTHROPIC_API_KEY": "sk-scripted",
        "INPUT_TIERS": "checks,triggers",
        "INPUT_RUNS": "1",
        "INPUT_JOBS": "2",
        "INPUT_MODELS": MODEL,
        "INPUT_COMMENT": "always",
        "INPUT_COMMIT": "true",
        "INPUT_FAIL_ON": "error",
        # One look at the stored base: the power-on-demand tests opt in.
        "INPUT_BASE": "stored",
        "INPUT_MAX_RUNS": "1",
    }
    for key, value in (inputs or {}).items():
        env[f"INPUT_{key.upper()}"] = value
    return Pr(gh, ws, env, head, output, summary)


def beta_and_gamma_edited() -> dict[str, str | None]:
    """A PR change editing two of the three skills' descriptions."""
    return {
        f"skills/{n}/SKILL.md": skill_md(
            n, f"Handle {n} sheets and tables. Use when asked about {n}."
        )
        for n in ("beta", "gamma")
    }


def run_action(pr: Pr, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args or ("pr",)), pr.env, stdout=out, stderr=err, cwd=pr.workspace)
    return code, out.getvalue(), err.getvalue()


def sessions(srv: ModelServer) -> list[str]:
    """The first user prompt of every agent session the model server saw."""
    found = []
    for r in srv.requests:
        msgs = r.get("body", {}).get("messages", [])
        if r.get("path") != "/v1/messages" or len(msgs) != 1:
            continue
        content = msgs[0].get("content")
        blocks = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
        found.extend(
            t
            for t in blocks
            if not t.startswith("<system-reminder>") and ("spreadsheet" in t or "weather" in t)
        )
    return found


def writes(gh: FakeGitHub) -> list[Any]:
    """Every request that changes something (a GraphQL query is a read sent as a POST)."""
    return [r for r in gh.requests if r.method in ("POST", "PATCH") and r.path != "/graphql"]


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub.start(tmp_path) as fake:
        yield fake


def test_pr_touching_one_skill_then_a_rerun_on_the_bots_commit(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    edited = skill_md(
        "beta", "Handle beta spreadsheets and beta tables. Use when asked about beta data."
    )
    pr = make_pr(tmp_path, gh, change={"skills/beta/SKILL.md": edited}, base_url=srv.base_url)

    code, out, err = run_action(pr)
    assert code == 0, out + err
    prompts = sessions(srv)
    assert prompts and all("alpha" not in p and "gamma" not in p for p in prompts)
    assert any("beta" in p for p in prompts)

    # Exactly one commit on the PR branch, whose only parent is the evaluated head.
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None and tip != pr.head_sha
    bare = gh.git_dir(REPO)
    parents = git(bare, "rev-list", "--parents", "-n", "1", tip).split()
    assert parents == [tip, pr.head_sha]
    changed = sorted(git(bare, "diff", "--name-only", pr.head_sha, tip).splitlines())
    assert "evals/beta/results.json" in changed and "EVALUATION.md" in changed
    assert not any(p.startswith(("evals/alpha", "evals/gamma")) for p in changed)
    stored = json.loads(git(bare, "show", f"{tip}:evals/beta/results.json"))
    assert list(stored["models"]) == [MODEL]

    comments = gh.comments_on(REPO, 1)
    assert len(comments) == 1 and COMMENT_MARKER in comments[0].body
    assert "beta" in comments[0].body
    outputs = pr.outputs()
    assert json.loads(outputs["evaluated_skills"]) == ["kit/beta"]
    assert outputs["commit_sha"] == tip
    assert outputs["comment_id"] == str(comments[0].id)
    assert int(outputs["sessions"]) == len(prompts)
    assert outputs["report_path"] == "EVALUATION.md"
    assert outputs["status"] in ("passed", "regressed", "failed")
    assert "beta" in pr.summary.read_text()
    # Nothing a model or the PR wrote can reach the agent's environment as the token.
    assert all("must-never-reach-an-agent" not in json.dumps(r) for r in srv.requests)

    # Second run on the bot's commit (head checkout this time): no session, commit or comment write.
    before = len(srv.requests)
    writes_before = len(writes(gh))
    event = json.loads(Path(pr.env["GITHUB_EVENT_PATH"]).read_text())
    event["pull_request"]["head"]["sha"] = tip
    Path(pr.env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    git(pr.workspace, "fetch", "-q", str(bare), "feature")
    git(pr.workspace, "checkout", "-q", "-f", "--detach", "FETCH_HEAD")  # a fresh checkout
    git(pr.workspace, "clean", "-q", "-fdx")
    pr.env["GITHUB_SHA"] = tip
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert sessions(srv)[len(prompts) :] == [] and all(
        r.get("path") != "/v1/messages" for r in srv.requests[before:]
    )
    assert gh.ref_sha(REPO, "heads/feature") == tip
    assert len(gh.comments_on(REPO, 1)) == 1
    assert len(writes(gh)) == writes_before


def test_nothing_touched_is_one_summary_line_and_exit_0(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(tmp_path, gh, change={"README.md": "# kit, now with docs\n"})
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert "nothing to evaluate" in out
    assert "nothing to evaluate" in pr.summary.read_text()
    assert gh.comments_on(REPO, 1) == []
    assert gh.calls("POST", r".*/git/commits") == []
    assert pr.outputs()["status"] == "skipped"


def test_without_credentials_tier0_runs_and_nothing_is_published_by_a_fork(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")
        },
        fork=True,
        inputs={"anthropic_api_key": "", "fail_on": "regression"},
    )
    code, out, err = run_action(pr)
    assert code == 1, out + err  # no verdict is not a pass (`fail_on: error` lets it pass)
    assert "live tiers skipped" in out
    assert gh.calls("POST", r".*/git/.*") == []
    assert gh.comments_on(REPO, 1) == []
    summary = pr.summary.read_text()
    assert "live tiers skipped" in summary
    assert "### ⏸️ not evaluated: beta triggers, 2 stale or missing queries not run: a fork PR" in (
        summary
    )
    assert pr.outputs()["status"] == "not-evaluated"


def test_pull_request_target_from_a_fork_is_refused(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")
        },
        fork=True,
        event="pull_request_target",
    )
    code, out, _ = run_action(pr)
    assert code == 2
    assert "::error" in out and "allow_fork_target" in out
    assert pr.outputs()["status"] == "errored"


def test_an_unsupported_event_says_so_and_exits_0(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(tmp_path, gh, change={"README.md": "x\n"}, event="issues")
    code, _, _ = run_action(pr)
    assert code == 0
    assert "issues" in pr.summary.read_text()
    assert pr.outputs()["status"] == "skipped"


def test_a_403_on_the_comment_is_a_notice_and_the_summary_is_still_written(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")
        },
        inputs={"anthropic_api_key": ""},
    )
    gh.fail("POST", r".*/issues/1/comments", [Fault.not_accessible()] * 3)
    commands = io.StringIO()
    outcome = run_pr(
        PrOptions(environ=pr.env, cwd=pr.workspace, retry=RetryPolicy.immediate()),
        reporter=RecordingReporter(),
        commands=commands,
    )
    assert outcome.exit_code == 0
    assert "::notice::the PR comment was not posted" in commands.getvalue()
    assert "beta" in pr.summary.read_text()


def test_gate_fails_on_missing_evidence_and_passes_with_fail_on_never(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(tmp_path, gh, change={"README.md": "x\n"}, inputs={"fail_on": "regression"})
    code, out, _ = run_action(pr, "gate")
    assert code == 1
    assert "::error" in out
    assert pr.outputs()["status"] == "failed"
    pr.output.write_text("")
    pr.env["INPUT_FAIL_ON"] = "never"
    code, _, _ = run_action(pr, "gate")
    assert code == 0
    # Outside Actions: one line per problem, no workflow commands.
    pr.env.pop("GITHUB_ACTIONS")
    pr.env["INPUT_FAIL_ON"] = "regression"
    code, out, _ = run_action(pr, "gate")
    assert code == 1 and "::error" not in out
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert fails and len(fails) == len(set(fails))


def local_repo_with_gamma_edited(tmp_path: Path) -> Path:
    """A local git repository at the base commit, with gamma's SKILL.md edited (uncommitted)."""
    root = tmp_path / "repo"
    for rel, text in base_files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "skills/gamma/SKILL.md").write_text(
        skill_md("gamma", "Gamma. Use when asked about gamma.")
    )
    return root


def test_local_preview_writes_the_comment_and_summary_files(tmp_path: Path) -> None:
    root = local_repo_with_gamma_edited(tmp_path)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["pr", "--local", "--base", "main", "--out", "preview"],
        env,
        stdout=out,
        stderr=err,
        cwd=root,
    )
    # No credentials: gamma's edit is not evaluated, which is no pass (exit 1), never green.
    assert code == 1, out.getvalue() + err.getvalue()
    comment = (root / "preview" / "pr-comment.md").read_text()
    assert COMMENT_MARKER in comment and "gamma" in comment
    assert comment.splitlines()[2].startswith("### ⏸️ not evaluated: gamma triggers")
    assert (root / "preview" / "step-summary.md").is_file()
    assert str(root / "preview" / "pr-comment.md") in out.getvalue()


def test_a_moved_head_is_a_notice_and_nothing_is_committed(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")
        },
        inputs={"tiers": "checks"},  # no agent: the regenerated EVALUATION.md is what changes
    )
    gh.fail("PATCH", r".*/git/refs/heads/feature", [Fault.not_fast_forward()])
    commands = io.StringIO()
    outcome = run_pr(
        PrOptions(environ=pr.env, cwd=pr.workspace, retry=RetryPolicy.immediate()),
        reporter=RecordingReporter(),
        commands=commands,
    )
    assert outcome.exit_code == 0
    assert gh.ref_sha(REPO, "heads/feature") == pr.head_sha
    assert "::notice::" in commands.getvalue() and outcome.outputs.commit_sha == ""
    assert "beta" in pr.summary.read_text()


def test_the_files_api_cap_falls_back_to_git(tmp_path: Path, gh: FakeGitHub) -> None:
    change: dict[str, str | None] = {
        "skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")
    }
    pr = make_pr(tmp_path, gh, change=change, inputs={"tiers": "checks", "commit": "false"})
    pull = gh.pulls[(REPO, 1)]
    pull.files = [FakeFile(f"docs/page-{i}.md") for i in range(3000)]  # the API's cap
    pull.changed_files = 3100
    commands = io.StringIO()
    outcome = run_pr(
        PrOptions(environ=pr.env, cwd=pr.workspace, retry=RetryPolicy.immediate()),
        reporter=RecordingReporter(),
        commands=commands,
    )
    assert outcome.exit_code == 0
    assert "cap" in commands.getvalue()
    assert outcome.touched is not None and outcome.touched.keys == ("kit/beta",)


@pytest.mark.parametrize(("mode", "posted"), [("always", 1), ("changes", 0), ("off", 0)])
def test_comment_modes_when_no_figure_moved(
    tmp_path: Path, gh: FakeGitHub, mode: str, posted: int
) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")
        },
        inputs={"tiers": "checks", "commit": "false", "comment": mode},
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert len(gh.comments_on(REPO, 1)) == posted
    assert "beta" in pr.summary.read_text()  # the summary is written whatever the comment mode


def test_mode_run_on_workflow_dispatch_evaluates_every_skill_and_commits_to_the_branch(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(tmp_path, gh, change={"README.md": "x\n"}, inputs={"tiers": "checks"})
    main_sha = gh.ref_sha(REPO, "heads/main")
    assert main_sha is not None
    git(pr.workspace, "checkout", "-q", "-f", "--detach", main_sha)
    Path(pr.env["GITHUB_EVENT_PATH"]).write_text(json.dumps({"ref": "refs/heads/main"}))
    pr.env.update(
        GITHUB_EVENT_NAME="workflow_dispatch", GITHUB_REF="refs/heads/main", GITHUB_SHA=main_sha
    )
    code, out, err = run_action(pr, "run")
    assert code == 0, out + err
    assert json.loads(pr.outputs()["evaluated_skills"]) == [f"kit/{s}" for s in SKILLS]
    tip = gh.ref_sha(REPO, "heads/main")
    assert tip != main_sha and pr.outputs()["commit_sha"] == tip
    parents = git(gh.git_dir(REPO), "rev-list", "--parents", "-n", "1", str(tip)).split()
    assert parents == [tip, main_sha]
    assert gh.comments_on(REPO, 1) == []  # no pull request, no comment


def test_a_base_checkout_of_pull_request_target_is_never_committed(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")
        },
        event="pull_request_target",
        inputs={"tiers": "checks"},
    )
    base_sha = gh.ref_sha(REPO, "heads/main")
    assert base_sha is not None
    git(pr.workspace, "checkout", "-q", "-f", "--detach", base_sha)  # the event's default checkout
    pr.env["GITHUB_SHA"] = base_sha
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert "neither the PR head nor its test merge" in out
    assert gh.ref_sha(REPO, "heads/feature") == pr.head_sha
    assert pr.outputs()["commit_sha"] == ""


def test_working_directory_in_a_subdirectory(tmp_path: Path, gh: FakeGitHub) -> None:
    gh.add_token(TOKEN, kind="installation")
    repo = gh.add_repo(REPO)
    base = gh.commit(repo, {f"tools/{k}": v for k, v in base_files().items()}, branch="main")
    edited = skill_md("gamma", "Gamma things. Use when asked about gamma.")
    gh.commit(repo, {"tools/skills/gamma/SKILL.md": edited}, parents=[base], branch="feature")
    pull = gh.add_pull(repo, head_ref="feature", files=["tools/skills/gamma/SKILL.md"])
    ws = tmp_path / "workspace"
    subprocess.run(
        ["git", "clone", "-q", "-b", "feature", str(gh.git_dir(repo)), str(ws)], check=True
    )
    event = {
        "number": pull.number,
        "pull_request": {
            "number": pull.number,
            "head": {"ref": "feature", "sha": pull.head_sha, "repo": {"full_name": REPO}},
            "base": {"ref": "main", "sha": base, "repo": {"full_name": REPO}},
            "changed_files": 1,
        },
    }
    (tmp_path / "event.json").write_text(json.dumps(event))
    output, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh.base_url,
        "GITHUB_WORKSPACE": str(ws),
        "GITHUB_SHA": pull.head_sha,
        "GITHUB_REF": f"refs/pull/{pull.number}/merge",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "INPUT_GITHUB_TOKEN": TOKEN,
        "INPUT_TIERS": "checks",
        "INPUT_WORKING_DIRECTORY": "tools",
    }
    out, err = io.StringIO(), io.StringIO()
    code = main(["pr"], env, stdout=out, stderr=err, cwd=ws)
    assert code == 0, out.getvalue() + err.getvalue()
    assert "kit/gamma" in output.read_text()
    tip = gh.ref_sha(REPO, "heads/feature")
    changed = git(gh.git_dir(REPO), "diff", "--name-only", pull.head_sha, str(tip)).splitlines()
    assert "tools/EVALUATION.md" in changed and all(p.startswith("tools/") for p in changed)


def test_max_cost_usd_skips_what_does_not_fit_and_says_so_everywhere(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    edited = skill_md("beta", "Handle beta spreadsheets and tables. Use when asked about beta.")
    pr = make_pr(
        tmp_path,
        gh,
        change={"skills/beta/SKILL.md": edited},
        base_url=srv.base_url,
        inputs={"max_cost_usd": "0"},  # no unit fits: its estimate is above zero
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert sessions(srv) == []
    line = "budget: stopped at $0.00 of $0.00 (--max-cost-usd); 1 unit not run, a re-run "
    line += f"continues: kit/beta triggers {MODEL}"
    assert line in pr.summary.read_text()
    (comment,) = gh.comments_on(REPO, 1)
    assert line in comment.body
    assert gh.ref_sha(REPO, "heads/feature") != pr.head_sha  # the report is still committed


def test_plan_shard_merge_jobs_commit_and_comment_once(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    change = beta_and_gamma_edited()
    pr = make_pr(tmp_path, gh, change=change, base_url=srv.base_url, inputs={"shards": "2"})
    pr.env["INPUT_TIERS"] = "checks,triggers,evals"

    code, out, err = run_action(pr, "plan")
    assert code == 0, out + err
    assert "::error" not in out and "::warning" not in out  # Tier 0 is annotated by merge only
    planned = pr.outputs()
    assert json.loads(planned["matrix"]) == {"shard": ["1/2", "2/2"]}
    assert sessions(srv) == [] and gh.comments_on(REPO, 1) == []
    for label in ("1/2", "2/2"):
        pr.env["INPUT_SHARD"] = label
        code, out, err = run_action(pr, "shard")
        assert code == 0, out + err
        assert pr.outputs()["plan_id"] == planned["plan_id"]
    prompts = sessions(srv)
    assert any("beta" in p for p in prompts) and any("gamma" in p for p in prompts)
    assert not any("alpha" in p for p in prompts)
    assert gh.ref_sha(REPO, "heads/feature") == pr.head_sha  # shards commit nothing
    assert not (pr.workspace / "evals/beta/results.json").exists()  # nor touch results files

    code, out, err = run_action(pr, "merge")
    assert code == 0, out + err
    assert len(sessions(srv)) == len(prompts)  # the merge starts no session
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None and tip != pr.head_sha
    bare = gh.git_dir(REPO)
    changed = git(bare, "diff", "--name-only", pr.head_sha, tip).splitlines()
    assert {"evals/beta/results.json", "evals/gamma/results.json"} <= set(changed)
    assert not any(p.startswith(".evolve-fragments") for p in changed)
    (comment,) = gh.comments_on(REPO, 1)
    assert "beta" in comment.body and "gamma" in comment.body
    assert pr.outputs()["plan_id"] == planned["plan_id"]


def test_merge_refuses_a_missing_shard_by_name(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    change = beta_and_gamma_edited()
    pr = make_pr(tmp_path, gh, change=change, base_url=srv.base_url, inputs={"shard": "1/2"})
    code, out, err = run_action(pr, "shard")
    assert code == 0, out + err
    code, out, err = run_action(pr, "merge")
    assert code == 2
    assert "shard 2/2" in err and "missing" in err
    assert gh.ref_sha(REPO, "heads/feature") == pr.head_sha and gh.comments_on(REPO, 1) == []


def test_a_cancelled_job_publishes_what_finished_and_a_rerun_does_the_rest(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path, agent_scratch: Path
) -> None:
    # GitHub cancels a job with SIGINT, then SIGTERM, then a kill; a SIGTERM mid-sweep here.
    srv = model_server({"latency_ms": 600, "rules": [{"name": "r", "route": {"threshold": 0.1}}]})
    change = beta_and_gamma_edited()
    pr = make_pr(tmp_path, gh, change=change, base_url=srv.base_url, inputs={"jobs": "1"})
    beta = pr.workspace / "evals/beta/results.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", "pr"],
        env={**pr.env, "TMPDIR": str(agent_scratch)},  # its agents are this run's only
        cwd=pr.workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None and not beta.exists():
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert beta.exists(), "the job ended before a skill finished"
    assert proc.returncode == 143, (out + err).decode()
    assert live_agents(agent_scratch) == []
    first = sessions(srv)
    # What finished is committed and the comment says the job was cancelled.
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None and tip != pr.head_sha
    changed = git(gh.git_dir(REPO), "diff", "--name-only", pr.head_sha, tip).splitlines()
    assert "evals/beta/results.json" in changed
    (comment,) = gh.comments_on(REPO, 1)
    assert "cancelled: the job was stopped before every case ran" in comment.body
    assert "cancelled:" in pr.summary.read_text()

    # A re-run evaluates only what was left: no query of a finished case runs again.
    code, out2, err2 = run_action(pr)
    assert code == 0, out2 + err2
    again = sessions(srv)[len(first) :]
    assert again and all("gamma" in p or "weather" in p for p in again)
    done = json.loads(beta.read_text())["models"][MODEL]["triggers"]["results"]
    assert not any(q["query"] in again for q in done if "beta" in q["query"])


def test_openai_models_run_through_codex_with_extra_harnesses(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    from evolve_action.errors import EnvironmentProblem
    from evolve_action.harness import find_codex

    try:
        find_codex({"PATH": "/usr/local/bin:/usr/bin:/bin"})
    except EnvironmentProblem:
        pytest.skip("OpenAI Codex is not installed (evolve-action install codex)")
    srv = model_server(POLICY)
    edited = skill_md(
        "beta", "Handle beta spreadsheets and beta tables. Use when asked about beta."
    )
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": edited,
            ".evolve.json": json.dumps({"models": [MODEL, "openai/gpt-5.4"]}) + "\n",
        },
        base_url=srv.base_url,
        inputs={
            "models": f"{MODEL},openai/gpt-5.4",
            "extra_harnesses": "codex",
            "openai_api_key": "sk-openai-scripted",
        },
    )
    pr.env["OPENAI_BASE_URL"] = f"{srv.base_url}/v1"
    code, out, err = run_action(pr)
    assert code == 0, out + err
    # Both models ran their sessions: Claude Code on /v1/messages, Codex on /v1/responses.
    codex_calls = [r for r in srv.requests if r.get("path") == "/v1/responses"]
    assert codex_calls and any("beta" in r["prompt"] for r in codex_calls)
    assert sessions(srv)
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None and tip != pr.head_sha
    results = json.loads(git(gh.git_dir(REPO), "show", f"{tip}:evals/beta/results.json"))
    entry = results["models"]["openai/gpt-5.4"]["triggers"]
    assert entry["harness"] == "codex" and entry["summary"]["total"] > 0
    (comment,) = gh.comments_on(REPO, 1)
    rows = comment.body.splitlines()  # the OpenAI model's row, by display name
    assert any("[kit/beta]" in row and "| GPT-5.4 |" in row for row in rows), comment.body
    # The OpenAI key input is masked, and neither token reached Codex.
    assert "::add-mask::sk-openai-scripted" in out
    bodies = json.dumps([r["body"] for r in codex_calls])
    assert "must-never-reach-an-agent" not in bodies and TOKEN not in bodies


# ------------------------------------------------------------------ issue 20: ours only, inside only


APP_TOKEN = "ghs_app_installation_token"
APP_LOGIN = "evolve-app[bot]"


def beta_edited() -> dict[str, str | None]:
    return {"skills/beta/SKILL.md": skill_md("beta", "Beta things. Use when asked about beta.")}


def run_pr_job(pr: Pr) -> tuple[Any, str]:
    commands = io.StringIO()
    outcome = run_pr(
        PrOptions(environ=pr.env, cwd=pr.workspace, retry=RetryPolicy.immediate()),
        reporter=RecordingReporter(),
        commands=commands,
    )
    return outcome, commands.getvalue()


def test_an_app_token_run_twice_keeps_one_comment_and_leaves_quotes_alone(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(tmp_path, gh, change=beta_edited(), inputs={"tiers": "checks", "commit": "false"})
    gh.add_token(APP_TOKEN, kind="installation", login=APP_LOGIN)  # GET /user: 403, like GitHub
    pr.env["INPUT_GITHUB_TOKEN"] = APP_TOKEN
    # Another workflow (the default token) quotes our marker mid-body; a human forges line 1.
    quoting = f"CI report\n\n> {COMMENT_MARKER}\n"
    theirs = gh.add_comment(REPO, 1, quoting, login="github-actions[bot]", user_type="Bot")
    forged = gh.add_comment(REPO, 1, f"{COMMENT_MARKER}\nfake results", login="mallory")
    for _ in range(2):
        code, out, err = run_action(pr)
        assert code == 0, out + err
    ours = [c for c in gh.comments_on(REPO, 1) if c.user_login == APP_LOGIN]
    assert len(ours) == 1 and ours[0].body.splitlines()[0] == COMMENT_MARKER
    assert gh.comments[theirs.id].body == quoting
    assert gh.comments[forged.id].body == f"{COMMENT_MARKER}\nfake results"
    assert gh.calls("GET", "/user") == []
    assert "failed with 403" not in err
    # Evidence that changes is written into the same comment.
    pr.env["INPUT_COMMENT_AUTHOR"] = APP_LOGIN
    Path(pr.workspace / "skills/beta/SKILL.md").write_text(skill_md("beta", "Beta, again."))
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert [c.id for c in gh.comments_on(REPO, 1) if c.user_login == APP_LOGIN] == [ours[0].id]


def test_a_closed_pull_request_event_is_one_summary_line(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(tmp_path, gh, change=beta_edited())  # live tiers asked, model server unreachable
    event = json.loads(Path(pr.env["GITHUB_EVENT_PATH"]).read_text())
    event["action"] = "closed"
    event["pull_request"]["state"] = "closed"
    Path(pr.env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    code, out, err = run_action(pr)
    assert code == 0, out + err
    line = "evolve-action does nothing on a closed pull_request event: pull request #1 is closed"
    assert pr.summary.read_text().startswith(line) and len(pr.summary.read_text().splitlines()) == 1
    assert pr.outputs()["status"] == "skipped"
    assert [r for r in gh.requests if r.method != "GET"] == []  # no comment, no commit
    assert not (pr.workspace / "EVALUATION.md").exists()


def test_a_protected_branch_422_reports_githubs_reason(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(tmp_path, gh, change=beta_edited(), inputs={"tiers": "checks"})
    reason = "Protected branch update failed for refs/heads/feature."
    gh.fail("PATCH", r".*/git/refs/heads/feature", [Fault(422, reason)])
    outcome, commands = run_pr_job(pr)
    assert outcome.exit_code == 0 and outcome.outputs.commit_sha == ""
    assert reason in commands and "is now at" not in commands
    assert gh.ref_sha(REPO, "heads/feature") == pr.head_sha


def test_a_head_that_really_moved_says_so(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(tmp_path, gh, change=beta_edited(), inputs={"tiers": "checks"})
    moved: list[str] = []
    gh.hook(
        "PATCH",
        r".*/git/refs/heads/feature",
        lambda: moved.append(
            gh.commit(REPO, {"x.md": "x\n"}, parents=[pr.head_sha], branch="feature")
        ),
    )
    outcome, commands = run_pr_job(pr)
    assert outcome.exit_code == 0 and outcome.outputs.commit_sha == ""
    assert f"is now at {moved[0][:12]}, not the evaluated {pr.head_sha[:12]}" in commands


def _results_doc(plugin: str, skill: str) -> str:
    from tests.helpers.report_fixtures import tq, trig_entry

    from evolve_action.encoding import encode_json
    from evolve_action.results import ModelEntry, ResultsFile, to_document

    key = "anthropic/claude-sonnet-5"  # a model the fixtures know
    entry = trig_entry(key, [tq(f"Summarise the {skill} spreadsheet please", True, 3)])
    doc = to_document(
        ResultsFile(plugin=plugin, skill=skill, models={key: ModelEntry(triggers=entry)})
    )
    return str(encode_json(doc))


def test_base_evidence_comes_from_git_when_the_clone_has_the_base(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_and_gamma_edited(),  # gamma has no results at the base
        inputs={"tiers": "checks", "commit": "false", "comment": "off"},
        extra_base={"evals/beta/results.json": _results_doc("kit", "beta")},
    )
    outcome, commands = run_pr_job(pr)
    assert outcome.exit_code == 0, commands
    assert gh.calls("GET", r".*/contents/.*") == []  # git answered, absent files included
    (row,) = [r for r in outcome.rows if r.skill == "beta"]
    assert row.label is not Label.NEW and row.triggers is not None
    assert row.triggers.base is not None and row.triggers.base.n == 1
    assert "could not be read" not in commands


def test_base_evidence_from_the_api_when_git_lacks_the_base_and_failures_are_notices(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        inputs={"tiers": "checks", "commit": "false", "comment": "off"},
    )
    # The base moved on GitHub after the checkout: the clone does not hold the event's base.
    main = gh.ref_sha(REPO, "heads/main")
    assert main is not None
    newer = gh.commit(
        REPO,
        {"evals/beta/results.json": _results_doc("kit", "beta")},
        parents=[main],
        branch="main",
    )
    event = json.loads(Path(pr.env["GITHUB_EVENT_PATH"]).read_text())
    event["pull_request"]["base"]["sha"] = newer
    Path(pr.env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    outcome, commands = run_pr_job(pr)
    assert outcome.exit_code == 0, commands
    listed = gh.calls("GET", r".*/contents/.*")
    assert [r.path for r in listed] == [
        "/repos/octo/skills/contents/evals/beta",
        "/repos/octo/skills/contents/evals/beta/results.json",
    ]
    (row,) = [r for r in outcome.rows if r.skill == "beta"]
    assert row.triggers is not None and row.triggers.base is not None
    assert "could not be read" not in commands

    # A failing API is said out loud, never a silent "no base".
    gh.fail("GET", r".*/contents/evals/beta", [500] * 4)
    outcome, commands = run_pr_job(pr)
    assert "::notice::the base results of kit/beta could not be read" in commands
    assert "the base results of kit/beta could not be read" in pr.summary.read_text()
    # … and the skill is "base unknown", never "new".
    (row,) = [r for r in outcome.rows if r.skill == "beta"]
    assert row.label is Label.BASE_UNKNOWN
    assert outcome.outputs.delta == "base unknown"


def test_a_plugin_symlinked_outside_the_checkout_is_never_committed(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    gh.add_token(TOKEN, kind="installation")
    repo = gh.add_repo(REPO)
    market = {
        "name": "m",
        "owner": {"name": "o"},
        "plugins": [{"name": "kit", "source": "./vendor/kit"}],
    }
    files = {".claude-plugin/marketplace.json": json.dumps(market) + "\n", "README.md": "# m\n"}
    files.update({f"vendor/kit/{k}": v for k, v in base_files().items() if k != ".evolve.json"})
    files[".evolve.json"] = base_files()[".evolve.json"]
    files["vendor/kit/evals/beta/results.json"] = _results_doc("kit", "beta")  # a plugin page
    base = gh.commit(repo, files, branch="main")
    edited = {
        "vendor/kit/skills/beta/SKILL.md": skill_md("beta", "Beta. Use when asked about beta.")
    }
    gh.commit(repo, edited, parents=[base], branch="feature")
    pull = gh.add_pull(repo, head_ref="feature", files=list(edited))
    ws = tmp_path / "workspace"
    subprocess.run(
        ["git", "clone", "-q", "-b", "feature", str(gh.git_dir(repo)), str(ws)], check=True
    )
    outside = tmp_path / "elsewhere" / "kit"  # the checkout's plugin leaves it through a symlink
    shutil.copytree(ws / "vendor/kit", outside)
    shutil.rmtree(ws / "vendor/kit")
    (ws / "vendor/kit").symlink_to(outside)
    event = {
        "number": pull.number,
        "pull_request": {
            "number": pull.number,
            "head": {"ref": "feature", "sha": pull.head_sha, "repo": {"full_name": REPO}},
            "base": {"ref": "main", "sha": base, "repo": {"full_name": REPO}},
        },
    }
    (tmp_path / "event.json").write_text(json.dumps(event))
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh.base_url,
        "GITHUB_WORKSPACE": str(ws),
        "GITHUB_SHA": pull.head_sha,
        "GITHUB_REF": f"refs/pull/{pull.number}/merge",
        "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_GITHUB_TOKEN": TOKEN,
        "INPUT_TIERS": "checks",
    }
    out, err = io.StringIO(), io.StringIO()
    code = main(["pr"], env, stdout=out, stderr=err, cwd=ws)
    tip = gh.ref_sha(REPO, "heads/feature")
    changed = git(gh.git_dir(REPO), "diff", "--name-only", pull.head_sha, str(tip)).splitlines()
    # No junk path named after the absolute workspace, nothing through the symlink.
    assert set(changed) <= {"EVALUATION.md", "EVALUATION.json"}, changed
    assert code != 0 or "outside the repository" not in out.getvalue()


def test_a_refused_definition_says_authoring_error_not_a_failure(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel, text in base_files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "evals/gamma/evals.json").write_text(
        '{\n  "evals": [\n    {"id": 1, "prompt": "p", "assertions": [\n'
        '      {"type": "notregex", "pattern": "x"}]}\n  ]\n}\n'
    )
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    outcome = run_pr(
        PrOptions(environ=env, cwd=root, local=True, base="main"),
        reporter=RecordingReporter(),
        commands=io.StringIO(),
    )
    (row,) = [r for r in outcome.rows if r.skill == "gamma"]
    assert row.label is Label.AUTHORING_ERROR and row.evals is not None
    assert "evals/gamma/evals.json:4" in row.evals.reason
    assert "authoring error" in outcome.comment.splitlines()[2]  # the verdict line
    assert "authoring error in kit/gamma's evals" in outcome.comment
    assert outcome.outputs.status != "errored"


def test_a_base_rerun_interleaves_base_and_head_sessions_and_commits_nothing_of_the_base(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    """`base: rerun`: the base commit's beta (which routes) against the head's (which does not),
    run in this job, one run per query in turn, until the rule decides or `max_runs`. Sessions: 2
    head-sweep + 3 base catch-up + 2 × (2 base + 2 head) = 13: the rounds run only the queries
    whose pooled runs differ (both shared ones), never the one the PR deleted (it cannot move the
    test)."""
    srv = model_server(POLICY)
    base_queries = [
        ("Summarise the beta spreadsheet please", True),
        ("Total the beta spreadsheet columns", True),
        ("Reconcile the beta ledger spreadsheet", True),  # the PR deletes this one
    ]
    head_queries = base_queries[:2]
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Draw kittens. Use when asked for cat art."),
            "evals/beta/triggers.json": triggers_doc(head_queries),
        },
        base_url=srv.base_url,
        extra_base={"evals/beta/triggers.json": triggers_doc(base_queries)},
        inputs={"base": "rerun", "max_runs": "3", "runs": "1", "fail_on": "never"},
    )
    checkout = git(pr.workspace, "rev-parse", "HEAD")
    code, out, err = run_action(pr)
    assert code == 0, out + err

    # Who ran each session, in order: the base's beta lists "Handle beta spreadsheets".
    order = []
    for r in srv.requests:
        msgs = r.get("body", {}).get("messages", [])
        if r.get("path") != "/v1/messages" or len(msgs) != 1 or "beta" not in r.get("prompt", ""):
            continue
        text = json.dumps(r["body"])
        order.append("B" if "Handle beta spreadsheets" in text else "H")
    assert order.count("B") == 7 and order.count("H") == 6, order
    runs = [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]
    assert runs == ["H", "B", "H", "B", "H"], order  # sweep, catch-up, then interleaved rounds

    outputs = pr.outputs()
    assert int(outputs["sessions"]) == len(order)
    (row,) = [r for r in gh.comments_on(REPO, 1)]
    assert "7 of them re-ran the base" in row.body
    assert "🔴" in row.body.splitlines()[2]  # the verdict: a regression
    assert outputs["delta"] == "regression"

    # The base's runs are in the artifact, never in what was committed.
    artifact = json.loads((pr.workspace / ".evolve-action/base-runs.json").read_text())
    beta = artifact["skills"]["kit/beta"][MODEL]
    assert {q["query"] for q in beta["base_runs"]} == {q for q, _ in base_queries}
    made = {q["query"]: (q["runs"], q["rounds"]) for q in beta["base_runs"]}
    assert made == {
        **{q: (3, [[2, 2]]) for q, _ in head_queries},  # catch-up run, then one 2-run round
        "Reconcile the beta ledger spreadsheet": (1, [[0, 0]]),  # deleted: passed by
    }
    assert (pr.workspace / ".evolve-action/.gitignore").read_text().endswith("*\n")
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None and tip != pr.head_sha
    bare = gh.git_dir(REPO)
    changed = git(bare, "diff", "--name-only", pr.head_sha, tip).splitlines()
    assert not any(".evolve-action" in p for p in changed)
    committed = git(bare, "diff", pr.head_sha, tip)
    assert "ledger" not in committed
    stored = json.loads(git(bare, "show", f"{tip}:evals/beta/results.json"))
    results = stored["models"][MODEL]["triggers"]["results"]
    assert [(q["query"], q["runs"]) for q in results] == [(q, 1) for q, _ in head_queries]

    # "Re-run jobs" of the decided PR: the same event and commit, a fresh checkout of it (the
    # results commit is not in it, so the head's queries are stale). The PR's ledger holds the
    # comparison of this content closed: the planner starts no session, nothing is committed,
    # the log says why in one line, and the verdict is the same (issue 38's finality).
    git(pr.workspace, "checkout", "-q", "-f", checkout)
    git(pr.workspace, "clean", "-q", "-fdx")
    pr.env["GITHUB_RUN_ATTEMPT"] = "2"
    before, commits = len(srv.requests), gh.calls("POST", r".*/git/commits")
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert srv.requests[before:] == [], "a re-run of a decided comparison started sessions"
    assert gh.calls("POST", r".*/git/commits") == commits
    assert gh.ref_sha(REPO, "heads/feature") == tip
    assert git(pr.workspace, "status", "--porcelain", "--", "evals/beta") == ""  # nothing written
    said = [line for line in out.splitlines() if "not run again" in line]
    assert len(said) == 1 and "kit/beta" in said[0] and "regression" in said[0], out
    assert pr.outputs()["delta"] == "regression", out + gh.comments_on(REPO, 1)[0].body
    (again,) = gh.comments_on(REPO, 1)
    assert "🔴" in again.body.splitlines()[2]
    rerun_summary = pr.summary.read_text().rsplit("<!-- evolve-action:pr-comment -->", 1)[-1]
    assert "stale or missing" not in rerun_summary, rerun_summary  # closed: rests on the ledger
    assert "skipped (results up to date)" not in rerun_summary  # stale on disk, not current


def test_pr_local_is_a_pre_push_gate(tmp_path: Path, model_server: Any, claude_cli: Path) -> None:
    """No models configured: one default model; no stored base: `auto` re-runs the base commit's
    version; a regression exits 1; nothing tracked changes and the output is ignored by git.
    Sessions: 2 head-sweep + 2 base catch-up + 2 × (2 base + 2 head) = 12."""
    srv = model_server(POLICY)
    root = tmp_path / "repo"
    queries = [("Summarise the quarterly spreadsheet please", True), ("Total my spreadsheet", True)]
    files = {  # the router matches words of the listing: the base's tally does, the head's not
        ".claude-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}\n',
        "skills/tally/SKILL.md": skill_md("tally", "Summarise and total spreadsheet data."),
        "evals/tally/triggers.json": triggers_doc(queries),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "skills/tally/SKILL.md").write_text(skill_md("tally", "Draw kittens for cat art."))
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    out, err = io.StringIO(), io.StringIO()
    args = ["pr", "--local", "--runs", "1", "--max-runs", "3", "--jobs", "2"]
    code = main(args, env, stdout=out, stderr=err, cwd=root)
    assert code == 1, out.getvalue() + err.getvalue()  # fail_on: regression
    assert "regression" in out.getvalue()
    assert {r.get("model") for r in srv.requests if r.get("path") == "/v1/messages"} <= {
        "claude-sonnet-5"
    }
    comment = (root / ".evolve-action/pr-comment.md").read_text()
    assert "evaluated one model, anthropic/claude-sonnet-5 (the default)" in comment
    assert "re-ran the base" in comment and "uncommitted changes" in comment
    # Only the user's own edit is a change: no results file, no report, no output listed.
    assert git(root, "status", "--porcelain", "--untracked-files=all") == "M skills/tally/SKILL.md"


@pytest.mark.parametrize("confined", [True, False], ids=["confined", "unconfined"])
def test_an_unconfined_run_says_so_once_in_the_comment(tmp_path: Path, confined: bool) -> None:
    """`pr --local --scripted` runs real sessions against the scripted server; with neither a
    sandbox nor an unprivileged user, the comment (and the summary) say so once, loudly."""
    if not confined and os.geteuid() != 0:
        pytest.skip("an unprivileged run is never unconfined without a sandbox")
    root = local_repo_with_gamma_edited(tmp_path)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    if not confined:
        env |= {"EVOLVE_SANDBOX_ENABLED": "false", "EVOLVE_AGENT_USER": "root"}
    out, err = io.StringIO(), io.StringIO()
    args = ["pr", "--local", "--scripted", "--base", "main", "--out", "preview"]
    args += ["--runs", "1", "--max-runs", "1", "--fail-on", "never"]
    code = main(args, env, stdout=out, stderr=err, cwd=root)
    assert code == 0, out.getvalue() + err.getvalue()
    comment = (root / "preview" / "pr-comment.md").read_text()
    summary = (root / "preview" / "step-summary.md").read_text()
    assert "agent session" in comment
    for text in (comment, summary):
        assert text.count("agents ran unconfined") == (0 if confined else 1), text
    if not confined:  # the log: once, the same short line
        assert (out.getvalue() + err.getvalue()).count("agents ran unconfined") == 1


def stored_results(tmp_path: Path, base_url: str) -> dict[str, str]:
    """The base files with real, up-to-date results of beta (one run per query, scripted model)."""
    root = tmp_path / "evaluated"
    for rel, text in base_files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    args = ["run", "triggers", "--root", str(root), "--model", MODEL, "--runs", "1"]
    out, err = io.StringIO(), io.StringIO()
    code = main([*args, "--skill", "beta"], env, stdout=out, stderr=err, cwd=root)
    assert code == 0, out.getvalue() + err.getvalue()
    return {"evals/beta/results.json": (root / "evals/beta/results.json").read_text()}


def test_no_credentials_on_a_broken_description_is_not_evaluated_never_green(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    """The PR breaks beta's description (no "Use when"); the stored results are the base's and now
    stale; no credentials: no verdict (neutral headline, every tier `not evaluated` with why), the
    Tier 0 error with its file and line in the comment and the summary, the reasons name SKILL.md
    before the derived files, and the step fails."""
    srv = model_server(POLICY)
    stored = stored_results(tmp_path, srv.base_url)
    results = json.loads(stored["evals/beta/results.json"])
    results["note"] = "touched"  # a derived file in the PR too: its reason must come second
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "evals/beta/results.json": stored["evals/beta/results.json"] + "\n",
            "skills/beta/SKILL.md": skill_md("beta", "Beta things."),
        },
        inputs={"anthropic_api_key": "", "fail_on": "regression"},
        extra_base=stored,
    )
    code, out, err = run_action(pr)
    assert code == 1, out + err
    (comment,) = gh.comments_on(REPO, 1)
    verdict = comment.body.splitlines()[2]
    assert verdict.startswith("### ⏸️ not evaluated: beta triggers"), verdict
    assert "no credentials were given" in verdict
    assert "✅" not in comment.body and "no change" not in comment.body  # no legend either
    assert "results up to date" not in comment.body
    assert "2 stale or missing cases not run: no credentials were given" in comment.body
    assert "⏸️ not evaluated · stored" in comment.body  # the cell: stale figure, no label
    assert "❌ 1 Tier 0 error" in verdict
    assert "❌ skills/beta/SKILL.md:" in comment.body and "Use when" in comment.body
    reasons = next(line for line in comment.body.splitlines() if "kit/beta:" in line)
    assert reasons.index("skills/beta/SKILL.md") < reasons.index("evals/beta/results.json")
    summary = pr.summary.read_text()
    assert "⏸️ not evaluated" in summary and "skills/beta/SKILL.md:" in summary
    outputs = pr.outputs()
    assert outputs["delta"] == "not evaluated"
    assert outputs["status"] == "failed"  # the Tier 0 error
    assert outputs["sessions"] == "0"


def test_stale_results_without_checks_failing_exit_1_with_status_not_evaluated(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    stored = stored_results(tmp_path, srv.base_url)
    pr = make_pr(
        tmp_path,
        gh,
        change={
            "skills/beta/SKILL.md": skill_md("beta", "Beta sheets. Use when asked about beta.")
        },
        inputs={"anthropic_api_key": "", "fail_on": "regression"},
        extra_base=stored,
    )
    code, out, err = run_action(pr)
    assert code == 1, out + err
    assert pr.outputs()["status"] == "not-evaluated"
    body = gh.comments_on(REPO, 1)[0].body
    assert "Tier 0" not in body.splitlines()[2]
    # fail_on: error lets an unevaluated PR pass (documented), with the same comment.
    pr.env["INPUT_FAIL_ON"] = "error"
    code, out, err = run_action(pr)
    assert code == 0, out + err


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` (outside .git) and its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_gate_writes_nothing_from_any_directory(tmp_path: Path) -> None:
    """`gate` from the marketplace root and from a plugin directory (where it once rewrote the
    plugin's EVALUATION.md as a root report): every file byte-identical, no file added; `--root`,
    which its hints name, is accepted."""
    examples = Path(sys.modules["evolve_action"].__file__ or "").parent / "examples"
    root = tmp_path / "market"
    shutil.copytree(examples, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "plugins/project-tools/EVALUATION.md").write_text("# tracked, hand-written\n")
    before = tree_bytes(root)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    for cwd, args in (
        (root, ["gate"]),
        (root / "plugins/project-tools", ["gate"]),
        (tmp_path, ["gate", "--root", str(root)]),
    ):
        out, err = io.StringIO(), io.StringIO()
        code = main(args, env, stdout=out, stderr=err, cwd=cwd)
        assert code == 1, out.getvalue() + err.getvalue()  # no stored results: FAIL lines
        assert tree_bytes(root) == before, cwd
        fails = [line for line in out.getvalue().splitlines() if line.startswith("FAIL")]
        # The models the repository evaluates (no `models:`: the one default), not the catalog.
        assert fails and all(PR_DEFAULT_MODEL in line for line in fails), fails


def test_the_example_workflows_pr_then_gate_pass_with_the_default_model(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    """pr.yml then release-gate.yml as shipped, on a repository with no `models:`: the PR
    evaluates the one default model and commits its results; the gate on the bot's commit gates
    that model only, passes, and changes nothing in the checkout."""
    srv = model_server(POLICY)
    pr = make_pr(
        tmp_path,
        gh,
        change={".evolve.json": "{}\n"},  # the config touches every skill
        inputs={"models": "", "tiers": "", "fail_on": "regression"},
        extra_base={".evolve.json": '{"checks": {}}\n'},
        base_url=srv.base_url,
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert PR_DEFAULT_MODEL in out  # the note names the model it chose
    # One cost, computed one way: the comment's figure is the output's; the summary adds only
    # the estimate, said to be at list prices.
    (comment,) = gh.comments_on(REPO, 1)
    cost = pr.outputs()["cost_usd"]
    assert f"cost ${cost} ·" in comment.body, comment.body
    summary = pr.summary.read_text()
    assert "at list prices" in summary and "measured $" not in summary
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None and tip != pr.head_sha
    git(pr.workspace, "fetch", "-q", str(gh.git_dir(REPO)), "feature")
    git(pr.workspace, "checkout", "-q", "-f", "--detach", "FETCH_HEAD")
    git(pr.workspace, "clean", "-q", "-fdx")
    for name, value in {
        "mode": "gate",
        "skills": "all",
        "fail_on": "threshold",
        "min_triggers_pass_rate": "0.8",
        "min_evals_pass_rate": "0.66",
        "models": "",
    }.items():
        pr.env[f"INPUT_{name.upper()}"] = value
    pr.output.write_text("")
    code, out, err = run_action(pr, "gate")
    assert code == 0, out + err
    assert "gate: thresholds met" in out
    assert git(pr.workspace, "status", "--porcelain") == ""
    assert pr.outputs()["status"] == "passed"


def test_a_skill_without_evals_says_so_and_names_the_next_step(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = make_pr(
        tmp_path,
        gh,
        change={"skills/delta/SKILL.md": skill_md("delta", "Delta. Use when asked about delta.")},
        inputs={"fail_on": "regression"},
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err  # nothing to measure is no failure, and no pass either
    (comment,) = gh.comments_on(REPO, 1)
    assert comment.body.splitlines()[2] == (
        "### ➖ not evaluated: the touched skill has no evals yet, so nothing was measured"
    )
    step = "author evals (docs/authoring.md) or run `evolve-action init --skill delta`"
    assert step in comment.body
    assert "evaluated kit/delta" not in comment.body and "touched kit/delta" in comment.body
    summary = pr.summary.read_text()
    assert step in summary
    assert pr.outputs()["status"] == "not-evaluated"
    assert pr.outputs()["sessions"] == "0"


def test_gate_on_a_repository_without_evals_says_nothing_was_gated(tmp_path: Path) -> None:
    root = tmp_path / "hello"
    (root / "skills/greet").mkdir(parents=True)
    (root / "skills/greet/SKILL.md").write_text(skill_md("greet", "Greets. Use when greeting."))
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin/plugin.json").write_text('{"name": "hello", "version": "1.0.0"}\n')
    output = tmp_path / "output.txt"
    output.touch()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "GITHUB_OUTPUT": str(output)}
    out, err = io.StringIO(), io.StringIO()
    code = main(["gate"], env, stdout=out, stderr=err, cwd=root)
    assert code == 0, out.getvalue() + err.getvalue()
    assert "gate: no skill has evals, so nothing was gated; next: author evals" in out.getvalue()
    assert "thresholds met" not in out.getvalue()
    assert "status<<" in output.read_text() and "not-evaluated" in output.read_text()
    out = io.StringIO()
    main(["report", "--root", str(root)], env, stdout=out, stderr=err, cwd=tmp_path)
    assert "(1 plugin, 0 with results)" in out.getvalue()


# ------------------------------------------------------------------------------------------------
# Issue 29 item 4: a pull request's symlinks never make the action write or commit elsewhere.
# The PR's checkout holds a link where an output goes (`EVALUATION.md` onto a workflow file, the
# rollup `EVALUATION.yaml` onto a file outside the checkout, `.evolve-action/` onto a directory
# outside it); the job runs Tier 0 only. Nothing is written through the link, nothing under
# `.github/` is committed, and the error names the file.

WORKFLOW = "on: push\njobs: {}\n"


def _committed(gh: FakeGitHub, head_sha: str) -> list[str]:
    tip = gh.ref_sha(REPO, "heads/feature")
    return git(gh.git_dir(REPO), "diff", "--name-only", head_sha, str(tip)).splitlines()


@pytest.mark.parametrize(
    ("name", "results_format"), [("EVALUATION.md", "json"), ("EVALUATION.yaml", "yaml")]
)
def test_a_symlinked_report_is_neither_written_through_nor_committed(
    tmp_path: Path, gh: FakeGitHub, name: str, results_format: str
) -> None:
    config = json.dumps({"models": [MODEL], "results_format": results_format}) + "\n"
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        inputs={"tiers": "checks"},
        extra_base={".github/workflows/x.yml": WORKFLOW, ".evolve.json": config},
    )
    victim = tmp_path / "outside" / "victim.yaml"
    victim.parent.mkdir()
    victim.write_text("keep: 1\n")
    target = ".github/workflows/x.yml" if name == "EVALUATION.md" else str(victim)
    (pr.workspace / name).symlink_to(target)
    code, out, err = run_action(pr)
    assert code == 2, out + err
    assert f"refusing to write {pr.workspace / name}" in out + err
    assert (pr.workspace / ".github/workflows/x.yml").read_text() == WORKFLOW
    assert victim.read_text() == "keep: 1\n"
    assert not any(p.startswith(".github/") for p in _committed(gh, pr.head_sha))
    assert gh.calls("POST", r".*/git/commits") == []


def test_a_symlinked_local_output_directory_is_refused(tmp_path: Path) -> None:
    root = local_repo_with_gamma_edited(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".evolve-action").symlink_to(outside, target_is_directory=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    out, err = io.StringIO(), io.StringIO()
    code = main(["pr", "--local", "--base", "main"], env, stdout=out, stderr=err, cwd=root)
    said = out.getvalue() + err.getvalue()
    assert code == 2, said
    assert "goes through the symbolic link" in said and ".evolve-action" in said
    assert list(outside.iterdir()) == []


def test_a_planted_results_temp_link_is_flagged_and_never_written_through(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    """`evals/beta/results.json.tmp` links outside the checkout: Tier 0 says so, the results are
    written beside it (a temp file of our own, made exclusively), the link's target is untouched."""
    srv = model_server(POLICY)
    edited = skill_md("beta", "Handle beta spreadsheets and tables. Use when asked about beta.")
    pr = make_pr(tmp_path, gh, change={"skills/beta/SKILL.md": edited}, base_url=srv.base_url)
    victim = tmp_path / "outside" / "victim.json"
    victim.parent.mkdir()
    victim.write_text("keep\n")
    (pr.workspace / "evals/beta/results.json.tmp").symlink_to(victim)
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert "evals/beta/results.json.tmp: symlink" in out + err  # Tier 0: evals.symlink
    assert victim.read_text() == "keep\n"
    assert json.loads((pr.workspace / "evals/beta/results.json").read_text())["models"]
    tip = gh.ref_sha(REPO, "heads/feature")
    changed = git(gh.git_dir(REPO), "diff", "--name-only", pr.head_sha, str(tip)).splitlines()
    assert "evals/beta/results.json" in changed
    assert not any(p.endswith(".tmp") or p.startswith(".github/") for p in changed), changed


# ------------------------------------------------------------------ issue 32: one verdict per change


def _next_workflow_run(pr: Pr, run_id: str, *, attempt: str = "1", fetch: bool = True) -> None:
    """The workflow runs again (a new run id, or a re-run attempt) on the PR branch's tip."""
    bare = pr.gh.git_dir(REPO)
    tip = pr.gh.ref_sha(REPO, "heads/feature")
    assert tip is not None
    event = json.loads(Path(pr.env["GITHUB_EVENT_PATH"]).read_text())
    event["pull_request"]["head"]["sha"] = tip
    Path(pr.env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    if fetch:
        git(pr.workspace, "fetch", "-q", str(bare), "feature")
        git(pr.workspace, "checkout", "-q", "-f", "--detach", "FETCH_HEAD")
        git(pr.workspace, "clean", "-q", "-fdx")
    pr.env.update({"GITHUB_SHA": tip, "GITHUB_RUN_ID": run_id, "GITHUB_RUN_ATTEMPT": attempt})


def _ledger(gh: FakeGitHub) -> dict[str, Any]:
    tip = gh.ref_sha(REPO, "evolve-action/ledger/pr-1")
    assert tip is not None
    return dict(json.loads(git(gh.git_dir(REPO), "show", f"{tip}:ledger.json")))


def test_runs_accumulate_across_workflow_runs_and_a_rerun_never_starts_over(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_and_gamma_edited(),
        base_url=srv.base_url,
        inputs={"base": "rerun", "max_runs": "3", "runs": "1", "fail_on": "never"},
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err
    first = sessions(srv)
    assert {lk["attempt"] for lk in _ledger(gh)["looks"]} == {"42.1"}
    assert _estimated_per_session(pr.summary.read_text()) > 0
    (comment,) = gh.comments_on(REPO, 1)
    body = comment.body

    # 1. The workflow runs again on the bot's commit: no model request, no write at all.
    _next_workflow_run(pr, "43")
    before, writes_before = len(srv.requests), len(writes(gh))
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert srv.requests[before:] == []
    assert len(writes(gh)) == writes_before  # no commit, no comment edit, no ledger write
    assert gh.comments_on(REPO, 1)[0].body == body

    # 2. A push changing beta only: sessions for beta's head cases only, gamma's runs reused.
    # The job's budget admits beta's head sweep and stops before power on demand adds runs.
    gh.commit(
        REPO,
        {
            "skills/beta/SKILL.md": skill_md(
                "beta", "Handle beta sheets. Use when asked about beta."
            )
        },
        parents=[gh.ref_sha(REPO, "heads/feature")],
        branch="feature",
    )
    _next_workflow_run(pr, "44")
    # Room for beta's unit of two sessions as the budget prices the first unit of a job (its
    # first session writes the shared prompt prefix: issue 40), with 5 % to spare.
    from evolve_action.catalog import BoundModel, build_catalog
    from evolve_action.harness import Budget

    (entry,) = [m for m in build_catalog({}).models if m.key == MODEL]
    bound = BoundModel(model=entry, harness="claude", cli_model=entry.id)
    unit = Budget().estimate_usd("triggers", bound, 1, 2)
    pr.env["INPUT_MAX_COST_USD"] = f"{unit * 1.05:.4f}"
    before = len(srv.requests)
    code, out, err = run_action(pr)
    assert code == 0, out + err
    pushed = sessions(srv)[len(first) :]
    assert len(pushed) == 2 and all("beta" in p or "weather" in p for p in pushed), pushed
    bodies = [
        json.dumps(r["body"]) for r in srv.requests[before:] if r.get("path") == "/v1/messages"
    ]
    assert not any("Handle beta spreadsheets" in b for b in bodies)  # never the base's beta
    (beta_look,) = [lk for lk in _ledger(gh)["looks"] if lk["attempt"] == "44.1"]
    assert beta_look["skill"] == "kit/beta" and not beta_look["closed"] and beta_look["t"] < 1

    # 3. The workflow runs again on the (bot's commit of the) undecided head: the new runs add
    # to the old ones (beta's extra head runs only: its base runs are at max_runs already), the
    # test continues from the last look's alpha, and the footer counts the workflow runs.
    _next_workflow_run(pr, "45")
    del pr.env["INPUT_MAX_COST_USD"]
    before = len(sessions(srv))
    code, out, err = run_action(pr)
    assert code == 0, out + err
    added = sessions(srv)[before:]
    assert len(added) == 4 and all("beta" in p or "weather" in p for p in added), added
    ledger = _ledger(gh)
    (last,) = [lk for lk in ledger["looks"] if lk["attempt"] == "45.1"]
    assert last["t_prev"] == beta_look["t"] and last["t"] == 1.0 and last["closed"]
    head_runs = [
        r
        for r in ledger["runs"]
        if r["side"] == "head" and r["content"] == last["head"] and r["block"] >= 0
    ]
    assert {r["attempt"] for r in head_runs} == {"45.1"} and sum(r["runs"] for r in head_runs) == 4
    # The looks rest on one head sweep, 44's (kept in the ledger: issue 38).
    assert last["sweep"] == beta_look["sweep"] == "44.1"
    assert {
        r["attempt"] for r in ledger["runs"] if r["block"] == -1 and r["content"] == last["head"]
    } == {"44.1"}
    (comment,) = gh.comments_on(REPO, 1)
    assert "verdict from runs over 3 workflow runs" in comment.body
    assert "4 agent sessions" in comment.body


def _estimated_per_session(summary: str) -> float:
    """The job's dry-run estimate per planned session, from the summary's cost line."""
    import re

    m = re.search(
        r"Estimated before the run: (\d+)(?:–\d+)? agent sessions, about \$([0-9.]+)", summary
    )
    assert m is not None, summary
    return float(m.group(2)) / int(m.group(1))


# ------------------------------------------------------------------ issue 39: the labelled fork flow


def test_the_labelled_fork_flow_comments_and_a_relabel_starts_no_session(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    """examples/workflows/fork-safe.yml's `evaluate-fork` job: pull_request_target on a fork's
    labelled head, `contents: read`, `commit: false`. It comments (its token may), keeps its
    ledger and results in that comment, and a relabel of the same head starts no session."""
    srv = model_server(POLICY)
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        fork=True,
        event="pull_request_target",
        base_url=srv.base_url,
        contents="read",
        inputs={"allow_fork_target": "true", "commit": "false", "base": "rerun"},
    )
    base = gh.ref_sha(REPO, "heads/main")
    assert base is not None

    def labelled_run(run_id: str) -> tuple[int, str, str]:
        # The job checks out the labelled head SHA (fresh each run); GITHUB_SHA is the base's tip.
        git(pr.workspace, "fetch", "-q", str(gh.git_dir("stranger/skills")), pr.head_sha)
        git(pr.workspace, "checkout", "-q", "-f", "--detach", pr.head_sha)
        git(pr.workspace, "clean", "-q", "-fdx")
        pr.env.update(
            {"GITHUB_SHA": base, "GITHUB_REF": "refs/heads/main", "GITHUB_RUN_ID": run_id}
        )
        return run_action(pr)

    code, out, err = labelled_run("42")
    assert code == 0, out + err
    first = sessions(srv)
    assert first and any("beta" in p for p in first)
    (comment,) = gh.comments_on(REPO, 1)
    assert comment.body.startswith(COMMENT_MARKER) and "beta" in comment.body
    assert "<!-- evolve-action:state v1 " in comment.body
    carried = parse_state(comment.body)  # the base reruns' ledger and the head's results
    assert carried.results and any(r.side == "base" for r in carried.ledger.runs)
    assert "<!-- evolve-action:state" not in pr.summary.read_text()
    # `contents: read`: no git write is even attempted (no results commit, no ledger ref).
    assert gh.calls("POST", r".*/git/.*") == [] and gh.calls("PATCH", r".*/git/.*") == []
    assert gh.ref_sha(REPO, "evolve-action/ledger/pr-1") is None

    # The label is applied again on the same head: a new workflow run, a fresh checkout.
    before, writes_before = len(srv.requests), len(writes(gh))
    code, out, err = labelled_run("43")
    assert code == 0, out + err
    assert srv.requests[before:] == [], "a relabel of the same content started sessions"
    assert len(writes(gh)) == writes_before  # the comment is left as it is
    assert gh.comments_on(REPO, 1)[0].body == comment.body
    assert "restored 1 results file(s)" in out


def test_a_fork_pull_request_run_says_why_it_did_not_comment(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    """A `pull_request` run from a fork has a read-only token: no comment is attempted (the fake
    would refuse it, as GitHub does), and the summary says why."""
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        fork=True,
        inputs={"anthropic_api_key": "", "fail_on": "never"},
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert gh.calls("POST", r".*/comments") == []
    assert "read-only token" in pr.summary.read_text()


@pytest.mark.parametrize(
    ("base_moved", "shallow"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_results_measured_on_a_merge_are_committed_only_when_it_matches_the_head(
    tmp_path: Path, gh: FakeGitHub, base_moved: bool, shallow: bool
) -> None:
    """The default `pull_request` checkout is GitHub's test merge. When the base changed a touched
    skill's files since the PR branched, what was measured is not the head: one notice, no
    commit. When the merge holds the head's content for them, the results are committed.
    `shallow`: actions/checkout's default depth 1, whose clone lacks the head commit (the API's
    tree of the head is compared instead)."""
    later = {
        "evals/beta/triggers.json": triggers_doc(
            [("Summarise the beta spreadsheet please", True), ("Plan my holiday", False)]
        )
    }
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        base_after=later if base_moved else {"README.md": "# kit, the base moved on\n"},
        inputs={"anthropic_api_key": "", "fail_on": "never"},
    )
    if shallow:  # only the merge commit, as `fetch-depth: 1` of refs/pull/N/merge leaves it
        merge = git(pr.workspace, "rev-parse", "HEAD")
        shutil.move(pr.workspace, tmp_path / "full")
        subprocess.run(["git", "init", "-q", str(pr.workspace)], check=True)
        git(pr.workspace, "fetch", "-q", "--depth", "1", f"file://{tmp_path / 'full'}", merge)
        git(pr.workspace, "checkout", "-q", "--detach", merge)
        proc = subprocess.run(["git", "-C", str(pr.workspace), "cat-file", "-e", pr.head_sha])
        assert proc.returncode != 0
    code, out, err = run_action(pr)
    assert code == 0, out + err
    notice = [line for line in out.splitlines() if "measured on GitHub's test merge" in line]
    if base_moved:
        assert gh.ref_sha(REPO, "heads/feature") == pr.head_sha
        assert gh.calls("POST", r".*/git/commits") == []
        assert len(notice) == 1 and "evals/beta/triggers.json" in notice[0]
        assert notice[0].startswith("::notice")
    else:
        assert notice == []
        assert gh.ref_sha(REPO, "heads/feature") != pr.head_sha  # committed on the head


# ------------------------------------------------------------------ issue 39: the ledger ref's life


def test_a_closed_pull_request_deletes_its_ledger_ref(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = make_pr(tmp_path, gh, change=beta_edited())
    kept = gh.commit(REPO, {"ledger.json": '{"version": 1, "runs": [], "looks": []}\n'})
    git(gh.git_dir(REPO), "update-ref", "refs/evolve-action/ledger/pr-1", kept)
    event = json.loads(Path(pr.env["GITHUB_EVENT_PATH"]).read_text())
    event["action"] = "closed"
    event["pull_request"]["state"] = "closed"
    Path(pr.env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert gh.ref_sha(REPO, "evolve-action/ledger/pr-1") is None
    assert gh.ref_sha(REPO, "heads/feature") == pr.head_sha  # the branch is never touched
    assert "deleted the PR's ledger ref refs/evolve-action/ledger/pr-1" in pr.summary.read_text()
    assert [(r.method, r.path) for r in gh.requests if r.method != "GET"] == [
        ("DELETE", "/repos/octo/skills/git/refs/evolve-action/ledger/pr-1")
    ]


def test_commit_false_never_writes_the_ledger(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    """docs/action.md: with `commit: false` the ledger is read, not written (a notice says so),
    even where the token could write it."""
    srv = model_server(POLICY)
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        base_url=srv.base_url,
        inputs={"commit": "false", "base": "rerun", "fail_on": "never"},
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert sessions(srv)  # base reruns ran: there were runs to record
    assert gh.calls("POST", r".*/git/.*") == [] and gh.calls("PATCH", r".*/git/.*") == []
    assert gh.ref_sha(REPO, "evolve-action/ledger/pr-1") is None
    assert "were not added to the ledger" in pr.summary.read_text()


# ------------------------------------------------------------------ issue 39: tokens known up front

READ_ONLY_WORKFLOW = """\
on: pull_request
permissions: {}
jobs:
  evaluate:
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: read
    steps:
      - uses: OWNER/evolve-action@v1
"""


@pytest.mark.parametrize("how", ["job permissions", "dependabot"])
def test_a_read_only_token_on_a_same_repository_pr_is_known_before_any_write(
    tmp_path: Path, gh: FakeGitHub, how: str
) -> None:
    """An organisation's read-only default (the job's `permissions:`) or a Dependabot PR: the
    fake refuses every write, as GitHub does; the job tries none and says so once."""
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        inputs={"anthropic_api_key": "", "fail_on": "never"},
        extra_base={".github/workflows/pr.yml": READ_ONLY_WORKFLOW}
        if how != "dependabot"
        else None,
    )
    gh.tokens[TOKEN].read_only = True
    if how == "dependabot":
        pr.env["GITHUB_ACTOR"] = "dependabot[bot]"
    else:
        pr.env["GITHUB_WORKFLOW_REF"] = f"{REPO}/.github/workflows/pr.yml@refs/pull/1/merge"
        pr.env["GITHUB_JOB"] = "evaluate"
    code, out, err = run_action(pr)
    assert code == 0, out + err
    assert writes(gh) == []  # not one refused call
    assert [r for r in gh.requests if r.status == 403] == []
    notices = [line for line in out.splitlines() if "the token is read-only here" in line]
    assert len(notices) == 1, out
    assert "not committed" in notices[0] and "no PR comment" in notices[0]


def test_annotations_stop_at_githubs_ten_and_say_how_many_more(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    """GitHub shows at most 10 error and 10 warning annotations a step: the tenth says how many
    more there are, rather than the rest being cut silently."""
    broken = {f"skills/broken{i:02d}/SKILL.md": "no frontmatter here\n" for i in range(14)}
    pr = make_pr(
        tmp_path,
        gh,
        change=beta_edited(),
        extra_base=broken,
        inputs={"anthropic_api_key": "", "fail_on": "never"},
    )
    code, out, err = run_action(pr)
    assert code == 0, out + err
    for level in ("error", "warning", "notice"):
        lines = [line for line in out.splitlines() if line.startswith(f"::{level}")]
        assert len(lines) <= 10, (level, lines)
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(errors) == 10 and "more: see `run checks`" in errors[-1], errors


@pytest.mark.parametrize(("event", "code"), [("merge_group", 1), ("issue_comment", 0)])
def test_a_skipped_run_is_never_read_as_a_pass_by_a_merge_queue(
    tmp_path: Path, gh: FakeGitHub, event: str, code: int
) -> None:
    pr = make_pr(tmp_path, gh, change=beta_edited(), event=event)
    got, out, err = run_action(pr)
    assert got == code, out + err
    if event == "merge_group":
        assert "::error" in out and "mode: gate" in out
        assert pr.outputs()["status"] == "errored"
    else:
        assert "::warning" in out and pr.outputs()["status"] == "skipped"
    assert writes(gh) == []
