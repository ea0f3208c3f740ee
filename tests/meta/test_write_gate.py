"""Every file we write for a user passes the redaction gate (issue 20 part 1).

Results files, reports, JUnit, shard fragments and plans are written through
`encoding.atomic_write_text`/`encoding.write_text`, which redact (`evolve_action.redact`); the step
summary and outputs through `github._outputs`, which redacts before appending. A new sink that
writes a file another way fails this test until it uses the gate or is listed below with the
reason it writes nothing a secret could reach.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "evolve_action"

WRITE = re.compile(
    r"(?<!encoding)\.write_text\(|\.write_bytes\(|\.open\(\s*['\"][wax]b?['\"]|\bopen\([^)]*['\"][wax]b?['\"]"
    r"|os\.O_WRONLY|os\.O_RDWR|shutil\.copy(?:file|fileobj)?\("
)

ALLOWED: dict[str, str] = {
    "encoding/_fsio.py": "the gate itself",
    "github/_outputs.py": "appends GITHUB_OUTPUT/GITHUB_STEP_SUMMARY after `redact`",
    "harness/_install.py": "installs the Codex CLI from its release archive",
    "harness/_lifecycle.py": "the scratch directory's lock file",
    "harness/_claude_code.py": "the agent's own config and wrapper in its scratch directory",
    "harness/_workspace.py": "stages eval input files into the agent's throwaway workspace",
    "modelserver/_server.py": "the scripted model server's request log (a test and demo tool)",
    "modelserver/_responses.py": "a script the scripted Codex agent runs in its workspace",
    "flows/_demo.py": "the demo's scratch copy of the examples (an authored file edited)",
}


def test_every_file_write_goes_through_the_redaction_gate() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in ALLOWED:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if WRITE.search(line) and not line.lstrip().startswith("#"):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == [], (
        "write files through encoding.atomic_write_text / encoding.write_text (the redaction "
        "gate), or list the module in ALLOWED with the reason:\n" + "\n".join(offenders)
    )


def test_the_allowlist_has_no_stale_entries() -> None:
    for rel in ALLOWED:
        text = (SRC / rel).read_text(encoding="utf-8")
        assert WRITE.search(text), f"{rel} no longer writes files itself: drop it from ALLOWED"
