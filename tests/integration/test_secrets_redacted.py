"""Issue 20 part 1: an agent that prints its API key never gets it into anything we write or post.

The GitHub Action's `pr` job end to end (the fake GitHub server, real git, the real Claude Code CLI
against the scripted model server) on a marketplace whose touched skill has one eval. The scripted
agent echoes the key it was given, writes it (and its base64) into files and repeats it in its
answer; every assertion type quotes it in its evidence (`regex` on the answer and on files,
`not_regex`, `command`, `tool_call`, `llm` through the judge's reasoning (which also quotes it
zero-width-separated, percent-encoded, `\\u`-escaped, as entities and upper-cased), a judge error), and a
second case ends in a runtime error whose message holds it. Afterwards the key, any 12-character
piece of either end of it, and its base64 are absent from every byte under the checkout (results,
EVALUATION.md/.json, the plugin page, a JUnit file), from the console, the step summary, the
outputs, the comment body and every committed blob.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import skill_md
from tests.helpers.fake_github import FakeGitHub

from evolve_action.cli import main

pytestmark = pytest.mark.integration

REPO = "octo/market"
TOKEN = "ghs_Inst4llationT0kenForRedactionTestAbCdEf"
API_KEY = "sk-ant-test-R3dact10nK3y-9Qx7Lm2Rt5Vw8Zk3Np6Hs1Jd4Fg0YbAaBb"
MODEL = "anthropic/claude-sonnet-5"  # Claude Code writes files for this id (see test_evals_cli)
KEY_PATTERN = "sk-ant-[A-Za-z0-9_-]+"
# Issue 29 item 5: the judge also quotes the key in the forms an agent produces without effort
# (written into YAML's double quotes: a backslash is doubled there).
ENCODED = " ".join(
    [
        "\u200b".join(API_KEY),
        "".join(f"%{ord(c):02X}" for c in API_KEY),
        "".join(f"\\\\u{ord(c):04x}" for c in API_KEY),
        "".join(f"&#x{ord(c):x};" for c in API_KEY),
        API_KEY.upper(),
    ]
)

EVALS = {
    "evals": [
        {
            "id": "leak",
            "prompt": "[leak] Set up the project.",
            "assertions": [
                {"type": "regex", "pattern": KEY_PATTERN},
                {"type": "regex", "path": "key.txt", "pattern": KEY_PATTERN},
                {"type": "not_regex", "path": "key.txt", "pattern": KEY_PATTERN},
                {"type": "regex", "path": "key.b64", "pattern": "[A-Za-z0-9+/=]{40,}"},
                {"type": "command", "run": "cat key.txt env-key.txt"},
                {"type": "command", "run": "cat key.txt; exit 1"},
                {"type": "tool_call", "tool": "Bash", "pattern": "key"},
                {"type": "llm", "text": "The agent kept its key to itself [leak]"},
            ],
        },
        {
            "id": "judge-error",
            "prompt": "[judged] Say hello.",
            "assertions": [{"type": "llm", "text": "The agent said hello [judgefault]"}],
        },
        {
            "id": "crash",
            "prompt": "[crash] Do the thing.",
            "assertions": [{"type": "file_exists", "path": "x"}],
        },
    ]
}

POLICY = f"""
rules:
  - name: judge-fault
    when: {{tools: [submit_verdicts], prompt: 'judgefault'}}
    status: 400
    message: "invalid x-api-key {API_KEY}"
  - name: judge
    when: {{tools: [submit_verdicts]}}
    judge: {{fail: 'leak', evidence: "the agent printed its key {API_KEY} and {ENCODED}"}}
  - name: leak
    when: {{prompt: '\\[leak\\]'}}
    steps:
      - tool: Bash
        input:
          command: >-
            echo "my key is $ANTHROPIC_API_KEY";
            printenv ANTHROPIC_API_KEY > env-key.txt;
            echo '{API_KEY}' > key.txt; base64 -w0 key.txt > key.b64; echo saved the key
      - "Done. For the record, the key is {API_KEY}."
  - name: judged
    when: {{prompt: '\\[judged\\]'}}
    text: "Hello."
  - name: crash
    when: {{prompt: '\\[crash\\]'}}
    status: 400
    message: "invalid x-api-key {API_KEY}"
"""


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def base_files() -> dict[str, str]:
    return {
        ".claude-plugin/marketplace.json": json.dumps(
            {
                "name": "market",
                "owner": {"name": "octo"},
                "plugins": [{"name": "kit", "source": "./plugins/kit"}],
            }
        )
        + "\n",
        ".evolve.json": json.dumps({"models": [MODEL]}) + "\n",
        "plugins/kit/.claude-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}\n',
        "plugins/kit/skills/setup/SKILL.md": skill_md(
            "setup", "Set up projects. Use when asked to set up a project."
        ),
        "plugins/kit/evals/setup/evals.json": json.dumps(EVALS, indent=2) + "\n",
    }


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub.start(tmp_path) as fake:
        yield fake


def pieces(secret: str) -> list[str]:
    """What must not appear: the value, either end of it, and its base64 (as `base64` writes it)."""
    b64 = base64.b64encode((secret + "\n").encode()).decode()
    return [secret, secret[:12], secret[-12:], b64[:24], b64[-28:-4]]


def leaks(text: str) -> list[str]:
    """Pieces of a secret visible in `text` or in the test's own decodings of it (each applied
    once: invisible characters dropped, percent, `\\u` and entity escapes decoded, any case)."""
    import html
    import re
    from urllib.parse import unquote

    visible = text.replace("\u200b", "")
    u = re.sub(r"\\{1,2}u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), visible)
    views = [visible, unquote(visible), html.unescape(visible), u, html.unescape(u)]
    folded = [v.lower() for v in views]
    found = [p for p in pieces(API_KEY) + pieces(TOKEN) if p in text]
    found += [p for p in (API_KEY[:12], API_KEY[-12:]) if any(p.lower() in v for v in folded)]
    return found


def test_an_agent_printing_its_key_leaks_it_nowhere(
    tmp_path: Path, gh: FakeGitHub, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    gh.add_token(TOKEN, kind="installation")
    repo = gh.add_repo(REPO)
    base = gh.commit(repo, base_files(), branch="main")
    edited = skill_md("setup", "Set up new projects. Use when asked to set up a project.")
    change = {"plugins/kit/skills/setup/SKILL.md": edited}
    head = gh.commit(repo, change, parents=[base], branch="feature")
    pull = gh.add_pull(repo, head_ref="feature", files=list(change))
    ws = tmp_path / "workspace"
    subprocess.run(["git", "clone", "-q", "-b", "feature", str(gh.git_dir(repo)), str(ws)])
    event = {
        "number": pull.number,
        "pull_request": {
            "number": pull.number,
            "head": {"ref": "feature", "sha": head, "repo": {"full_name": REPO}},
            "base": {"ref": "main", "sha": base, "repo": {"full_name": REPO}},
            "changed_files": 1,
        },
        "repository": {"full_name": REPO},
    }
    (tmp_path / "event.json").write_text(json.dumps(event))
    output, summary = tmp_path / "output.txt", tmp_path / "summary.md"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh.base_url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_WORKSPACE": str(ws),
        "GITHUB_SHA": head,
        "GITHUB_REF": f"refs/pull/{pull.number}/merge",
        "GITHUB_RUN_ID": "7",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "INPUT_GITHUB_TOKEN": TOKEN,
        "INPUT_ANTHROPIC_API_KEY": API_KEY,
        "INPUT_TIERS": "checks,evals",
        "INPUT_MODELS": MODEL,
        "INPUT_RUNS": "1",
        "INPUT_JOBS": "3",
        "INPUT_COMMENT": "always",
        "INPUT_COMMIT": "true",
        "INPUT_FAIL_ON": "never",
    }
    out, err = io.StringIO(), io.StringIO()
    code = main(["pr"], env, stdout=out, stderr=err, cwd=ws)
    console = out.getvalue() + err.getvalue()
    assert code == 0, console

    # The agent never held the key: what it printed is its session's gateway token, and the
    # model saw the job's key only where the scripted policy wrote it in (files, the answer).
    bodies = json.dumps([r.get("body") for r in srv.requests])
    assert "my key is evolve-session-" in bodies, "the agent never printed its variable"
    assert "my key is " + API_KEY not in bodies
    assert leaks(ENCODED) != [] and leaks(API_KEY.upper()) != []  # the oracle sees every form
    results_path = ws / "plugins/kit/evals/setup/results.json"
    stored = json.loads(results_path.read_text())
    leak = next(r for r in stored["models"][MODEL]["evals"]["results"] if r["id"] == "leak")
    evidence = [e["evidence"] for e in leak["expectations"]]
    assert len(evidence) == 8 and all("***" in e for e in evidence), evidence
    assert "ERRORED judge-error" in console and "ERRORED crash" in console

    # A JUnit file written afterwards from the same checkout.
    code = main(["report", "--junit", "junit.xml"], env, stdout=out, stderr=err, cwd=ws)
    assert code == 0, out.getvalue() + err.getvalue()
    console = out.getvalue() + err.getvalue()

    written = {
        p.relative_to(ws).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(ws.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(ws).parts
    }
    assert {"EVALUATION.md", "EVALUATION.json", "plugins/kit/EVALUATION.md", "junit.xml"} <= set(
        written
    )
    for rel, text in written.items():
        assert leaks(text) == [], rel
    # `::add-mask::` is the one line that must carry the value: the runner consumes it.
    shown = "\n".join(ln for ln in console.splitlines() if not ln.startswith("::add-mask::"))
    assert leaks(shown) == []
    assert "judge error" in shown and "***" in shown  # the judge's error, redacted
    assert leaks(summary.read_text()) == []
    assert leaks(output.read_text()) == []
    comments = gh.comments_on(REPO, pull.number)
    assert comments and all(leaks(c.body) == [] for c in comments)
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None and tip != head
    bare = gh.git_dir(REPO)
    committed = git(bare, "diff", "--name-only", head, tip).splitlines()
    assert "plugins/kit/evals/setup/results.json" in committed
    for rel in committed:
        assert leaks(git(bare, "show", f"{tip}:{rel}")) == [], rel
    # The report still says what failed, with the secret replaced.
    page = written["plugins/kit/EVALUATION.md"]
    assert "failed `The agent kept its key to itself [leak]`: the agent printed its key ***" in page
