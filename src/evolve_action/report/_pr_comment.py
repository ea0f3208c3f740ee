"""The sticky PR comment's body: comparison rows + run facts → Markdown (pure).

Owns: `RunFacts` (what the run did and where to look), `render_pr_comment` (the body, through
`templates/pr_comment.md.j2` and `render.environment()`), the size cap that drops detail before
headline numbers, `github_text` (the sanitiser for any untrusted text embedded in a GitHub
comment) and `evidence_digest`/`digest_of` (a fingerprint of the evidence, written into the body,
so the publishing flow can tell a re-run that changed nothing and leave the comment alone).

Guarantees:
- Deterministic: the body is a function of the rows (base and head evidence) and the facts; no
  clock, no environment, no ordering that depends on anything else.
- The caller's marker appears exactly once, on the first line; untrusted text can never repeat it
  (`<`, `>` and `&` are escaped) nor hide anything (`github_text`).
- The body stays under `COMMENT_LIMIT` characters (counted in UTF-16 code units, GitHub's
  JavaScript measure, which is never less than the code-point count): first the failing-case
  details go, then per-model rows, least severe rows first each time, and the body says what
  was dropped.

Never does: I/O beyond loading the template from the installed package, posting, reading the
environment. The facts of a re-run that ran nothing differ from the first run's (sessions, run
URL), so the flow compares `evidence_digest(rows)` with `digest_of(existing_body)` and keeps the
existing comment when they match (docs/pr-comment.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from evolve_action.report._compare import (
    ALPHA,
    MATERIAL_SHARE,
    CaseStatus,
    ComparisonRow,
    Label,
    Rate,
    TierComparison,
    label_counts,
)
from evolve_action.report._render import CELL_MAX_BYTES, EM, cell_text, environment, usd
from evolve_action.sanitise import clean_text

__all__ = [
    "COMMENT_LIMIT",
    "MAX_FAILING_LISTED",
    "RunFacts",
    "comment_length",
    "digest_of",
    "evidence_digest",
    "github_text",
    "render_pr_comment",
]

COMMENT_LIMIT = 65_536
"""GitHub's limit on an issue/PR comment body, in characters."""

DEFAULT_BUDGET = 65_000
"""The default size target: under the limit with room for a line the caller may add."""

MAX_FAILING_LISTED = 25
"""Failing cases listed per tier of a row; the rest are counted ("… and 7 more")."""

EMOJI = {
    Label.REGRESSION: "🔴",
    Label.IMPROVEMENT: "🟢",
    Label.NOT_COMPARABLE: "⚪",
    Label.UNDERPOWERED: "🟡",
    Label.WITHIN_NOISE: "⚪",
    Label.NEW: "🆕",
    Label.REMOVED: "➖",
}

_DIGEST_RE = re.compile(r"<!-- evidence sha256:([0-9a-f]{64}) -->")


# ---------------------------------------------------------------------------------------------
# Sanitising


_LINE_BREAKS = str.maketrans(
    {
        "\r": "\n",
        "\v": "\n",
        "\f": "\n",
        "\x85": "\n",
        "\u2028": "\n",
        "\u2029": "\n",
        "\t": " ",
    }
)
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_REF = re.compile(r"#(?=[0-9])")
_MARKDOWN = str.maketrans(
    {
        "\\": "\\\\",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "[": "\\[",
        "]": "\\]",
        "`": "\\`",
    }
)


_HTML = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "&#91;", "]": "&#93;", "`": "&#96;"}
)


def _visible(ch: str) -> bool:
    if ch == "\n":
        return True
    return unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co")


def github_text(text: str) -> str:
    """Untrusted text made safe to embed in a GitHub comment (Markdown); line breaks kept as `\\n`.

    - terminal escapes, C0/C1 controls and bidi controls go (`sanitise.clean_text`), then every
      other invisible format character (Unicode categories Cf, Cs, Co: zero-width spaces and
      joiners, word joiner, BOM, tag characters, soft hyphen);
    - CR, VT, FF, NEL, U+2028/2029 become `\\n`, tabs a space;
    - `\\`, `` ` ``, `[`, `]` are backslash-escaped (no code spans, links or images, and no
      trailing backslash that would escape a table pipe); `&`, `<`, `>` become entities, so no
      HTML tag or comment (`<!--`) can open, and the caller's marker cannot be forged;
    - `@name` and `@org/team` become `＠name` (U+FF20, visible, never a mention), `#123` becomes
      `＃123` (U+FF03, never a cross-reference).
    """
    text = clean_text(text.replace("\r\n", "\n").translate(_LINE_BREAKS))
    text = "".join(ch for ch in text if _visible(ch))
    text = text.translate(_MARKDOWN)
    text = _MENTION.sub("\uff20", text)
    return _REF.sub("\uff03", text)


def _html_text(text: str) -> str:
    """Untrusted text inside raw HTML (`<summary>`): as `github_text`, minus Markdown escapes."""
    text = clean_text(text.translate(_LINE_BREAKS)).replace("\n", " ")
    text = "".join(ch for ch in text if _visible(ch))
    text = _REF.sub("\uff03", _MENTION.sub("\uff20", text)).translate(_HTML)
    b = text.encode("utf-8")
    return text if len(b) <= CELL_MAX_BYTES else b[:CELL_MAX_BYTES].decode("utf-8", "ignore") + "…"


def _cell(text: str) -> str:
    """Untrusted text for one table cell or bullet: sanitised, one line, pipes escaped, capped."""
    return cell_text(github_text(text).replace("\n", " "))


def _url(url: str | None) -> str | None:
    """An http(s) URL safe inside `[text](…)`; anything else is dropped."""
    if not url:
        return None
    url = clean_text(url).strip()
    if urlsplit(url).scheme not in ("http", "https"):
        return None
    return quote(url, safe=":/?#[]@!$&'*+,;=%~.-_")


def comment_length(body: str) -> int:
    """GitHub's measure of a body: UTF-16 code units (≥ the number of code points)."""
    return len(body.encode("utf-16-le")) // 2


# ---------------------------------------------------------------------------------------------
# Facts and digest


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFacts:
    """What the run did, and the links; given by the caller."""

    marker: str
    """The hidden marker the flow finds its comment by (e.g. `<!-- evolve-action:comment -->`)."""
    sessions_run: int
    """Agent sessions this run started (trigger runs, eval and baseline runs)."""
    sessions_skipped: int
    """Sessions not needed: cases whose stored results are up to date."""
    cost_usd: float | None
    """Measured cost of this run's sessions; None when nothing reported a cost."""
    evaluation_url: str | None = None
    """Link to the head's `EVALUATION.md`."""
    run_url: str | None = None
    """Link to the workflow run."""
    title: str = "Skill evaluations: base → head"
    notes: tuple[str, ...] = ()
    """Extra lines (fork notice, "results are for an older head", …); sanitised like model text."""


def evidence_digest(rows: Iterable[ComparisonRow]) -> str:
    """sha256 (hex) of the rows' canonical JSON: equal evidence, equal digest."""
    doc = [dataclasses.asdict(r) for r in rows]
    data = json.dumps(doc, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(data.encode("ascii")).hexdigest()


def digest_of(body: str) -> str | None:
    """The evidence digest written into a rendered body, if any."""
    m = _DIGEST_RE.search(body)
    return m.group(1) if m else None


# ---------------------------------------------------------------------------------------------
# View model


def _pct(r: float | None) -> str:
    return EM if r is None else f"{r * 100:.0f} %"


def _pts(d: float | None) -> str:
    if d is None:
        return EM
    v = round(d * 100)
    return f"{'+' if v > 0 else '−' if v < 0 else '±'}{abs(v)} pts"


def _rate_text(r: Rate | None) -> str:
    if r is None:
        return EM
    text = f"{r.passed}/{r.n} ({_pct(r.rate)})" if r.n else EM
    if r.invalid:
        text += f" +{r.invalid} errored"
    return text


def _ci_text(r: Rate | None) -> str:
    if r is None or r.ci is None:
        return EM
    return f"{r.ci.low * 100:.0f}–{r.ci.high * 100:.0f} %"


def _label_text(t: TierComparison) -> str:
    text = f"{EMOJI[t.label]} {t.label.value}"
    if t.label is Label.UNDERPOWERED and t.more_cases:
        text += f" (≈{t.more_cases} more shared case{'s' if t.more_cases != 1 else ''})"
    return text


def _tier_cell(t: TierComparison | None) -> str:
    if t is None:
        return EM
    parts = [f"{_rate_text(t.base)} → {_rate_text(t.head)}"]
    if t.delta is not None:
        parts[0] += f", **{_pts(t.delta)}**"
    if t.base is not None or t.head is not None:
        parts.append(f"95 % CI {_ci_text(t.base)} → {_ci_text(t.head)}")
    label = _label_text(t)
    if t.flips is not None:
        label = f"{t.flips.down} ↓ {t.flips.up} ↑ of {t.flips.shared} shared · {label}"
    parts.append(label)
    return "<br>".join(parts)


def _lift_cell(row: ComparisonRow) -> str:
    t = row.evals
    if t is None or (t.lift_base is None and t.lift_head is None):
        return EM
    return f"{_pts(t.lift_base)} → {_pts(t.lift_head)}"


def _skill_name(row: ComparisonRow) -> str:
    return f"{row.plugin}/{row.skill}" if row.plugin else row.skill


def _cells(row: ComparisonRow) -> tuple[str, ...]:
    return (
        _cell(_skill_name(row)),
        _cell(row.display),
        _tier_cell(row.triggers),
        _tier_cell(row.evals),
        _lift_cell(row),
        f"{EMOJI[row.label]} **{row.label.value}**",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _TierDetail:
    heading: str
    bullets: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _RowDetail:
    summary: str
    tiers: tuple[_TierDetail, ...]


_STATUS_MARK = {
    CaseStatus.REGRESSED: "❌ regressed",
    CaseStatus.STILL_FAILING: "❌ still failing",
    CaseStatus.NO_BASE: "❌ failing (no base verdict)",
    CaseStatus.ERRORED: "⚠️ errored (excluded)",
}


def _tier_detail(t: TierComparison) -> _TierDetail:
    heading = f"{t.tier.value.capitalize()}: {t.label.value}; {_cell(t.reason)}"
    if t.unpaired:
        heading += f"; {t.unpaired} case{'s' if t.unpaired != 1 else ''} valid on one side only"
    bullets = []
    for f in t.failing[:MAX_FAILING_LISTED]:
        name = f"{f.key} ({f.name})" if f.name else f.key
        bullets.append(f"{_STATUS_MARK[f.status]}: {_cell(name)}: {_cell(f.detail)}")
    hidden = len(t.failing) - MAX_FAILING_LISTED
    if hidden > 0:
        bullets.append(f"… and {hidden} more (see EVALUATION.md)")
    return _TierDetail(heading=heading, bullets=tuple(bullets))


def _wants_detail(row: ComparisonRow) -> bool:
    notable = (Label.REGRESSION, Label.IMPROVEMENT, Label.UNDERPOWERED, Label.NOT_COMPARABLE)
    return any(
        t.failing or t.label in notable or (t.flips is not None and t.flips.discordant)
        for t in row.tiers
    )


def _row_detail(row: ComparisonRow) -> _RowDetail:
    failing = sum(1 for t in row.tiers for f in t.failing if f.status is not CaseStatus.ERRORED)
    errored = sum(1 for t in row.tiers for f in t.failing if f.status is CaseStatus.ERRORED)
    counts = [f"{failing} failing"]
    if errored:
        counts.append(f"{errored} errored")
    summary = f"{_html_text(_skill_name(row))} · {_html_text(row.display)}: {', '.join(counts)}"
    return _RowDetail(summary=summary, tiers=tuple(_tier_detail(t) for t in row.tiers))


def _headline(rows: Sequence[ComparisonRow]) -> str:
    if not rows:
        return "No touched skill has stored results on either side yet."
    parts = []
    for label, n in label_counts(rows).items():
        text = f"{n} {label.value}"
        parts.append(
            f"{EMOJI[label]} **{text}**"
            if label in (Label.REGRESSION, Label.IMPROVEMENT)
            else f"{EMOJI[label]} {text}"
        )
    noun = "row" if len(rows) == 1 else "rows"
    return f"{' · '.join(parts)} across {len(rows)} skill × model {noun}."


def _run_line(facts: RunFacts) -> str:
    parts = [
        f"{facts.sessions_run} agent session{'s' if facts.sessions_run != 1 else ''} run, "
        f"{facts.sessions_skipped} skipped (results up to date)",
        f"measured cost {usd(facts.cost_usd)}"
        if facts.cost_usd is not None
        else "cost not measured",
    ]
    links = []
    ev = _url(facts.evaluation_url)
    if ev:
        links.append(f"[EVALUATION.md]({ev})")
    run = _url(facts.run_url)
    if run:
        links.append(f"[workflow run]({run})")
    return " · ".join(parts + links)


def _rule_line() -> str:
    return (
        "Labels compare the cases both sides share: a case *flips* when its verdict changes; "
        "`regression`/`improvement` need an exact one-sided sign test on the flips with "
        f"p ≤ {ALPHA:g} per direction and net flips ≥ {MATERIAL_SHARE:.0%} of the shared cases. "
        "Errored cases are excluded, never counted as failures. CI: Wilson 95 % interval."
    )


def _severity(row: ComparisonRow) -> int:
    return tuple(Label).index(row.label)


def render_pr_comment(
    rows: Sequence[ComparisonRow], facts: RunFacts, *, budget: int = DEFAULT_BUDGET
) -> str:
    """The sticky comment's Markdown for `rows` (from `compare.compare`) and `facts`.

    Per skill × model: triggers and evals base → head with Δ, n, the 95 % interval and the label,
    the eval lift vs the without-skill baseline (base → head), and the row's label; failing cases
    in a collapsed `<details>` per row; what this run did and the links. Over `budget` (UTF-16
    code units; at most `COMMENT_LIMIT`), the failing-case details are dropped first, then the
    least severe rows, and the body says so; the label counts are always kept.
    """
    if budget > COMMENT_LIMIT:
        raise ValueError(f"budget {budget} exceeds GitHub's limit of {COMMENT_LIMIT}")
    rows = list(rows)
    template = environment().get_template("pr_comment.md.j2")
    digest = evidence_digest(rows)
    context = {
        "marker": facts.marker,
        "digest": digest,
        "title": _cell(facts.title),
        "headline": _headline(rows),
        "run_line": _run_line(facts),
        "notes": [_cell(n) for n in facts.notes],
        "rule": _rule_line(),
    }
    all_cells = [_cells(r) for r in rows]
    details = {i: _row_detail(r) for i, r in enumerate(rows) if _wants_detail(r)}

    def body(shown: Sequence[int], detailed: Collection[int], omitted: Sequence[str]) -> str:
        return template.render(
            rows=[all_cells[i] for i in shown],
            details=[details[i] for i in shown if i in detailed],
            omitted=list(omitted),
            **context,
        )

    def fits(text: str) -> bool:
        return comment_length(text) <= budget

    everything = list(range(len(rows)))
    text = body(everything, details, ())
    if fits(text):
        return _checked(text, facts.marker)
    # 1. Drop failing-case details, least severe rows first.
    by_severity = sorted(everything, key=lambda i: (_severity(rows[i]), i))
    with_detail = [i for i in by_severity if i in details]

    def without_details(kept: int) -> str:
        note = (
            f"Failing-case details of {len(with_detail) - kept} of {len(with_detail)} rows were "
            f"left out (least severe first) to keep this comment under GitHub's "
            f"{COMMENT_LIMIT:,}-character limit; EVALUATION.md has them."
        )
        return body(everything, set(with_detail[:kept]), (note,))

    best = _largest(len(with_detail) - 1, without_details, fits)
    if best is not None:
        return _checked(best, facts.marker)
    # 2. Drop rows, least severe first; the label counts on top always stay.
    no_details = (
        "Failing-case details were left out to keep this comment under GitHub's "
        f"{COMMENT_LIMIT:,}-character limit; EVALUATION.md has them."
    )

    def without_rows(kept: int) -> str:
        left = [rows[i] for i in by_severity[kept:]]
        counts = ", ".join(f"{n} {lbl.value}" for lbl, n in label_counts(left).items())
        note = (
            f"{len(left)} of {len(rows)} rows were left out ({counts}), least severe first, "
            "to stay under the limit; EVALUATION.md has every row."
        )
        return body(sorted(by_severity[:kept]), (), (no_details, note))

    best = _largest(len(rows) - 1, without_rows, fits)
    if best is None:  # even the headline alone is too long (huge notes): drop the notes
        context["notes"] = []
        best = body([], (), (no_details, "Rows and notes were left out to fit."))
    return _checked(best, facts.marker)


def _largest(most: int, make: Callable[[int], str], fits: Callable[[str], bool]) -> str | None:
    """`make(k)` for the largest k in 0..`most` that fits (sizes grow with k), or None."""
    lo, hi = 0, most
    best: str | None = None
    while lo <= hi:
        k = (lo + hi) // 2
        text = make(k)
        if fits(text):
            best, lo = text, k + 1
        else:
            hi = k - 1
    return best


def _checked(text: str, marker: str) -> str:
    if text.count(marker) != 1:
        raise ValueError("the marker must appear exactly once in the comment body")
    return text
