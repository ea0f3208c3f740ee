"""Stage 4 of the PR job: publishing — the commit-back, the sticky comment, the outputs, the cost
line of the summary, and what the token may write.

Owns: `commit_back` → `CommitBack` (only the lexical paths the job wrote, never under
`.github/`), `checkout_matches`, `post_comment` → `Posted` (one sticky comment, rewritten only
when its digest changes), `outputs_of`, `cost_line`, `evaluation_url`, `read_only` (the scopes a
token is known not to write, before any write), and a labelled fork run's state in its sticky
comment (`fork_carry` → `ForkCarry`, read and its results restored before the evaluation;
`with_state`, written with the comment); what each step has to say comes back as `Said`
(notices and log lines, in order).
Guarantees: a GitHub failure here is a notice; the results on disk, the summary and the outputs
are still written. Never does: run sessions, decide labels, or write to the workflow-command
stream (the composition does)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evolve_action.flows._pr_carry import (
    CommentStore,
    file_sha,
    load_carried,
    restore_results,
    state_line,
    state_of,
)
from evolve_action.flows._pr_compare import pooled, result_files, snapshot
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
    MAX_COMMENT_CHARS,
    ActionInputs,
    ActionOutputs,
    Committed,
    Event,
    FileChange,
    GitHubApiError,
    GitHubClient,
    GitHubContext,
    HeadMoved,
    Status,
    Touched,
    checkout_kind,
    declared_permissions,
    read_only_scopes,
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


# ------------------------------------------------------------------------------------------------
# What the token may write, and a labelled fork run's state
# ------------------------------------------------------------------------------------------------


def read_only(
    job: JobContext,
    inputs: ActionInputs,
    ctx: GitHubContext,
    env: Mapping[str, str],
    workspace: Path,
) -> tuple[frozenset[str], Said]:
    """The scopes (`contents`, `pull-requests`) a same-repository PR's token is known not to
    write before any write is tried (`read_only_scopes`), with one notice saying what that skips."""
    client, pr = job.client, ctx.pull_request
    if (
        client is None
        or pr is None
        or ctx.is_fork
        or (not inputs.commit and inputs.comment == "off")
    ):
        return frozenset(), Said()
    try:
        login = client.identity(configured=inputs.comment_author or None).login
    except GitHubApiError:
        login = None
    denied, why = read_only_scopes(ctx, declared_permissions(env, workspace), login)
    skipped = []
    if "contents" in denied and inputs.commit:
        skipped.append("the results are not committed and the PR's ledger is only read")
    if "pull-requests" in denied and inputs.comment != "off":
        skipped.append("no PR comment is posted")
    if not skipped:
        return denied, Said()
    grant = ", ".join(f"{s}: write" for s in sorted(denied))
    note = (
        f"the token is read-only here ({why}): {'; '.join(skipped)}; everything is in this "
        f"summary (grant the job `permissions: {grant}` to publish)"
    )
    return denied, Said((("note", note),))


@dataclass(frozen=True, slots=True)
class ForkCarry:
    """A labelled fork run's state: the ledger store riding in the sticky comment, and the bytes
    of the touched skills' results files in the head's checkout (what the state is tied to)."""

    store: CommentStore
    checkout: Mapping[Path, bytes | None]


def fork_carry(
    job: JobContext, ctx: GitHubContext, inputs: ActionInputs, touched: Touched
) -> tuple[ForkCarry | None, Said]:
    """A labelled fork run (`pull_request_target`) can write only its sticky comment: the ledger
    and the results it measured ride there, so a relabel of the same content starts no session.
    The carried state, its results files restored (None: not such a run)."""
    client, pr = job.client, ctx.pull_request
    if (
        pr is None
        or not ctx.is_fork
        or ctx.event is not Event.PULL_REQUEST_TARGET
        or client is None
        or inputs.comment == "off"
    ):
        return None, Said()
    said: list[tuple[Literal["note", "line"], str]] = []
    checkout = snapshot(job.repo, touched)
    carried, why = load_carried(client, ctx.repository, pr.number, inputs.comment_author)
    if why:
        said.append(("note", f"{why}; earlier runs are not reused"))
    if restored := restore_results(carried, checkout, job.top):
        said.append(
            (
                "line",
                f"restored {len(restored)} results file(s) this PR's earlier labelled run "
                "measured on the same content (from the sticky comment)",
            )
        )
    return ForkCarry(CommentStore(carried.ledger), checkout), Said(tuple(said))


def with_state(body: str, carry: ForkCarry, top: Path) -> tuple[str, Said]:
    """`body` with the state line of a labelled fork run: its ledger and the results files it
    wrote, each tied to the bytes the head's checkout held."""
    results = {}
    for path, original in carry.checkout.items():
        now = path.read_bytes() if path.is_file() else None
        if now is not None and now != original and (rel := inside_top(path, top)) is not None:
            results[rel] = (file_sha(original), now)
    line, left = state_line(carry.store.ledger, results)
    if line and len(body) + len(line) + 200 > MAX_COMMENT_CHARS:  # the report comes first
        line, left = "", "the results files and the ledger of runs"
    said = Said()
    if left:
        said = Said(
            (
                (
                    "line",
                    f"the sticky comment's state left out {left} (over its size bound): a relabel "
                    "of the same content runs them again",
                ),
            )
        )
    return (f"{body.rstrip()}\n\n{line}\n" if line else body), said
