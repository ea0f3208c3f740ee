"""The pictures in docs/img show what the code renders now (issue 43).

Each `docs/img/<name>.png` has its Markdown source `<name>.md` beside it. The comment states'
sources are re-rendered here from the current code; every PNG must carry the digest of its source
(it was rendered from that exact text). Fast: no browser, no agent; the README's tour picture is
checked against the tour's real comment by the slow tour test (tests/e2e/test_readme_tour.py).
"""

from __future__ import annotations

import difflib

from tests.helpers import doc_images as di

STALE = "refresh every source and PNG with: " + di.REFRESH


def test_every_picture_has_its_source_beside_it() -> None:
    pngs = {p.stem for p in di.IMG.glob("*.png")}
    sources = {p.stem for p in di.IMG.glob("*.md")}
    assert pngs == sources, f"pictures without a source or sources without a picture; {STALE}"
    assert set(di.state_sources()) | {di.TOUR_IMAGE} == sources, STALE


def test_the_comment_state_sources_are_what_the_code_renders() -> None:
    stale = []
    for name, rendered in di.state_sources().items():
        committed = (di.IMG / f"{name}.md").read_text(encoding="utf-8")
        if committed != rendered:
            diff = difflib.unified_diff(
                committed.splitlines(),
                rendered.splitlines(),
                f"docs/img/{name}.md (committed)",
                "rendered by the current code",
                lineterm="",
                n=1,
            )
            stale.append("\n".join(diff))
    assert not stale, f"docs/img is stale: the comment renders differently now; {STALE}\n" + (
        "\n".join(stale)
    )


def test_every_png_was_rendered_from_its_committed_source() -> None:
    wrong = [
        p.name
        for p in sorted(di.IMG.glob("*.png"))
        if di.png_digest(p) != di.digest(p.with_suffix(".md").read_text(encoding="utf-8"))
    ]
    assert wrong == [], f"PNGs not rendered from the source beside them: {wrong}; {STALE}"


def test_the_readme_shows_the_tours_comment() -> None:
    readme = (di.REPO / "README.md").read_text(encoding="utf-8")
    assert f"](docs/img/{di.TOUR_IMAGE}.png)" in readme
