"""Confinement: links out of the repository are findings and never reach a workspace; assertion paths
stay inside the workspace; the agent and `command` assertions cannot write outside their workspace
and cannot obtain what they were not given.

The agent tests run the real Claude Code CLI (scripted by the model server): one told to write into
the repository and `$HOME`, and one that tries every way to a secret (`/proc/*/environ`, a root-only
socket named by `DOCKER_HOST`, the checkout's `.git/config` with an `http.extraheader` token, the
event file, the runner's command files, `$HOME`) and prints what it finds, under bubblewrap, under
bubblewrap as an unprivileged user, and as that user without bubblewrap. Tests that need
bubblewrap or root skip, saying so, where they cannot run.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import skill_md, write
from tests.helpers.secret_socket import SecretSocket

from evolve_action import grading, specs
from evolve_action import harness as sandbox
from evolve_action import harness as wsmod
from evolve_action.cli import main
from evolve_action.errors import SpecError
from evolve_action.evals import stage_workspace


class _A:
    """A minimal assertion for `grade_deterministic`."""

    def __init__(self, type_: str, **kw: Any) -> None:
        self.type = type_
        self.path = kw.get("path", "")
        self.pattern = kw.get("pattern", "")
        self.run = kw.get("run", "")
        self.cwd = kw.get("cwd", "")
        self.tool = ""
        self.requires = ""
        self.expect_exit = None
        self.exit_code = 0
        self.text = ""


def _repo(root: Path, outside: Path) -> Path:
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    (root / "skills/good/host.txt").symlink_to(outside)
    write(root, "skills/good/shared.md", "inside\n")
    (root / "skills/good/inside-link.md").symlink_to(root / "skills/good/shared.md")
    (root / "skills/leak").mkdir(parents=True)
    (root / "skills/leak/SKILL.md").symlink_to(outside)
    evals = {"evals": [{"id": "a", "prompt": "p", "files": ["files/data.txt"], "assertions": []}]}
    write(root, "evals/good/evals.json", json.dumps(evals))
    (root / "evals/good/files").mkdir(parents=True)
    (root / "evals/good/files/data.txt").symlink_to(outside)
    return root


def _outside(tmp_path: Path) -> Path:
    return write(tmp_path, "host/secret.txt", "---\nname: leak\ndescription: HOST SECRET\n---\n")


def test_links_out_of_the_repository_are_check_findings(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", _outside(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", "checks", "--strict", "--root", str(root)],
        {"PATH": "/usr/bin:/bin"},
        stdout=out,
        stderr=err,
    )
    text = out.getvalue() + err.getvalue()
    assert code == 1, text
    for rel in ("skills/leak/SKILL.md", "skills/good/host.txt", "evals/good/files/data.txt"):
        assert f"{rel}: symlink leaves the repository" in text
    assert "inside-link.md" not in text
    assert "HOST SECRET" not in text


def test_workspace_copies_never_follow_links_out_of_the_repository(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", _outside(tmp_path))
    ws = wsmod.create_workspace(prefix="evals.", skills=[root / "skills/good"], environ=os.environ)
    try:
        installed = ws / ".claude/skills/good"
        assert (installed / "SKILL.md").is_file() and (
            installed / "inside-link.md"
        ).read_text() == "inside\n"
        assert not (installed / "host.txt").exists()
    finally:
        wsmod.remove_workspace(ws)
    # A trigger workspace links skills only when nothing in them leaves the repository.
    tws = wsmod.create_trigger_workspace(root / "skills", environ=os.environ)
    try:
        for name in ("good", "leak"):
            assert not (tws / ".claude/skills" / name).is_symlink()
        assert not (tws / ".claude/skills/leak/SKILL.md").exists()
        assert not (tws / ".claude/skills/good/host.txt").exists()
    finally:
        wsmod.remove_workspace(tws)
    # A fixture that leaves the repository stops staging with a clear error.
    spec = specs.load_evals(root / "evals/good/evals.json")
    with pytest.raises(SpecError, match="symlink leaving the repository"):
        stage_workspace(spec.evals[0], skill_dir=root / "skills/good", environ=os.environ)


def test_assertion_paths_resolve_inside_the_workspace_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "ok.txt").write_text("fine\n")
    (ws / "link.txt").symlink_to("/etc/hostname")
    kw: dict[str, Any] = {
        "workspace": ws,
        "final_text": "",
        "tool_calls": [],
        "timeout_seconds": 30,
    }
    kw["environ"] = {"PATH": "/usr/bin:/bin"}
    escape = "../../../../../../etc/hostname"
    for a in (
        _A("regex", path=escape, pattern="."),
        _A("not_regex", path=escape, pattern="zzz"),
        _A("regex", path="link.txt", pattern="."),
        _A("file_exists", path=escape),
        _A("file_absent", path="../ws/../../x"),
        _A("command", run="true", cwd="../.."),
    ):
        verdict = asyncio.run(grading.grade_deterministic(a, **kw))
        assert verdict.passed is False and "outside the workspace" in verdict.evidence, a.__dict__
    good = asyncio.run(
        grading.grade_deterministic(_A("regex", path="ok.txt", pattern="fine"), **kw)
    )
    assert good.passed is True


needs_bwrap = pytest.mark.skipif(
    not sandbox.probe(os.environ).available,
    reason=f"no OS sandbox here: {sandbox.probe(os.environ).reason}",
)


def _is_root() -> bool:
    return os.geteuid() == 0


AGENT = "nobody"
"""The unprivileged user the tests switch to (present on every Debian/Ubuntu system)."""
needs_root = pytest.mark.skipif(
    not _is_root(), reason="switching agents to an unprivileged user needs root"
)


@needs_bwrap
def test_command_assertion_cannot_write_outside_its_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = tmp_path / "outside.txt"
    kw: dict[str, Any] = {
        "workspace": ws,
        "final_text": "",
        "tool_calls": [],
        "timeout_seconds": 30,
    }
    kw["environ"] = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = f"echo in > inside.txt && t=$(mktemp) && echo tmp > $t && echo x > {target}"
    verdict = asyncio.run(grading.grade_deterministic(_A("command", run=run), **kw))
    assert verdict.passed is False and "Read-only file system" in verdict.evidence, verdict
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not target.exists()


POLICY = """
rules:
  - name: escape
    when: {prompt: '\\[escape\\]'}
    steps:
      - {tool: Write, input: {file_path: "{cwd}/inside.txt", content: "inside\\n"}}
      - {tool: Write, input: {file_path: "REPO/pwned-write.txt", content: "pwned\\n"}}
      - {tool: Bash, input: {command: "echo pwned > REPO/pwned-bash.txt; echo pwned > HOME/pwned-home.txt; echo done"}}
      - "Tried."
"""


@needs_bwrap
def test_agent_told_to_write_outside_its_workspace_cannot(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    root = tmp_path / "repo"
    home = tmp_path / "home"
    home.mkdir()
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    evals = {
        "evals": [
            {
                "id": "escape",
                "prompt": "[escape] Write files everywhere.",
                "assertions": [{"type": "file_exists", "path": "inside.txt"}],
            }
        ]
    }
    write(root, "evals/good/evals.json", json.dumps(evals))
    srv = model_server(POLICY.replace("REPO", str(root)).replace("HOME", str(home)))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    args = ["run", "evals", "--root", str(root), "--model", "claude-sonnet-5", "--timeout", "120"]
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=tmp_path)
    assert code in (0, 1), err.getvalue()
    doc = json.loads((root / "evals/good/results.json").read_text())
    row = doc["models"]["anthropic/claude-sonnet-5"]["evals"]["results"][0]
    assert row.get("passed") is True, (
        row.get("expectations"),
        row.get("runtime_error"),
    )  # the agent ran and wrote inside its workspace
    assert not (root / "pwned-write.txt").exists()
    assert not (root / "pwned-bash.txt").exists()
    assert not (home / "pwned-home.txt").exists()
    assert "no OS sandbox" not in err.getvalue()


def test_one_short_line_when_the_agent_runs_unconfined(tmp_path: Path) -> None:
    """Once, short, after the command ran: never on a dry run (no agent ran) nor on a usage
    error; under Actions the annotation is the one line."""
    root = _repo(tmp_path / "repo", _outside(tmp_path))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "EVOLVE_SANDBOX_ENABLED": "false",
        "EVOLVE_AGENT_USER": "root",
    }

    def run(args: list[str], environ: dict[str, str]) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main([*args, "--root", str(root)], environ, stdout=out, stderr=err)
        return code, out.getvalue() + err.getvalue()

    code, text = run(["run", "triggers", "--dry-run"], env)
    assert code == 0 and "unconfined" not in text, text
    code, text = run(["run", "triggers", "--skill", "nope"], env)
    assert code == 2 and "unconfined" not in text, text
    code, text = run(["run", "triggers"], env)
    lines = [line for line in text.splitlines() if "unconfined" in line]
    assert code == 0 and lines == [
        "warning: agents ran unconfined (no sandbox, no agent user): they could read what this "
        "job can; docs/action.md#root-or-not says how to confine them"
    ], text
    assert len(lines[0]) < 160  # whole in a comment's table cell, too
    code, text = run(["run", "triggers"], {**env, "GITHUB_ACTIONS": "true"})
    lines = [line for line in text.splitlines() if "unconfined" in line]
    assert len(lines) == 1 and lines[0].startswith("::warning::agents ran unconfined"), text
    assert sandbox.probe({"PATH": str(tmp_path)}).reason == "bubblewrap (bwrap) is not installed"


@needs_root
def test_as_the_agent_user_without_a_sandbox_the_line_says_so(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", _outside(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "EVOLVE_SANDBOX_ENABLED": "false",
        "EVOLVE_AGENT_USER": AGENT,
    }
    main(["run", "triggers", "--dry-run", "--root", str(root)], env, stdout=out, stderr=err)
    lines = [line for line in err.getvalue().splitlines() if "sandbox" in line]
    assert len(lines) == 1 and "unconfined" not in lines[0], lines
    assert f"run as the unprivileged user {AGENT} " in lines[0]


# --------------------------------------------------------------------------------------------------
# The agent cannot obtain what it was not given.

PROBE = (
    "{ echo \"proc1: $(tr '\\\\0' ' ' < /proc/1/environ 2>&1)\"; "
    "for f in /proc/[0-9]*/environ; do echo \"$f: $(tr '\\\\0' ' ' < $f 2>&1)\"; done; "
    'echo "git: $(cat REPO/.git/config 2>&1)"; '
    'echo "event: $(cat EVENT 2>&1)"; '
    'echo "home: $(cat HOMEDIR/.docker/config.json 2>&1)"; '
    'echo "output: $(cat OUTPUT 2>&1)"; '
    "echo \"socket: $(python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); "
    "s.connect(sys.argv[1]); print(s.recv(200).decode())' SOCKET 2>&1 | tail -n 1)\"; "
    "setsid sh -c 'SLEEPER' >/dev/null 2>&1 < /dev/null & "
    "echo PROBE-DONE; } > found.txt 2>&1; cat found.txt"
)
LEAK_POLICY = """
rules:
  - name: leak
    when: {prompt: '\\[leak\\]'}
    steps:
      - {tool: Bash, input: {command: COMMAND}}
      - "Tried everything."
"""


def _sleepers(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if cmdline.strip() == marker:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize(
    ("sandboxed", "user"),
    [(True, "root"), (True, AGENT), (False, AGENT)],
    ids=["bwrap-as-root", "bwrap-as-agent-user", "agent-user-without-bwrap"],
)
def test_agent_cannot_obtain_what_it_was_not_given(
    tmp_path: Path, model_server: Any, claude_cli: Path, sandboxed: bool, user: str
) -> None:
    if sandboxed and not sandbox.probe(os.environ).available:
        pytest.skip(f"no OS sandbox here: {sandbox.probe(os.environ).reason}")
    if user != "root" and not _is_root():
        pytest.skip("switching agents to an unprivileged user needs root")
    tag = uuid.uuid4().hex[:12]
    sleeper = f"sleep {3000 + uuid.uuid4().int % 900}.{os.getpid()}"
    secrets = {
        "token": f"ghs_confineTOKEN{tag}",
        "input": f"ghs_confineINPUT{tag}",
        "header": f"confine-extraheader-{tag}",
        "event": f"confine-event-{tag}",
        "home": f"confine-home-{tag}",
        "socket": f"confine-socket-{tag}",
        "output": f"confine-output-{tag}",
    }
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    case = {
        "id": "leak",
        "prompt": "[leak] Find every secret.",
        "assertions": [
            {"type": "regex", "path": "found.txt", "pattern": "(?s).+"},
            {"type": "command", "run": "cat found.txt; " + PROBE.split("; setsid")[0] + "; }"},
            {"type": "file_exists", "path": "found.txt"},
        ],
    }
    write(root, "evals/good/evals.json", json.dumps({"evals": [case]}))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "config",
            "http.https://github.com/.extraheader",
            f"AUTHORIZATION: basic {secrets['header']}",
        ],
        check=True,
    )
    home = tmp_path / "home"
    write(home, ".docker/config.json", json.dumps({"auths": {"x": {"auth": secrets["home"]}}}))
    event = write(tmp_path / "workflow", "event.json", json.dumps({"secret": secrets["event"]}))
    output = write(tmp_path / "file_commands", "set_output_1", f"x={secrets['output']}\n")
    docker = SecretSocket(tmp_path / "docker.sock", secrets["socket"].encode())
    command = (
        PROBE.replace("REPO", str(root))
        .replace("EVENT", str(event))
        .replace("HOMEDIR", str(home))
        .replace("OUTPUT", str(output))
        .replace("SOCKET", str(docker.path))
        .replace("SLEEPER", sleeper)
    )
    case["assertions"][1]["run"] = (
        command.split("; setsid")[0] + "; } > checked.txt 2>&1; cat checked.txt"
    )
    write(root, "evals/good/evals.json", json.dumps({"evals": [case]}))
    srv = model_server(LEAK_POLICY.replace("COMMAND", json.dumps(command)))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
        "GITHUB_TOKEN": secrets["token"],
        "INPUT_GITHUB_TOKEN": secrets["input"],
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(output),
        "DOCKER_HOST": f"unix://{docker.path}",
        "EVOLVE_AGENT_USER": user,
    }
    if not sandboxed:
        env["EVOLVE_SANDBOX_ENABLED"] = "false"
    if os.environ.get("PYTHONPATH"):  # the code under test, when it is not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    args = ["run", "evals", "--root", str(root), "--model", "claude-sonnet-5", "--no-baseline"]
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "evolve_action", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        docker.close()
    assert proc.returncode in (0, 1), proc.stderr
    results = (root / "evals/good/results.json").read_text()
    row = json.loads(results)["models"]["anthropic/claude-sonnet-5"]["evals"]["results"][0]
    assert not row.get("runtime_error"), row
    seen = json.dumps(srv.requests)
    # The probe ran (the agent saw its output, the command assertion quoted its own) …
    assert "PROBE-DONE" in seen and "proc1:" in seen
    assert "git:" in json.dumps(row["expectations"]), row["expectations"]
    # … and found nothing secret: not in what the agent saw, nor in anything we wrote or printed.
    for name, value in secrets.items():
        assert value not in seen, f"the agent read the {name} secret"
        assert value not in results, f"the {name} secret reached results.json"
        assert value not in proc.stdout + proc.stderr, f"the {name} secret reached the console"
    # Without a sandbox the one line says whom the agent ran as; never "unconfined".
    assert "unconfined" not in proc.stderr
    # The `setsid` child the agent started did not outlive its session.
    left = _sleepers(sleeper)
    for pid in left:
        os.kill(pid, 9)
    assert left == []
    assert (home / ".docker/config.json").read_text().count(secrets["home"]) == 1
    assert oct(event.stat().st_mode & 0o777) == oct(0o644)  # restored after the run


@pytest.mark.parametrize("sandboxed", [True, False], ids=["bwrap", "no-sandbox"])
def test_a_setsid_child_of_a_command_assertion_dies_with_it(
    tmp_path: Path, sandboxed: bool
) -> None:
    if sandboxed and not sandbox.probe(os.environ).available:
        pytest.skip(f"no OS sandbox here: {sandbox.probe(os.environ).reason}")
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"sleep {3000 + uuid.uuid4().int % 900}"
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    if not sandboxed:
        environ["EVOLVE_SANDBOX_ENABLED"] = "false"
    kw: dict[str, Any] = {
        "workspace": ws,
        "final_text": "",
        "tool_calls": [],
        "timeout_seconds": 30,
        "environ": environ,
    }
    run = f"setsid sh -c '{marker}' >/dev/null 2>&1 < /dev/null & (({marker} &) &) ; echo started"
    try:
        verdict = asyncio.run(grading.grade_deterministic(_A("command", run=run), **kw))
        assert verdict.passed is True and "started" in verdict.evidence, verdict
        assert _sleepers(marker) == []
    finally:
        for pid in _sleepers(marker):
            os.kill(pid, 9)
