"""Untrusted text in committed reports (issue 20 part 7): `EVALUATION.md`, the plugin pages and
`EVALUATION.json` neutralise mentions, HTML, images, code fences and our marker, as the PR comment
does, while ordinary text keeps evolve's grammar (the goldens in test_report_cli stay identical)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from tests.helpers.report_fixtures import (
    assertion,
    ev,
    eval_entry,
    make_marketplace,
    tq,
    trig_entry,
    write_results,
)

from evolve_action.cli import main
from evolve_action.results import ModelEntry

KEY = "anthropic/claude-sonnet-5"
EVIL = (
    "hi @octocat <img src=https://evil.example/b.gif> ![b](https://evil.example/i.png) "
    "<details><summary>x</summary> <!-- evolve-action:comment -->"
)


def evil_results(root: Path) -> None:
    results = root / "plugins/alpha/evals/alpha-skill/results.json"
    write_results(
        results,
        "alpha",
        "alpha-skill",
        {
            KEY: ModelEntry(
                triggers=trig_entry(KEY, [tq(f"query {EVIL}\n```\nfenced", True, 0)]),
                evals=eval_entry(
                    KEY,
                    [
                        ev(
                            "case",
                            name=f"name {EVIL}",
                            checks=[assertion(f"text {EVIL}", False, f"evidence {EVIL}")],
                        ),
                        ev("crash", error=f"runtime {EVIL}\n```\nmore"),
                    ],
                ),
            )
        },
    )
    doc = json.loads(results.read_text())
    for tier in ("triggers", "evals"):
        doc["models"][KEY][tier]["display"] = f"Sonnet {EVIL}"
    results.write_text(json.dumps(doc, indent=2) + "\n")


def raw_markdown_constructs(text: str) -> list[str]:
    """Every place a renderer would see HTML, an image, a mention, a fence or a marker."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        if n == 1:
            continue  # our generated-by marker
        for pattern in (r"<[A-Za-z/!?]", r"!\[", r"(?<![A-Za-z0-9])@[A-Za-z0-9]", r"^ {0,3}```"):
            if re.search(pattern, line):
                found.append(f"{n}: {line}")
    return found


def test_reports_neutralise_untrusted_text(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    evil_results(root)
    out, err = io.StringIO(), io.StringIO()
    code = main(["report", "--root", str(root)], {}, stdout=out, stderr=err, cwd=tmp_path)
    assert code == 0, err.getvalue()
    for rel in ("EVALUATION.md", "plugins/alpha/EVALUATION.md"):
        text = (root / rel).read_text()
        assert "＠octocat" in text and "&lt;img src=https://evil.example/b.gif>" in text, rel
        assert "!\\[b](https://evil.example/i.png)" in text
        assert raw_markdown_constructs(text) == [], rel
        assert text.count("<!--") == 1  # our own marker only
    page = (root / "plugins/alpha/EVALUATION.md").read_text()
    assert "runtime hi ＠octocat" in page and "`claude-sonnet-5` failed `text hi ＠octocat" in page
    rollup = json.loads((root / "EVALUATION.json").read_text())
    display = rollup["plugins"]["alpha"]["triggers"][KEY]["display"]
    assert display.startswith("Sonnet hi ＠octocat &lt;img") and "<" not in display
