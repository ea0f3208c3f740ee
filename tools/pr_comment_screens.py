"""Every picture in docs/img, rendered from the code: Markdown sources first, then the PNGs.

One command refreshes everything (run it after any change to what the comment says):

    .venv/bin/python tools/pr_comment_screens.py

1. writes `docs/img/pr-comment-<state>.md` for every state of `tests/helpers/comment_examples.py`
   (the same rows and facts the unit tests render, through `render_pr_comment`);
2. runs the README's tour verbatim in a temporary directory (real Claude Code sessions against
   the scripted model server, a few minutes) and writes its comment to
   `docs/img/pr-comment-demo.md`, the README's picture (`--no-tour` keeps the committed one;
   `--tour-comment FILE` takes a tour's `.evolve-action/pr-comment.md` instead);
3. renders every `docs/img/*.md` as GitHub would show it (markdown-it-py's `gfm-like` preset: tables,
   raw HTML such as `<details>` and `<sub>`; GitHub-like CSS) and screenshots it with headless
   Chromium into the `.png` beside it, stamped with the source's SHA-256 (`tests/helpers/
   doc_images.py`).

`tests/unit/report/test_doc_images.py` fails when a source no longer matches the code or a PNG no
longer matches its source, naming this command. Needs markdown-it-py (dev extras) and Chromium
(`apt-get install -y chromium fonts-noto-color-emoji`: the emoji font draws the verdict icons);
`--html-only` writes the HTML pages instead of PNGs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from markdown_it import MarkdownIt  # noqa: E402
from tests.e2e.test_readme_tour import tour_block  # noqa: E402
from tests.helpers import doc_images  # noqa: E402

CSS = """
body { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial,
       sans-serif, "Noto Color Emoji"; font-size: 14px; line-height: 1.5; color: #1f2328;
       background: #fff; margin: 0; padding: 16px; width: 900px; }
.comment { border: 1px solid #d1d9e0; border-radius: 6px; }
.header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px;
          border-radius: 6px 6px 0 0; color: #59636e; }
.header b { color: #1f2328; }
.body { padding: 16px; }
h3 { font-size: 1.25em; margin: 0 0 16px; font-weight: 600; }
table { border-collapse: collapse; margin: 0 0 16px; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; background: #f6f8fa; }
tr:nth-child(2n) td { background: #f6f8fa; }
a { color: #0969da; text-decoration: none; }
code { background: rgba(129,139,152,0.12); border-radius: 6px; padding: .2em .4em; font-size: 85%;
       font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
ul { padding-left: 2em; margin: 0 0 16px; }
p { margin: 0 0 16px; }
details { margin: 0 0 16px; }
summary { cursor: pointer; }
sub { font-size: 75%; color: #59636e; }
"""


# Writes the page's height into the DOM, so `--dump-dom` tells the screenshot how tall to be.
MEASURE = (
    "<script>document.body.setAttribute('data-height', "
    "String(document.documentElement.scrollHeight));</script>"
)


def page(markdown: str) -> str:
    md = MarkdownIt("gfm-like", {"html": True, "linkify": False}).disable("linkify")
    body = md.render(markdown)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        "<div class='comment'><div class='header'><b>github-actions</b> bot commented"
        f"</div><div class='body'>{body}</div></div>{MEASURE}</body></html>"
    )


def run_tour() -> str:
    """Run the README's tour block verbatim (as tests/e2e/test_readme_tour.py does) and return the
    comment it writes."""
    with tempfile.TemporaryDirectory(prefix="evolve-tour-") as tmp:
        (Path(tmp) / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE_CODE_", "OPENAI_", "EVOLVE_", "GITHUB_"))
        }
        env["HOME"] = str(Path(tmp) / "home")
        done = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + tour_block()],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        comment = Path(tmp) / "tour" / ".evolve-action" / "pr-comment.md"
        if done.returncode != 0 or not comment.is_file():
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"the README's tour failed (exit {done.returncode})")
        return comment.read_text(encoding="utf-8")


def screenshot(browser: str, markdown: str, png: Path) -> None:
    """Render `markdown` into `png` (stamped with the source's digest)."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "page.html"
        target.write_text(page(markdown), encoding="utf-8")
        shot = Path(tmp) / "shot.png"
        flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        dom = subprocess.run(
            [*flags, "--window-size=940,400", "--dump-dom", target.as_uri()],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        height = re.search(r'data-height="(\d+)"', dom)
        tall = int(height.group(1)) if height else 760
        subprocess.run(
            [*flags, f"--window-size=940,{tall}", f"--screenshot={shot}", target.as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )
        png.write_bytes(doc_images.with_digest(shot.read_bytes(), markdown))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=doc_images.IMG)
    ap.add_argument("--html-only", action="store_true", help="write the HTML pages, no PNGs")
    ap.add_argument("--no-tour", action="store_true", help="keep the committed tour comment")
    ap.add_argument(
        "--tour-comment",
        type=Path,
        default=None,
        metavar="FILE",
        help="the tour's comment from this file (a tour's .evolve-action/pr-comment.md) instead of "
        "running the tour",
    )
    args = ap.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None and not args.html_only:
        print(
            "chromium not found: apt-get install -y chromium fonts-noto-color-emoji (or --html-only)",
            file=sys.stderr,
        )
        return 2
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    sources = doc_images.state_sources()
    if args.tour_comment is not None:
        sources[doc_images.TOUR_IMAGE] = args.tour_comment.read_text(encoding="utf-8")
    elif not args.no_tour:
        print("running the README's tour (a few minutes) ...", file=sys.stderr)
        sources[doc_images.TOUR_IMAGE] = run_tour()
    for name, markdown in sources.items():
        (out / f"{name}.md").write_text(markdown, encoding="utf-8")
    for source in sorted(out.glob("*.md")):
        markdown = source.read_text(encoding="utf-8")
        if args.html_only:
            source.with_suffix(".html").write_text(page(markdown), encoding="utf-8")
            continue
        assert browser is not None
        screenshot(browser, markdown, source.with_suffix(".png"))
        print(f"{source.with_suffix('.png')}  ({markdown.splitlines()[2][:80]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
