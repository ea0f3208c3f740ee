"""Stage 4 of the PR job: publishing — the commit-back, the sticky comment, the outputs, the cost
line of the summary.

Owns: `commit_back` → `CommitBack` (only the lexical paths the job wrote, never under
`.github/`), `checkout_matches`, `post_comment` → `Posted` (one sticky comment, rewritten only
when its digest changes), `outputs_of`, `cost_line`, `evaluation_url`; what each step has to say
comes back as `Said` (notices and log lines, in order).
Guarantees: a GitHub failure here is a notice; the results on disk, the summary and the outputs
are still written. Never does: run sessions, decide labels, or write to the workflow-command
stream (the composition does)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evolve_action.flows._pr_carry import state_of
from evolve_action.flows._pr_compare import pooled, result_files
from evolve_action.flows._pr_job import (
    COMMENT_MARKER,
    Estimate,
    JobContext,
    inside_top,
    report_rel,
    run_git,
)
from evolve_action.flows._pr_touched import (
    without_evals,
)
from evolve_action.github import (
    ActionInputs,
    ActionOutputs,
    Committed,
    FileChange,
    GitHubApiError,
    GitHubClient,
    GitHubContext,
    HeadMoved,
    Status,
    Touched,
    checkout_kind,
)
from evolve_action.repo import CONFIG_NAMES, Repository
from evolve_action.report import (
    ComparisonRow,
    Label,
    RunFacts,
    digest_of,
    evidence_digest,
)


@dataclass(frozen=True, slots=True)
class Said:
    """What a publishing step has to say, in order: `("note", text)` (the comment, the summary and
    an annotation) or `("line", text)` (the job log)."""

    entries: tuple[tuple[Literal["note", "line"], str], ...] = ()


@dataclass(frozen=True, slots=True)
class CommitBack:
    """The commit-back: the new SHA ("" when nothing was committed), whether it failed the job
    (files outside the checkout), and what it has to say."""

    sha: str = ""
    errored: bool = False
    said: Said = Said()


@dataclass(frozen=True, slots=True)
class Posted:
    """The sticky comment: its id (None: none posted) and what posting it has to say."""

    comment_id: int | None = None
    said: Said = Said()


def checkout_matches(job: JobContext, ctx: GitHubContext, touched: Touched) -> tuple[bool, Said]:
    """A PR's results may be committed only when they were measured on its head's content.

    The head checkout is. GitHub's test merge (`pull_request`'s default checkout) is only when
    every path the touched skills' results depend on (their skill and eval directories, suite
    files, the repository config) is identical in the merge and the head: when the base changed
    one since the PR branched, the results describe merged content, not the branch they would be
    committed to (one notice, no commit). `pull_request_target` checks out the base by default:
    results computed there are not the PR's, so they are never committed onto its branch.
    """
    repo, top, genv, client = job.repo, job.top, job.genv, job.client
    pr = ctx.pull_request
    if pr is None:
        return True, Said()
    head = run_git(top, genv, "rev-parse", "HEAD").stdout.strip()
    kind = checkout_kind(ctx, head)
    if kind == "head":
        return True, Said()
    if kind == "merge":
        differing = _merge_differs(
            pr.head_sha, top, genv, _depends_on(repo, touched, top), client, ctx.repository
        )
        if not differing:
            return True, Said()
        shown = ", ".join(differing[:3]) + (" …" if len(differing) > 3 else "")
        return False, Said(
            (
                (
                    "note",
                    f"the results were not committed: they were measured on GitHub's test merge, "
                    f"and the base changed what they depend on since the PR branched ({shown}), so "
                    "they do not describe the PR head; check out "
                    "github.event.pull_request.head.sha to commit them",
                ),
            )
        )
    return False, Said(
        (
            (
                "note",
                f"the workspace holds {head[:12] or 'no commit'}, neither the PR head nor its "
                "test merge (pull_request_target checks out the base by default): the results "
                "were not committed; check out github.event.pull_request.head.sha",
            ),
        )
    )


def _depends_on(repo: Repository, touched: Touched, top: Path) -> list[str]:
    """Repository-relative paths (files or directories) the touched skills' results depend on."""
    wanted = {(s.plugin, s.skill) for s in touched.skills}
    paths = [repo.root / name for name in CONFIG_NAMES]
    for es in repo.eval_sets():
        if (es.plugin, es.skill) in wanted:
            paths += [es.skill_dir, es.results_dir, *es.suite_paths]
    out = []
    for p in paths:
        try:
            out.append(p.resolve().relative_to(top.resolve()).as_posix())
        except ValueError:
            continue
    return sorted(set(out))


def _merge_differs(
    head_sha: str,
    top: Path,
    genv: Mapping[str, str],
    paths: Sequence[str],
    client: GitHubClient | None,
    repository: str,
) -> list[str]:
    """The paths (under `paths`) whose content differs between the checked-out merge and the PR
    head: by git when the clone holds the head commit, else through the API's tree of the head.
    Unknown (no head commit here and no API) counts as differing."""
    if not paths:
        return []
    if run_git(top, genv, "cat-file", "-e", f"{head_sha}^{{commit}}").returncode == 0:
        diff = run_git(
            top, genv, "diff", "--name-only", "--no-renames", head_sha, "HEAD", "--", *paths
        )
        if diff.returncode != 0:
            return [f"(git diff failed: {diff.stderr.strip()[:200]})"]
        return diff.stdout.splitlines()
    listed = run_git(top, genv, "ls-tree", "-r", "-z", "HEAD", "--", *paths).stdout
    here: dict[str, tuple[str, str]] = {}
    for record in filter(None, listed.split("\0")):
        meta, _, path = record.partition("\t")
        mode, _kind, sha = meta.split()
        here[path] = (mode, sha)
    if client is None:
        return ["(the head commit is not in the clone)"]
    try:
        theirs = client.repository(repository).tree_blobs(head_sha)
    except GitHubApiError as exc:
        return [f"(the head's tree could not be read: {exc.message})"]
    if theirs is None:
        return ["(GitHub truncated the head's tree)"]

    def under(path: str) -> bool:
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)

    head_files = {p: v for p, v in theirs.items() if under(p)}
    return sorted(p for p in set(here) | set(head_files) if here.get(p) != head_files.get(p))


def commit_back(
    client: GitHubClient,
    ctx: GitHubContext,
    inputs: ActionInputs,
    repo: Repository,
    top: Path,
    touched: Touched,
    written: Sequence[Path],
    before: Mapping[Path, bytes | None],
) -> CommitBack:
    """Commit the changed results files and reports on the evaluated head."""
    said: list[tuple[Literal["note", "line"], str]] = []
    errored = False
    pr = ctx.pull_request
    if pr is not None:
        if ctx.is_fork:
            note = (
                "fork PR: the results were not committed (the token cannot push to a fork); "
                "they are in the step summary"
            )
            return CommitBack(said=Said((("note", note),)))
        branch, parent = pr.head_ref, pr.head_sha
    elif ctx.ref.startswith("refs/heads/"):
        branch, parent = ctx.ref.removeprefix("refs/heads/"), ctx.sha
    else:
        return CommitBack()
    paths = [p for p in result_files(repo, touched) if p.read_bytes() != before.get(p)]
    paths += [p for p in written if p.is_file()]
    changes = []
    outside = []
    for p in dict.fromkeys(paths):
        rel = inside_top(p, top)
        if rel is None:
            outside.append(p)
        else:
            changes.append(FileChange(rel, p.read_bytes()))
    if outside:
        shown = ", ".join(str(p) for p in outside[:3]) + (" …" if len(outside) > 3 else "")
        errored = True
        said.append(
            (
                "note",
                f"not committed: {len(outside)} file(s) outside the repository {top}, under "
                f".github/ or going through a link ({shown}); nothing outside the checkout, no "
                "workflow and nothing through a link is ever committed",
            )
        )

    def done(sha: str = "") -> CommitBack:
        return CommitBack(sha=sha, errored=errored, said=Said(tuple(said)))

    if not changes:
        return done()
    try:
        result = client.repository(ctx.repository).commit_files(
            branch=branch, parent_sha=parent, changes=changes, message=inputs.commit_message
        )
    except GitHubApiError as exc:
        said.append(("note", f"the results were not committed: {exc.message}"))
        return done()
    if isinstance(result, HeadMoved):
        said.append(("note", result.notice()))
        return done()
    if isinstance(result, Committed):
        said.append(("line", f"committed {len(result.paths)} file(s) as {result.sha[:12]}"))
        return done(result.sha)
    return done()


def post_comment(
    client: GitHubClient,
    ctx: GitHubContext,
    inputs: ActionInputs,
    rows: Sequence[ComparisonRow],
    body: str,
) -> Posted:
    """Create or update the sticky comment per `comment`; an unchanged evidence digest writes nothing."""
    pr = ctx.pull_request
    assert pr is not None
    said: list[tuple[Literal["note", "line"], str]] = []
    try:
        identity = client.identity(configured=inputs.comment_author or None)
        author = identity.login
        if author is None:
            said.append(
                (
                    "line",
                    "comment: the token's identity is unknown (GitHub's API did not say; set "
                    "`comment_author`); our comment is one whose record names its own id and "
                    "author, else a new one is posted",
                )
            )
        rc = client.repository(ctx.repository)
        existing = rc.find_sticky_comment(pr.number, COMMENT_MARKER, author)
        digest = evidence_digest(rows)
        if (
            existing is not None
            and digest_of(existing.body) == digest
            and state_of(existing.body) == state_of(body)
        ):
            # same evidence: leave it alone (no rewrite, no notification)
            return Posted(existing.id, Said(tuple(said)))
        wanted = inputs.comment == "always" or existing is not None
        if inputs.comment == "changes":  # only when the verdict is not "no change" (or to update)
            wanted = existing is not None or any(
                r.label not in (Label.NO_CHANGE, Label.NOT_RERUN) for r in rows
            )
        if inputs.comment == "failures":
            wanted = existing is not None or any(
                r.label in (Label.REGRESSION, Label.AUTHORING_ERROR, Label.NOT_EVALUATED)
                or any(t.failing for t in r.tiers)
                for r in rows
            )
        if not wanted:
            return Posted(existing.id if existing is not None else None, Said(tuple(said)))
        result = rc.upsert_sticky_comment(pr.number, body, marker=COMMENT_MARKER, author=author)
    except GitHubApiError as exc:
        said.append(("note", f"the PR comment was not posted: {exc.message}"))
        return Posted(None, Said(tuple(said)))
    return Posted(result.id, Said(tuple(said)))


# ------------------------------------------------------------------------------------------------
# Outputs and small helpers
# ------------------------------------------------------------------------------------------------


def outputs_of(
    rows: Sequence[ComparisonRow],
    touched: Touched,
    facts: RunFacts,
    comment_id: int | None,
    commit_sha: str,
    repo: Repository,
    top: Path,
    *,
    errored: bool,
    check_failures: int,
    sessions: int,
) -> ActionOutputs:
    labels = [r.label for r in rows]
    # The most severe row label (`Label` order: regression, authoring error, improvement, …).
    delta = next((str(lbl) for lbl in Label if lbl in labels), "")
    status: Status = "passed"
    if errored:
        status = "errored"
    elif Label.REGRESSION in labels:
        status = "regressed"
    elif check_failures:
        status = "failed"
    elif Label.NOT_EVALUATED in labels or (without_evals(repo, touched) and not rows):
        status = "not-evaluated"
    return ActionOutputs(
        status=status,
        evaluated_skills=touched.keys,
        triggers_pass_rate=pooled(rows, "triggers"),
        evals_pass_rate=pooled(rows, "evals"),
        delta=delta,
        cost_usd=facts.cost_usd or 0.0,
        sessions=sessions,
        comment_id=comment_id,
        commit_sha=commit_sha,
        report_path=report_rel(repo, top),
    )


def cost_line(estimate: Estimate) -> str:
    """The job summary's estimate line ("" when nothing was planned): the planned sessions at list
    prices, as a range up to what power on demand may add. The measured cost is the comment's one
    figure (the run line), never restated here."""
    if not estimate.sessions:
        return ""
    low, high = estimate.sessions, estimate.sessions + estimate.power_sessions
    sessions = f"{low}" if high == low else f"{low}–{high}"
    if estimate.usd is None:
        price = "not priced"
    elif high == low:
        price = f"about ${estimate.usd:.2f} at list prices"
    else:
        price = (
            f"about ${estimate.usd:.2f}–${estimate.usd + estimate.power_usd:.2f} at list "
            "prices (the top: power on demand running every comparison to max_runs)"
        )
    return (
        f"\n<sub>Estimated before the run: {sessions} agent sessions, {price}, the prompt cache "
        "counted (one write per shared prefix, reads after). The measured cost of what ran is the "
        "one above.</sub>\n"
    )


def evaluation_url(ctx: GitHubContext, repo: Repository, top: Path) -> str | None:
    pr = ctx.pull_request
    if pr is None or ctx.is_fork:
        return None
    return f"{ctx.server_url}/{ctx.repository}/blob/{pr.head_ref}/{report_rel(repo, top)}"
