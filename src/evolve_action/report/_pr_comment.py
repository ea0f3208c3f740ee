"""The sticky PR comment's body: comparison rows + run facts → Markdown (pure).

Owns: `RunFacts` (what the run did and where to look: sessions, the one measured cost, the cases
not run and why, the Tier 0 findings on the touched skills as `CheckLine`s, the touched skills
without evals, the next step of an undecided comparison), `render_pr_comment` (the body, through
`templates/pr_comment.md.j2` and `render.environment()`), the size cap that drops detail before
headline numbers, `github_text` (the sanitiser for any untrusted text embedded in a GitHub
comment) and `evidence_digest`/`digest_of` (a fingerprint of the evidence, written into the body,
so the publishing flow can tell a re-run that changed nothing and leave the comment alone).

Guarantees:
- No green without evidence: a tier whose stale evidence was not run reads `⏸️ not evaluated`
  (never `no change`), "(results up to date)" appears only when cases were skipped as current,
  a headline with nothing compared is never ✅, and Tier 0 errors on the touched skills are
  counted on the headline and listed with file and line (warnings collapsed).
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
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from evolve_action.plan import Tier
from evolve_action.report._compare import label_counts
from evolve_action.report._render import EM, cell_text, environment, usd
from evolve_action.report._rows import CaseStatus, ComparisonRow, Label, Rate, TierComparison
from evolve_action.report._stats import ALPHA, MATERIAL, NO_CHANGE_ALPHA, RULED_OUT
from evolve_action.sanitise import clean_text, defuse_mentions, visible_text

__all__ = [
    "COMMENT_LIMIT",
    "MAX_FAILING_LISTED",
    "MAX_FLIPPED_LISTED",
    "NEXT_STEP_NO_EVALS",
    "CheckLine",
    "Revision",
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

MAX_FLIPPED_LISTED = 10
"""Newly failing (and fixed) cases listed per tier of a row; the rest are counted."""

EMOJI = {
    Label.REGRESSION: "🔴",
    Label.AUTHORING_ERROR: "⛔",
    Label.NOT_EVALUATED: "⏸️",
    Label.IMPROVEMENT: "🟢",
    Label.NOT_COMPARABLE: "⚪",
    Label.UNDECIDED: "🟡",
    Label.BASE_UNKNOWN: "❔",
    Label.NO_CHANGE: "✅",
    Label.NEW: "🆕",
    Label.REMOVED: "➖",
    Label.NOT_RERUN: "",
}

NEXT_STEP_NO_EVALS = (
    "author evals (docs/authoring.md) or run `evolve-action init --skill {skill}` to draft them"
)
"""What a touched skill without evals needs next (said in the comment and the summary)."""

MAX_CHECKS_LISTED = 20
"""Tier 0 findings listed per severity; the rest are counted."""

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


def github_text(text: str) -> str:
    """Untrusted text made safe to embed in a GitHub comment (Markdown); line breaks kept as `\\n`.

    - terminal escapes, C0/C1 controls, bidi controls and every other invisible format character
      (Unicode categories Cf, Cs, Co: zero-width spaces and joiners, word joiner, BOM, tag
      characters, soft hyphen) go (`sanitise.visible_text`);
    - CR, VT, FF, NEL, U+2028/2029 become `\\n`, tabs a space;
    - `\\`, `` ` ``, `[`, `]` are backslash-escaped (no code spans, links or images, and no
      trailing backslash that would escape a table pipe); `&`, `<`, `>` become entities, so no
      HTML tag or comment (`<!--`) can open, and the caller's marker cannot be forged;
    - every `@name` and `@org/team` becomes `＠name` (U+FF20, visible, never a mention:
      `sanitise.defuse_mentions(strict=True)`), `#123` becomes `＃123` (U+FF03, never a
      cross-reference).
    """
    text = visible_text(text.replace("\r\n", "\n").translate(_LINE_BREAKS))
    text = defuse_mentions(text.translate(_MARKDOWN), strict=True)
    return _REF.sub("\uff03", text)


def _cell(text: str) -> str:
    """Untrusted text for one table cell or bullet: sanitised, one line, pipes escaped, capped."""
    return cell_text(github_text(text).replace("\n", " "))


MAX_NOTE_CHARS = 2_000
"""A note is cut here (whole reasons, not a table cell's 160 bytes)."""


def _note(text: str) -> str:
    """Untrusted text for one note line: sanitised, one line, pipes escaped, cut at
    `MAX_NOTE_CHARS` characters (never mid-word when it can help it)."""
    one = github_text(text).replace("\n", " ").replace("|", "\\|")
    if len(one) <= MAX_NOTE_CHARS:
        return one
    cut = one[:MAX_NOTE_CHARS].rsplit(" ", 1)[0]
    return cut + " …"


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
class CheckLine:
    """One Tier 0 finding on a touched skill, for the comment (untrusted text, sanitised here)."""

    error: bool
    """An error (fails the check run); else a warning."""
    where: str
    """`path` or `path:line`, relative to the repository."""
    message: str
    """What is wrong and what to do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFacts:
    """What the run did, and the links; given by the caller."""

    marker: str
    """The hidden marker the flow finds its comment by (e.g. `<!-- evolve-action:comment -->`)."""
    sessions_run: int
    """Agent sessions this run started (trigger runs, eval and baseline runs, base reruns)."""
    sessions_skipped: int
    """Sessions not needed: cases whose stored results are up to date."""
    cost_usd: float | None
    """Measured cost of this run's sessions; None when nothing reported a cost."""
    evaluation_url: str | None = None
    """Link to the head's `EVALUATION.md`."""
    run_url: str | None = None
    """Link to the workflow run."""
    title: str = "Skill evaluations: base → head"
    """What was compared, shown small under the verdict (the first line is always the verdict)."""
    notes: tuple[str, ...] = ()
    """Extra lines (fork notice, "results are for an older head", …); sanitised like model text."""
    not_run: int = 0
    """Stale or missing cases this run did not run (their tiers are `not evaluated`)."""
    not_run_reason: str = ""
    """Why they were not run (`no credentials were given`, `the budget ran out`, …)."""
    checks: tuple[CheckLine, ...] = ()
    """Tier 0 findings on the touched skills, errors first."""
    no_evals: tuple[str, ...] = ()
    """Touched skills (`plugin/skill`) with no evals at all: nothing could be measured."""
    undecided_hint: str = ""
    """The next step of an `undecided` tier (the `max_runs`/`max_cost_usd` that would decide it,
    or that it is inconclusive at the cap); "" for the generic one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision:
    """What was compared and how to redo it; given by the caller (defaults: unknown)."""

    base_sha: str = ""
    """The base commit compared against ("" when unknown); shown short."""
    head_sha: str = ""
    """The head commit evaluated ("" when unknown); shown short."""
    dirty: bool = False
    """The head had uncommitted changes (a local preview of a working tree)."""
    base_reruns: int = 0
    """Sessions of `RunFacts.sessions_run` that re-ran the base (evidence about the base, never
    committed)."""
    workflow_runs: int = 0
    """Workflow runs whose runs fed the comparisons (the PR's ledger); shown when over 1."""
    earlier: tuple[str, ...] = ()
    """Comparisons an earlier workflow run labelled otherwise, one line each."""
    reproduce: str | None = None
    """The one-line command that reproduces this comparison locally; None: built from `base_sha`
    (`evolve-action pr --local --base <sha>`)."""


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


def _short(sha: str) -> str:
    return sha[:7] if re.fullmatch(r"[0-9a-fA-F]{7,64}", sha) else _cell(sha)


def _label_text(label: Label) -> str:
    return f"{EMOJI[label]} {label.value}".strip()


def _tier_cell(t: TierComparison | None) -> str:
    """`92 % → 38 % · **−54 pts** · 🔴 regression`; a tier the PR did not re-run has no label."""
    if t is None:
        return EM
    if t.label is Label.NOT_RERUN:
        return f"{_pct(t.head_score)} · not re-run" + _added(t)
    if t.label is Label.AUTHORING_ERROR:
        return f"{_label_text(t.label)}: not run"
    if t.label is Label.NOT_EVALUATED:
        if t.head_score is None:
            return _label_text(t.label)
        return f"{_label_text(t.label)} · stored {_pct(t.head_score)} is out of date"
    if t.label is Label.BASE_UNKNOWN:
        return f"? → {_pct(t.head_score)} · {_label_text(t.label)}"
    if t.label in (Label.NEW, Label.REMOVED):
        return f"{_pct(t.base_score)} → {_pct(t.head_score)} · {_label_text(t.label)}"
    delta = _pts(t.delta)
    if t.label in (Label.REGRESSION, Label.IMPROVEMENT):
        delta = f"**{delta}**"
    parts = [f"{_pct(t.base_score)} → {_pct(t.head_score)}"]
    if t.delta is not None:
        parts.append(delta)
    parts.append(_label_text(t.label))
    if t.tier is Tier.EVALS and t.test is not None and t.test.cases:
        parts.append(_runs_a_side(t.test.base_runs, t.test.head_runs, t.test.cases))
    return " · ".join(parts)


def _runs_a_side(base_runs: int, head_runs: int, cases: int) -> str:
    """The evals cell's runs per case on each side (`3 runs a side`, `1 → 4 runs a side`): one
    run a side is why a handful of cases cannot tell a change from noise."""
    b, h = round(base_runs / cases), round(head_runs / cases)
    return f"{b} run{'s' if b != 1 else ''} a side" if b == h else f"{b} → {h} runs a side"


def _added(t: TierComparison) -> str:
    """` · 1 new query: 1/1 passing` when the head has cases the base lacks (they ran for this
    PR, outside the paired test); "" otherwise."""
    if not t.added:
        return ""
    unit = ("query" if t.added == 1 else "queries") if t.tier is Tier.TRIGGERS else "case"
    if t.tier is not Tier.TRIGGERS and t.added != 1:
        unit = "cases"
    return f" · {t.added} new {unit}: {t.added_passed}/{t.added} passing"


def _skill_name(row: ComparisonRow) -> str:
    return f"{row.plugin}/{row.skill}" if row.plugin else row.skill


def _slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _skill_cell(row: ComparisonRow, evaluation_url: str | None) -> str:
    name = _cell(_skill_name(row))
    url = _url(evaluation_url)
    if url is None:
        return name
    return f"[{name}]({url}#{quote(_slug(row.plugin or row.skill))})"


def _cells(row: ComparisonRow, evaluation_url: str | None) -> tuple[str, ...]:
    return (
        _skill_cell(row, evaluation_url),
        _cell(row.display),
        _tier_cell(row.triggers),
        _tier_cell(row.evals),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _TierDetail:
    line: str
    bullets: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _RowDetail:
    heading: str
    tiers: tuple[_TierDetail, ...]
    newly_failing: tuple[str, ...]
    fixed: tuple[str, ...]


_STATUS_MARK = {
    CaseStatus.REGRESSED: "❌ newly failing",
    CaseStatus.STILL_FAILING: "❌ still failing",
    CaseStatus.NO_BASE: "❌ failing (no base verdict)",
    CaseStatus.ERRORED: "⚠️ errored (excluded)",
}


def _verdicts(r: Rate | None) -> str:
    if r is None:
        return EM
    text = f"{r.passed}/{r.n}" if r.n else EM
    if r.invalid:
        text += f" +{r.invalid} errored"
    return text


def _tier_detail(t: TierComparison) -> _TierDetail:
    unit = "queries" if t.tier is Tier.TRIGGERS else "cases"
    line = f"{t.tier.value.capitalize()}: {_label_text(t.label)}: {github_text(t.reason)}"
    line += f"; {unit} passing {_verdicts(t.base)} → {_verdicts(t.head)}"
    if t.flips is not None:
        line += f"; verdict flips {t.flips.down} ↓ {t.flips.up} ↑ of {t.flips.shared} shared"
    if t.unpaired:
        line += f"; {t.unpaired} case{'s' if t.unpaired != 1 else ''} valid on one side only"
    if t.lift_base is not None or t.lift_head is not None:
        line += f"; lift vs no skill {_pts(t.lift_base)} → {_pts(t.lift_head)}"
    if t.base_reruns:
        line += f"; {t.base_reruns} base runs made for this PR"
    if t.extra_head_runs:
        line += f"; {t.extra_head_runs} extra head runs made for this PR"
    if t.test is not None and (t.base_reruns or t.extra_head_runs):
        line += f"; the verdict used {t.test.base_runs} base and {t.test.head_runs} head runs"
    if t.more_runs:
        per = "query" if t.tier is Tier.TRIGGERS else "case"
        line += f"; about {t.more_runs} more runs per {per} per side would decide it"
    bullets = []
    failing = [f for f in t.failing if f.status is not CaseStatus.REGRESSED]  # listed above
    for f in failing[:MAX_FAILING_LISTED]:
        name = f"{f.key} ({f.name})" if f.name else f.key
        bullets.append(f"{_STATUS_MARK[f.status]}: {_cell(name)}: {_cell(f.detail)}")
    hidden = len(failing) - MAX_FAILING_LISTED
    if hidden > 0:
        bullets.append(f"… and {hidden} more (see EVALUATION.md)")
    return _TierDetail(line=line, bullets=tuple(bullets))


def _flip_lines(row: ComparisonRow, fixed: bool, with_model: bool) -> tuple[str, ...]:
    out: list[str] = []
    who = _cell(row.skill) + (f" on {_cell(row.display)}" if with_model else "")
    for t in row.tiers:
        cases = [f for f in t.flipped if f.fixed is fixed]
        for f in cases[:MAX_FLIPPED_LISTED]:
            name = f"{f.key} ({f.name})" if f.name else f.key
            out.append(f"{who} {t.tier.value}: {_cell(name)} — {_cell(f.detail)}")
        if len(cases) > MAX_FLIPPED_LISTED:
            out.append(f"… and {len(cases) - MAX_FLIPPED_LISTED} more {t.tier.value} cases")
    return tuple(out)


def _row_detail(row: ComparisonRow, with_model: bool) -> _RowDetail:
    heading = f"{_cell(_skill_name(row))} · {_cell(row.display)}"
    return _RowDetail(
        heading=heading,
        tiers=tuple(_tier_detail(t) for t in row.tiers),
        newly_failing=_flip_lines(row, False, with_model),
        fixed=_flip_lines(row, True, with_model),
    )


def _move(t: TierComparison) -> str:
    return f"from {_pct(t.base_score)} to {_pct(t.head_score)}"


_VERBS = {
    Label.REGRESSION: ("fell", "a regression beyond noise"),
    Label.AUTHORING_ERROR: ("", "authoring error: the definition is invalid, so nothing ran"),
    Label.NOT_EVALUATED: ("", "not evaluated"),
    Label.IMPROVEMENT: ("rose", "an improvement beyond noise"),
    Label.UNDECIDED: ("moved", "undecided: more runs would tell"),
}


def _verdict(rows: Sequence[ComparisonRow], facts: RunFacts) -> str:
    """The first line: the verdict in words, and the Tier 0 errors that stand in its way."""
    errors = sum(1 for c in facts.checks if c.error)
    text = _rows_verdict(rows, facts)
    if errors:
        text += f" · ❌ {errors} Tier 0 error{'s' if errors != 1 else ''}"
    return text


def _rows_verdict(rows: Sequence[ComparisonRow], facts: RunFacts) -> str:
    if not rows:
        if facts.no_evals:
            n = len(facts.no_evals)
            return (
                f"➖ not evaluated: {'the touched skill has' if n == 1 else f'{n} touched skills have'} "
                "no evals yet, so nothing was measured"
            )
        if any(c.error for c in facts.checks):
            return "Tier 0 checks failed on the touched skills; no results to compare"
        return "No touched skill has stored results on either side yet"
    skills = len({(r.plugin, r.skill) for r in rows})
    several_models = len({r.model_key for r in rows}) > 1
    counts = label_counts(rows)
    told = (
        Label.REGRESSION,
        Label.AUTHORING_ERROR,
        Label.NOT_EVALUATED,
        Label.IMPROVEMENT,
        Label.UNDECIDED,
    )
    for label in told:
        hit = [(r, t) for r in rows for t in r.tiers if t.label is label]
        if not hit:
            continue
        row, tier = hit[0]
        several = several_models and row.model_key
        who = _cell(row.skill) + (f" on {_cell(row.display)}" if several else "")
        verb, words = _VERBS[label]
        if label is Label.AUTHORING_ERROR:
            text = f"{EMOJI[label]} {who} {tier.tier.value}: {words}"
        elif label is Label.NOT_EVALUATED:
            text = f"{EMOJI[label]} not evaluated: {who} {tier.tier.value}, {_cell(tier.reason)}"
        else:
            text = f"{EMOJI[label]} {who} {tier.tier.value} {verb} {_move(tier)} — {words}"
        more = [f"{EMOJI[lbl]} {n} {lbl.value}" for lbl, n in counts.items() if lbl in told and n]
        if len({id(r) for r, _ in hit}) > 1 or len(more) > 1:
            text += f" ({', '.join(more)} in {len(rows)} skill × model rows)"
        return text
    if Label.NOT_COMPARABLE in counts:
        row = next(r for r in rows if r.label is Label.NOT_COMPARABLE)
        return f"{EMOJI[Label.NOT_COMPARABLE]} {_cell(row.skill)}: not comparable (different model or harness)"
    plural = "s" if skills != 1 else ""
    if set(counts) == {Label.NOT_RERUN}:  # nothing compared: never green
        added = sum(t.added for r in rows for t in r.tiers)
        text = f"➖ nothing to compare in {skills} skill{plural}: no shared case was re-run"
        if added:
            text += f" ({added} new case{'s' if added != 1 else ''} ran: see the table)"
        return text
    new = counts.get(Label.NEW, 0)
    removed = counts.get(Label.REMOVED, 0)
    unknown = counts.get(Label.BASE_UNKNOWN, 0)
    if unknown and unknown + new == len(rows):
        return (
            f"{EMOJI[Label.BASE_UNKNOWN]} the base's results of {skills} skill{plural} could not "
            "be read: nothing to compare with (see the note)"
        )
    if new and new == len(rows):
        return (
            f"{EMOJI[Label.NEW]} first results for {skills} skill{plural}: nothing to compare yet"
        )
    text = f"✅ no change in {skills} skill{plural}"
    pairs = ((Label.NEW, new), (Label.REMOVED, removed), (Label.BASE_UNKNOWN, unknown))
    extra = [f"{n} {lbl.value}" for lbl, n in pairs if n]
    if extra:
        rows_told = new + removed + unknown
        text += f" ({', '.join(extra)} skill × model row{'s' if rows_told != 1 else ''})"
    return text


def _run_line(facts: RunFacts, rev: Revision) -> str:
    runs = f"{facts.sessions_run} agent session{'s' if facts.sessions_run != 1 else ''}"
    if rev.base_reruns:
        runs += f" ({rev.base_reruns} of them re-ran the base)"
    if facts.not_run:
        why = f": {_cell(facts.not_run_reason)}" if facts.not_run_reason else ""
        runs += f", {facts.not_run} stale or missing case{'s' if facts.not_run != 1 else ''} not run{why}"
    if facts.sessions_skipped:
        runs += f", {facts.sessions_skipped} skipped (results up to date)"
    parts = [
        runs,
        *_attempts(rev),
        f"cost {usd(facts.cost_usd)}" if facts.cost_usd is not None else "cost not measured",
    ]
    if rev.base_sha or rev.head_sha:
        head = f"`{_short(rev.head_sha)}`" if rev.head_sha else "head"
        if rev.dirty:
            head += " + uncommitted changes"
        base = f"`{_short(rev.base_sha)}`" if rev.base_sha else "base"
        parts.append(f"{base} → {head}")
    elif rev.dirty:
        parts.append("head has uncommitted changes")
    ev = _url(facts.evaluation_url)
    if ev:
        parts.append(f"[EVALUATION.md]({ev})")
    run = _url(facts.run_url)
    if run:
        parts.append(f"[workflow run]({run})")
    return " · ".join(parts)


def _attempts(rev: Revision) -> list[str]:
    """The footer's word on the PR's ledger: runs from several workflow runs, earlier labels."""
    if rev.workflow_runs < 2:
        return []
    return [f"verdict from runs over {rev.workflow_runs} workflow runs", *rev.earlier]


def _reproduce(rev: Revision) -> str | None:
    if rev.reproduce is not None:
        command = clean_text(rev.reproduce).replace("\n", " ").replace("`", "")
    elif rev.base_sha:
        command = f"evolve-action pr --local --base {_short(rev.base_sha)}"
    else:
        return None
    return f"Reproduce locally: `{command}`" if command else None


def _check_lines(facts: RunFacts, error: bool) -> list[str]:
    mark = "❌" if error else "⚠️"
    found = [c for c in facts.checks if c.error is error]
    lines = [f"{mark} {_cell(c.where)}: {_cell(c.message)}" for c in found[:MAX_CHECKS_LISTED]]
    if len(found) > MAX_CHECKS_LISTED:
        lines.append(
            f"… and {len(found) - MAX_CHECKS_LISTED} more (see `evolve-action run checks`)"
        )
    return lines


def _undecided_step(rows: Sequence[ComparisonRow], facts: RunFacts) -> str | None:
    """The next step of the undecided tiers, once under the table (None when none is undecided):
    triggers decide with more runs (`max_runs`, `max_cost_usd`: the flow's hint), evals with more
    cases (one run each)."""
    tiers = {t.tier for r in rows for t in r.tiers if t.label is Label.UNDECIDED}
    if not tiers:
        return None
    steps = []
    if Tier.TRIGGERS in tiers:
        hint = (
            _cell(facts.undecided_hint)
            if facts.undecided_hint
            else (
                "more runs would tell: raise `max_runs` (the action input or `pr.max_runs` in "
                ".evolve.yaml) and give `max_cost_usd` room for them"
            )
        )
        steps.append(f"triggers: {hint}" if Tier.EVALS in tiers else hint)
    if Tier.EVALS in tiers:
        text = _evals_step(rows, facts)
        steps.append(f"evals: {text}" if Tier.TRIGGERS in tiers else text)
    return "🟡 undecided: " + "; ".join(steps)


def _evals_step(rows: Sequence[ComparisonRow], facts: RunFacts) -> str:
    """The next step of undecided eval tiers: with power on demand's runs, the flow's hint and
    about how many more runs per case would decide it; without (one run a side), more cases or
    room for more runs."""
    undecided = [
        t for r in rows for t in r.tiers if t.tier is Tier.EVALS and t.label is Label.UNDECIDED
    ]
    if not any(t.base_reruns or t.extra_head_runs for t in undecided):
        return (
            "one run a side cannot tell a change of "
            f"{RULED_OUT * 100:.0f} pts from noise: give `max_runs` and `max_cost_usd` room for "
            "more runs, or add cases (docs/authoring.md)"
        )
    more = max((t.more_runs or 0 for t in undecided), default=0)
    hint = _cell(facts.undecided_hint) if facts.undecided_hint else "more runs would tell"
    return hint + (f" (about {more} more runs per case would decide it)" if more else "")


def _skill_arg(key: str) -> str:
    """A `plugin/skill` key as a shell-safe `--skill` value (the bare name when it is plain)."""
    name = key.rpartition("/")[2]
    return name if re.fullmatch(r"[A-Za-z0-9._-]+", name) else "<name>"


def _legend() -> str:
    return (
        "Rates are like for like over the cases both sides share: triggers, the share of runs "
        "that behaved as expected; evals, the share of runs that passed. "
        f"🔴/🟢 = exact stratified test at {ALPHA:g} per direction and a change of at least "
        f"{MATERIAL * 100:.0f} pts; ✅ = under {MATERIAL * 100:.0f} pts with a "
        f"{RULED_OUT * 100:.0f}-pt change ruled out at {NO_CHANGE_ALPHA:g} per direction; "
        "🟡 = neither yet; each level is spent over the looks, so extra runs do not raise the "
        "error rate. "
        "Errored cases are excluded, never counted as failures. "
        "The rule: docs/pr-comment.md."
    )


def _severity(row: ComparisonRow) -> int:
    return tuple(Label).index(row.label)


def render_pr_comment(
    rows: Sequence[ComparisonRow],
    facts: RunFacts,
    *,
    revision: Revision | None = None,
    budget: int = DEFAULT_BUDGET,
) -> str:
    """The sticky comment's Markdown for `rows` (from `compare`) and `facts`.

    First line: the verdict in words. Then one row per skill × model (triggers and evals: base →
    head, change, label; no label on a tier the PR did not re-run), the cases that flipped each
    way, the statistics and failing cases in one collapsed `<details>` with a legend line, and
    what this run did (sessions, cost, short SHAs, links) with a command to reproduce it. Over
    `revision` adds the short SHAs, the uncommitted-changes flag, the base reruns and the command
    (none of them when omitted). Over `budget` (UTF-16 code units; at most `COMMENT_LIMIT`), the per-row details (flips,
    statistics, failing cases) are dropped first, then the least severe rows, and the body says
    so; the verdict line is always kept.
    """
    if budget > COMMENT_LIMIT:
        raise ValueError(f"budget {budget} exceeds GitHub's limit of {COMMENT_LIMIT}")
    rows = list(rows)
    rev = revision or Revision()
    template = environment().get_template("pr_comment.md.j2")
    digest = evidence_digest(rows)
    context = {
        "marker": facts.marker,
        "digest": digest,
        "title": _cell(facts.title),
        "verdict": _verdict(rows, facts),
        "check_errors": _check_lines(facts, True),
        "check_warnings": _check_lines(facts, False),
        "check_warning_count": sum(1 for c in facts.checks if not c.error),
        "no_evals": [_cell(k) for k in facts.no_evals],
        "no_evals_step": NEXT_STEP_NO_EVALS.format(
            skill=_skill_arg(facts.no_evals[0]) if len(facts.no_evals) == 1 else "<name>"
        ),
        "undecided": _undecided_step(rows, facts),
        "legend": _legend(),
        "run_line": _run_line(facts, rev),
        "reproduce": _reproduce(rev),
        "notes": [_note(n) for n in facts.notes],
    }
    all_cells = [_cells(r, facts.evaluation_url) for r in rows]
    several_models = len({r.model_key for r in rows}) > 1
    details = {
        i: _row_detail(r, several_models)
        for i, r in enumerate(rows)
        if r.label not in (Label.NOT_RERUN, Label.NOT_EVALUATED)  # no evidence of this PR
    }

    def body(shown: Sequence[int], detailed: Collection[int], omitted: Sequence[str]) -> str:
        kept = [details[i] for i in shown if i in detailed and i in details]
        return template.render(
            rows=[all_cells[i] for i in shown],
            details=kept,
            newly_failing=[line for d in kept for line in d.newly_failing],
            fixed=[line for d in kept for line in d.fixed],
            omitted=list(omitted),
            **context,
        )

    def fits(text: str) -> bool:
        return comment_length(text) <= budget

    everything = list(range(len(rows)))
    text = body(everything, details, ())
    if fits(text):
        return _checked(text, facts.marker)
    # 1. Drop per-row details, least severe rows first.
    by_severity = sorted(everything, key=lambda i: (-_severity(rows[i]), i))
    with_detail = [i for i in reversed(by_severity) if i in details]

    def without_details(kept: int) -> str:
        note = (
            f"Details of {len(with_detail) - kept} of {len(with_detail)} rows (flipped cases, "
            f"statistics, failing cases) were left out, least severe first, to keep this comment "
            f"under GitHub's {COMMENT_LIMIT:,}-character limit; EVALUATION.md has them."
        )
        return body(everything, set(with_detail[:kept]), (note,))

    best = _largest(len(with_detail) - 1, without_details, fits)
    if best is not None:
        return _checked(best, facts.marker)
    # 2. Drop rows, least severe first; the verdict line always stays.
    no_details = (
        "Details were left out to keep this comment under GitHub's "
        f"{COMMENT_LIMIT:,}-character limit; EVALUATION.md has them."
    )
    most_severe_first = list(reversed(by_severity))

    def without_rows(kept: int) -> str:
        left = [rows[i] for i in most_severe_first[kept:]]
        counts = ", ".join(f"{n} {lbl.value}" for lbl, n in label_counts(left).items())
        note = (
            f"{len(left)} of {len(rows)} rows were left out ({counts}), least severe first, "
            "to stay under the limit; EVALUATION.md has every row."
        )
        return body(sorted(most_severe_first[:kept]), (), (no_details, note))

    best = _largest(len(rows) - 1, without_rows, fits)
    if best is None:  # even the verdict alone is too long (huge notes): drop the notes
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
