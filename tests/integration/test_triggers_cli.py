"""`run triggers` end to end: the real Claude Code CLI against the scripted model server.

One fixture plugin (`docs-kit`) with three skills: `pdf-tools` (under test), its sibling `pdf-tools-extra`
(whose name contains the skill's name) and `csv-clean`. The policy routes by the skill listing Claude Code
sends, plus scripted cases: a `Read` of another file before the `Skill` call, a namespaced
`docs-kit:pdf-tools` call, a direct `Read` of SKILL.md, a query whose first session gets only 529s (retried
as a new session), one whose first stream is cut (retried by the CLI), and one whose first run gets a
non-retryable 400 (recorded as an errored run, verdict from the completed runs). Every assertion reads what the CLI wrote or what the
server logged.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import (
    MODEL,
    csv_trigger_repo,
    kill_live_agents,
    scripted_env,
    skill_md,
    triggers_doc,
    write,
)

from evolve_action import encoding
from evolve_action import results as res
from evolve_action.cli import main
from evolve_action.harness import (
    SKILLS_DIR,
    SessionSpec,
    create_trigger_workspace,
    remove_workspace,
    run_session,
)
from evolve_action.specs import schema_validator

pytestmark = pytest.mark.integration


POLICY = """
rules:
  - name: read-first
    when: {prompt: "^read-first"}
    steps:
      - {tool: Read, input: {file_path: "README.md"}}
      - {tool: Skill, input: {skill: pdf-tools}}
      - "Done."
  - name: namespaced
    when: {prompt: "^namespaced"}
    route: {threshold: 0.1, namespace: docs-kit}
  - name: peek
    when: {prompt: "^peek"}
    route: {threshold: 0.1, read_only: true}
  - name: flaky
    when: {prompt: "^flaky", session: [1]}
    fault: {status: 529}
  - name: dropped
    when: {prompt: "^dropped"}
    fault: {disconnect: true, times: 1}
    route: {threshold: 0.1}
  - name: broken
    when: {prompt: "^broken", session: [1]}
    fault: {status: 400}
  - name: route
    route: {threshold: 0.3}
"""

PDF_QUERIES: list[tuple[str, bool]] = [
    ("Please merge these two PDF forms into one file", True),
    ("Stamp a watermark onto every PDF page", False),
    ("read-first: look around, then fill the PDF form", True),
    ("namespaced: merge the PDF forms please", True),
    ("peek: how do you fill PDF forms?", True),
    ("flaky: merge two PDF documents", True),
    ("dropped: merge PDF forms into one", True),
    ("broken: merge the PDF forms", True),
    ("What is the capital of France?", True),
]
CSV_QUERIES: list[tuple[str, bool]] = [
    ("Tidy up this messy CSV spreadsheet", True),
    ("Merge these PDF forms", False),
]


def make_repo(root: Path) -> Path:
    write(root, ".claude-plugin/plugin.json", '{"name": "docs-kit", "version": "1.0.0"}\n')
    write(
        root,
        "skills/pdf-tools/SKILL.md",
        skill_md(
            "pdf-tools",
            "Fill, merge and split PDF forms. Use when the user asks to merge or fill PDF files.",
        ),
    )
    write(
        root,
        "skills/pdf-tools-extra/SKILL.md",
        skill_md(
            "pdf-tools-extra",
            "Stamp watermarks onto PDF pages. Use when the user asks for a watermark stamp.",
        ),
    )
    write(
        root,
        "skills/csv-clean/SKILL.md",
        skill_md(
            "csv-clean",
            "Clean and tidy CSV spreadsheet data. Use when the user asks to tidy CSV spreadsheets.",
        ),
    )
    write(root, "evals/pdf-tools/triggers.json", triggers_doc(PDF_QUERIES))
    write(root, "evals/csv-clean/triggers.json", triggers_doc(CSV_QUERIES))
    return root


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def prompts(requests: list[dict[str, Any]]) -> Counter[str]:
    """First-turn `/v1/messages` requests per prompt (one per session attempt, plus CLI retries)."""
    out: Counter[str] = Counter()
    for r in requests:
        msgs = r.get("body", {}).get("messages", [])
        if r.get("path") != "/v1/messages" or len(msgs) != 1:
            continue
        content = msgs[0].get("content")
        texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
        for q, _ in (
            PDF_QUERIES + CSV_QUERIES + [("Stamp a watermark onto every PDF page, please", True)]
        ):
            if any(t.strip() == q for t in texts):
                out[q] += 1
    return out


def entry_of(root: Path, skill: str) -> res.TriggersEntry:
    loaded = res.load_results(root / "evals" / skill)
    assert loaded.file is not None
    entry = loaded.file.models[MODEL].triggers
    assert entry is not None
    return entry


def check_file(root: Path, skill: str) -> None:
    """The results file validates against schema 5 and re-encodes byte-identically."""
    path = root / "evals" / skill / "results.json"
    data = path.read_bytes()
    doc = json.loads(data)
    errors = sorted(schema_validator("results").iter_errors(doc), key=str)
    assert not errors, errors[0]
    loaded = res.load_results(path.parent, plugin="docs-kit", skill=skill)
    assert loaded.file is not None
    again = encoding.encode_document(res.to_document(loaded.file), "json", encoding.RESULTS_COMMENT)
    assert again.encode("utf-8") == data


@pytest.fixture
def setup(tmp_path: Path, model_server: Any, claude_cli: Path) -> tuple[Path, Any, dict[str, str]]:
    root = make_repo(tmp_path / "repo")
    srv = model_server(POLICY)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
        "GITHUB_TOKEN": "ghp_must_not_leak",
        "INPUT_ANTHROPIC_API_KEY": "must-not-leak",
    }
    return root, srv, env


def test_triggers_end_to_end_and_partial_reruns(setup: tuple[Path, Any, dict[str, str]]) -> None:
    root, srv, env = setup
    base = ["run", "triggers", "--root", str(root), "--model", "claude-sonnet-4-6", "--jobs", "2"]

    code, out, err = run_cli(base, env, root)
    assert code == 0, err
    assert "parallelism: 2 concurrent agent runs" in out
    assert "WARN: triggers: some queries failed (pass --strict to exit 1)" in err

    pdf = {r.query: (r.hits, r.runs, r.passed) for r in entry_of(root, "pdf-tools").results}
    assert pdf == {
        "Please merge these two PDF forms into one file": (2, 2, True),  # early stop: 2 of 3 decide
        "Stamp a watermark onto every PDF page": (0, 2, True),  # the sibling skill is not a hit
        "read-first: look around, then fill the PDF form": (2, 2, True),  # Skill after a Read
        "namespaced: merge the PDF forms please": (2, 2, True),  # docs-kit:pdf-tools
        "peek: how do you fill PDF forms?": (2, 2, True),  # Read of SKILL.md
        "flaky: merge two PDF documents": (2, 2, True),  # first session 529s: retried
        "dropped: merge PDF forms into one": (2, 2, True),  # stream cut: the CLI retried
        "broken: merge the PDF forms": (1, 1, True),  # one run errored (400); verdict from the rest
        "What is the capital of France?": (0, 2, False),
    }
    entry = entry_of(root, "pdf-tools")
    assert entry.summary.passed == 8 and entry.summary.failed == 1 and entry.summary.total == 9
    assert entry.summary.pass_rate == 0.888889
    assert entry.header.runs_per_query == 3 and entry.header.harness == "claude"
    assert {r.query: (r.hits, r.runs, r.passed) for r in entry_of(root, "csv-clean").results} == {
        "Tidy up this messy CSV spreadsheet": (2, 2, True),
        "Merge these PDF forms": (0, 2, True),
    }
    assert "errored=1" in out and "API error 400" in out
    # Estimates came from the server's count_tokens and are cached in evolve's format.
    assert all(r.estimate and r.estimate.input_tokens > 0 for r in entry.results)
    assert entry.summary.estimate is not None and entry.summary.estimate.input_cost_usd
    cache = json.loads((root.parent / "cache" / "evolve" / "token-counts.json").read_text())
    assert len(cache) == len(PDF_QUERIES) + len(CSV_QUERIES)
    for skill in ("pdf-tools", "csv-clean"):
        check_file(root, skill)

    log = srv.requests
    statuses = Counter(
        (r.get("rule"), r.get("status")) for r in log if r.get("path") == "/v1/messages"
    )
    assert statuses[("flaky", 529)] >= 1 and statuses[("broken", 400)] >= 1
    sessions = prompts(log)
    assert sessions["Please merge these two PDF forms into one file"] == 2
    assert sessions["flaky: merge two PDF documents"] >= 3  # a third session replaced the 529 one

    # Same command with --new / --modified: nothing to do, zero agent sessions.
    before = len(srv.messages())
    for flag in ("--new", "--modified"):
        code, out, err = run_cli([*base, flag], env, root)
        assert code == 0, err
        assert "results complete" in out
    assert len(srv.messages()) == before

    # Editing one skill's description reruns exactly that skill's queries.
    write(
        root,
        "skills/csv-clean/SKILL.md",
        skill_md(
            "csv-clean",
            "Clean, dedupe and tidy CSV spreadsheet data. Use when the user asks to tidy CSV files.",
        ),
    )
    code, out, _ = run_cli([*base, "--modified", "--dry-run", "--json"], env, root)
    planned = [json.loads(line) for line in out.splitlines()]
    assert {(p["skill"], p["case"], p["reason"]) for p in planned} == {
        ("csv-clean", q, "modified") for q, _ in CSV_QUERIES
    }
    srv.clear()
    code, out, err = run_cli([*base, "--modified"], env, root)
    assert code == 0, err
    assert set(prompts(srv.requests)) == {q for q, _ in CSV_QUERIES}

    # Editing one query reruns exactly that query: flipping should_trigger is a modification...
    edited = [(q, (not s) if q.startswith("Stamp") else s) for q, s in PDF_QUERIES]
    write(root, "evals/pdf-tools/triggers.json", triggers_doc(edited))
    srv.clear()
    code, out, err = run_cli([*base, "--modified"], env, root)
    assert set(prompts(srv.requests)) == {"Stamp a watermark onto every PDF page"}
    stamp = next(r for r in entry_of(root, "pdf-tools").results if r.query.startswith("Stamp"))
    assert (stamp.should_trigger, stamp.passed) == (True, False)
    # ...and rewording one makes it a new case, which --new runs (the old wording is pruned).
    reworded = [(q + ", please" if q.startswith("Stamp") else q, s) for q, s in edited]
    write(root, "evals/pdf-tools/triggers.json", triggers_doc(reworded))
    srv.clear()
    code, out, err = run_cli([*base, "--new", "--modified"], env, root)
    assert set(prompts(srv.requests)) == {"Stamp a watermark onto every PDF page, please"}
    queries = [r.query for r in entry_of(root, "pdf-tools").results]
    assert queries == [q for q, _ in reworded]
    check_file(root, "pdf-tools")


def test_agent_environment_is_allowlisted(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    """The SDK merges os.environ into the child: prove the agent's Bash sees no token nor INPUT_*."""
    # Written inside the workspace (the cwd): under bubblewrap nothing else is writable.
    srv = model_server(
        {
            "rules": [
                {
                    "name": "dump",
                    "steps": [{"tool": "Bash", "input": {"command": "env > env.txt"}}, "done"],
                }
            ]
        }
    )
    skills = tmp_path / "skills"
    write(skills, "a/SKILL.md", skill_md("a", "A skill. Use when testing."))
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    ws = create_trigger_workspace(skills, environ=environ)
    try:
        assert (ws / SKILLS_DIR / "a").is_symlink()
        assert (ws / ".git").is_dir()
        leaks = {"GITHUB_TOKEN": "ghp_leak", "INPUT_SECRET": "leak", "GH_TOKEN": "leak2"}
        with pytest.MonkeyPatch.context() as mp:
            for k, v in leaks.items():
                mp.setenv(k, v)  # in the parent process, where the SDK would pick them up
            t = asyncio.run(
                run_session(
                    SessionSpec(
                        prompt="dump the env", workspace=ws, model="claude-sonnet-4-6", max_turns=3
                    ),
                    environ={**environ, **leaks},
                )
            )
        assert t.ok, t.error_message
        assert [c.name for c in t.tool_calls] == ["Bash"]
        dump = (ws / "env.txt").read_text()
        names = {line.split("=", 1)[0] for line in dump.splitlines() if "=" in line}
        assert not names & set(leaks)
        assert not any(n.startswith("INPUT_") for n in names)
        assert "ANTHROPIC_BASE_URL" in names and "CLAUDE_CONFIG_DIR" in names
    finally:
        remove_workspace(ws)
    assert not ws.exists()
    assert (skills / "a" / "SKILL.md").is_file()  # removing the workspace never follows skill links


def test_timeout_is_an_error_not_a_miss(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server({"rules": [{"name": "slow", "delay_ms": 8000, "text": "late"}]})
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "k",
    }
    t = asyncio.run(
        run_session(
            SessionSpec(prompt="hi", workspace=ws, model="claude-sonnet-4-6", timeout_seconds=3),
            environ=env,
        )
    )
    assert t.error is not None and t.error.value == "timeout"
    assert t.duration_seconds >= 3
    shutil.rmtree(ws)


def test_kill_9_then_new_completes_the_rest_without_duplicates(
    tmp_path: Path, model_server: Any, claude_cli: Path, agent_scratch: Path
) -> None:
    """A run killed with SIGKILL keeps every finished query; `--new` runs exactly the others."""
    import signal
    import subprocess
    import sys
    import time

    queries = [(f"Tidy up CSV spreadsheet number {i}", True) for i in range(1, 5)]
    root = tmp_path / "repo"
    csv_trigger_repo(root, queries)
    srv = model_server(
        {"latency_ms": 400, "rules": [{"name": "route", "route": {"threshold": 0.2}}]}
    )
    env = scripted_env(tmp_path, srv.base_url)
    env["TMPDIR"] = str(agent_scratch)  # its agents are this run's, not another test run's
    args = [
        "run",
        "triggers",
        "--root",
        str(root),
        "--model",
        "claude-sonnet-4-6",
        "--jobs",
        "1",
        "--runs",
        "1",
    ]
    results = root / "evals" / "csv-clean" / "results.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def stored() -> list[str]:
        if not results.exists():
            return []
        doc = json.loads(results.read_text())
        return [r["query"] for r in doc["models"][MODEL]["triggers"]["results"]]

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            if len(stored()) >= 2:
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
        # The killed run's agent runs in its own session and survives it: kill it and wait until
        # it is gone, so it cannot talk to the server during the `--new` run below.
        kill_live_agents(agent_scratch)
    done = stored()  # re-read after the kill: a query may have finished in between
    assert 2 <= len(done) < len(queries), "the run finished before it could be killed"
    srv.clear()
    code, _, err = run_cli([*args, "--new"], env, root)
    assert code == 0, err
    rerun = {
        q
        for q, _ in queries
        if any(q in json.dumps(r.get("body", {}).get("messages", [])[:1]) for r in srv.messages())
    }
    assert rerun == {q for q, _ in queries} - set(done)
    final = entry_of(root, "csv-clean")
    assert [r.query for r in final.results] == [q for q, _ in queries]
    assert all(r.runs == 1 and r.passed for r in final.results)


def corpus_keys(corpus: Path) -> set[str]:
    keys: set[str] = set()
    for path in corpus.glob("plugins/*/evals/*/results.json"):
        keys |= set(json.loads(path.read_text()).get("models", {}))
    return keys


def test_corpus_modified_dry_run_plans_only_stale_entries(corpus: Path, tmp_path: Path) -> None:
    """`--modified --dry-run --json` on the real corpus plans exactly the results whose hashes moved."""
    from evolve_action import plan as fingerprint

    code, out, err = run_cli(
        ["run", "triggers", "--modified", "--dry-run", "--json", "--root", str(corpus)],
        {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)},
        tmp_path,
    )
    assert code == 0, err
    planned = {(p["skill"], p["model"], p["case"]) for p in map(json.loads, out.splitlines())}
    assert all(json.loads(line)["reason"] == "modified" for line in out.splitlines())
    # The corpus config selects anthropic, openai and xai; only Claude Code is available here.
    models = {key for key in corpus_keys(corpus) if key.startswith("anthropic/")}
    expected = set()
    for results_path in sorted(corpus.glob("plugins/*/evals/*/results.json")):
        skill_dir = results_path.parent
        trig = skill_dir / "triggers.json"
        if not trig.exists():
            continue
        spec = {
            t["query"]: t.get("should_trigger", False)
            for t in json.loads(trig.read_text())["triggers"]
        }
        skill_md_path = skill_dir.parent.parent / "skills" / skill_dir.name / "SKILL.md"
        content = fingerprint.trigger_content_hash(skill_md_path.read_bytes())
        for key, entry in json.loads(results_path.read_text()).get("models", {}).items():
            t = entry.get("triggers")
            if key not in models or not t:
                continue
            for r in t["results"]:
                if r["query"] not in spec or not r.get("spec_hash"):
                    continue
                fresh = fingerprint.trigger_spec_hash(r["query"], spec[r["query"]])
                stale_content = t.get("content_hash") and t["content_hash"] != content
                if r["spec_hash"] != fresh or stale_content:
                    expected.add((skill_dir.name, key, r["query"]))
    assert planned == expected
    assert len(planned) > 0
