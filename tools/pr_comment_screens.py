"""Screenshots of the PR comment in each of its states, rendered as GitHub would show them.

Renders `tests/helpers/comment_examples.py` (the same rows and facts the unit tests render) with
`render_pr_comment`, turns the Markdown into HTML with a GitHub-flavoured renderer (markdown-it-py's
`gfm-like` preset: tables, raw HTML such as `<details>` and `<sub>`), wraps it in GitHub-like CSS and
screenshots it with headless Chromium into docs/img/pr-comment-<case>.png.

Needs, for this script only: `pip install markdown-it-py` in the venv and `apt-get install chromium`.

    .venv/bin/python tools/pr_comment_screens.py [--out docs/img] [--html-only]
    .venv/bin/python tools/pr_comment_screens.py --from tour/.evolve-action/pr-comment.md --name demo
"""

from __future__ import annotations

import argparse
import html
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from markdown_it import MarkdownIt  # noqa: E402
from tests.helpers import comment_examples as ex  # noqa: E402

from evolve_action.report import render_pr_comment  # noqa: E402

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


def page(markdown: str) -> str:
    md = MarkdownIt("gfm-like", {"html": True, "linkify": False}).disable("linkify")
    body = md.render(markdown)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        "<div class='comment'><div class='header'><b>github-actions</b> bot commented"
        f"</div><div class='body'>{body}</div></div></body></html>"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--html-only", action="store_true", help="write the HTML pages, no PNGs")
    ap.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=None,
        metavar="FILE",
        help="render this comment file (e.g. a demo's .evolve-action/pr-comment.md) instead of the "
        "comment's states; the PNG is named after --name",
    )
    ap.add_argument("--name", default="demo", help="with --from: pr-comment-<name>.png")
    args = ap.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None and not args.html_only:
        print("chromium not found: apt-get install -y chromium (or --html-only)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cases = (
            {args.name: args.source.read_text(encoding="utf-8")}
            if args.source is not None
            else {
                name: render_pr_comment(*make(), revision=ex.REVISION)
                for name, make in ex.STATES.items()
            }
        )
        for name, body in cases.items():
            target = Path(tmp) / f"{name}.html"
            target.write_text(page(body), encoding="utf-8")
            if args.html_only:
                shutil.copy(target, args.out / f"pr-comment-{name}.html")
                continue
            png = args.out / f"pr-comment-{name}.png"
            assert browser is not None
            subprocess.run(
                [
                    browser,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    "--window-size=940,760",
                    f"--screenshot={png}",
                    target.as_uri(),
                ],
                check=True,
                capture_output=True,
                timeout=120,
            )
            print(f"{png}  ({html.escape(body.splitlines()[2])})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
