"""Untrusted text in committed reports (issue 20 part 7): `EVALUATION.md`, the plugin pages and
`EVALUATION.json` neutralise mentions, HTML, images, code fences, non-http links and our marker, as
the PR comment does, while ordinary text keeps evolve's grammar (the goldens in test_report_cli stay
identical). Issue 43: the rendered pages are parsed with a CommonMark/GFM parser (markdown-it-py, a
dev dependency), so "inert" means what a renderer sees, not what a regular expression guesses."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token
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
    "<details><summary>x</summary> <!-- evolve-action:comment --> "
    "[click](javascript:alert(1)) [too](&#106;avascript:alert(2)) [d](data:text/html,x) "
    "<javascript:alert(3)> ```js"
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
                            name=f"name {EVIL}\n```\nswallow the rest",
                            checks=[
                                assertion(f"text {EVIL}", False, f"evidence {EVIL}\n~~~\nrest")
                            ],
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


def rendered_tokens(text: str) -> list[Token]:
    """The document as GitHub's renderer would parse it (GFM tables, raw HTML allowed), flat."""
    md = MarkdownIt("gfm-like", {"html": True, "linkify": False}).disable("linkify")
    md.validateLink = lambda url: True  # see every link, not only those markdown-it would keep
    flat: list[Token] = []
    for token in md.parse(text):
        flat.append(token)
        flat.extend(token.children or ())
    return flat


def test_hostile_text_is_inert_to_a_markdown_renderer(tmp_path: Path) -> None:
    """No HTML but our marker, no image, no code block, no link but http(s), and every heading
    the report has (a fence that opened would swallow the headings after it)."""
    root = make_marketplace(tmp_path / "repo")
    evil_results(root)
    code = main(["report", "--root", str(root)], {}, stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    for rel in ("EVALUATION.md", "plugins/alpha/EVALUATION.md"):
        text = (root / rel).read_text()
        tokens = rendered_tokens(text)
        html = [t.content for t in tokens if t.type in ("html_block", "html_inline")]
        assert html == [text.splitlines()[0] + "\n"], rel  # the generated-by marker alone
        assert [t.type for t in tokens if t.type in ("image", "fence", "code_block")] == [], rel
        hrefs = [str(t.attrs.get("href")) for t in tokens if t.type == "link_open"]
        assert all(h.startswith(("http://", "https://")) for h in hrefs), (rel, hrefs)
        headings = [t for t in tokens if t.type == "heading_open"]
        assert len(headings) == text.count("\n#"), rel  # every `#` line is still a heading
    page = (root / "plugins/alpha/EVALUATION.md").read_text()
    assert "[click]\\(javascript:alert(1))" in page and "&lt;javascript:alert(3)>" in page
