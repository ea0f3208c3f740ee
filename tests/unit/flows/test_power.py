"""When `base: auto` re-runs the base (flows/_power.py): missing, thin, another harness or version,
early-stopped; good stored evidence is used (and paired runs appended)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from evolve_action.events import RecordingReporter
from evolve_action.flows._ledger import Ledger, LedgerLook, LedgerRun
from evolve_action.flows._power import (
    PowerJob,
    PowerOptions,
    PowerOutcome,
    _auto_reason,
    more_runs,
)
from evolve_action.harness import Budget
from evolve_action.report import SkillEvidence
from evolve_action.results import (
    EntryHeader,
    ModelEntry,
    ResultsFile,
    TriggerResult,
    TriggersEntry,
)


def entry(hits: list[int], runs: int, **header: object) -> TriggersEntry:
    h = EntryHeader(
        provider="anthropic",
        model="claude-sonnet-5",
        harness="claude",
        tool_version="0.1.0",
        executed=True,
        runs_per_query=3,
    )
    h = msgspec.structs.replace(h, **header)  # type: ignore[arg-type]
    results = tuple(
        TriggerResult(query=f"q{i}", should_trigger=True, hits=k, runs=runs, passed=2 * k >= runs)
        for i, k in enumerate(hits)
    )
    return TriggersEntry(header=h, results=results)


HEAD = entry([3, 3, 0], 3)


@pytest.mark.parametrize(
    ("base", "known", "why"),
    [
        (None, True, "no stored base"),
        (None, False, "could not be read"),
        (entry([1, 1, 0], 1, runs_per_query=1), True, "thin stored base (1 runs per query)"),
        (entry([3, 3, 0], 3, harness="codex"), True, "made by codex"),
        (entry([3, 3, 0], 3, tool_version="0.0.9"), True, "made by version 0.0.9"),
        (entry([2, 2, 0], 2), True, ""),  # a 3-run sweep that stopped every query at 2 equal runs
        (entry([2, 1, 0], 2), True, "thin stored base"),  # 1/2 is no stop: 2 fixed runs
        (entry([3, 3, 0], 3), True, ""),
    ],
)
def test_auto_reruns_the_base_when_its_evidence_is_weak(
    base: TriggersEntry | None, known: bool, why: str
) -> None:
    got = _auto_reason(base, HEAD, known)
    assert (why in got) if why else got == ""


def test_an_early_stopped_stored_base_is_used() -> None:
    """Issue 38: an early-stopped sweep of the default runs is the same measurement as the head's
    sweep and the test weighs its records exactly: `auto` uses it (no session), whether it made
    fewer runs per query than planned on average or not."""
    # A 5-run sweep that stopped at 3/3, 3/3 and 3/4 (decided): 3.3 runs per query.
    stopped = entry([3, 3, 3], 3, runs_per_query=5)
    stopped = msgspec.structs.replace(
        stopped, results=(*stopped.results[:2], msgspec.structs.replace(stopped.results[2], runs=4))
    )
    assert _auto_reason(stopped, HEAD, True) == ""
    # The default 3-run sweep, stopped at 2/2, 0/2 and 2/3: 2.3 runs per query.
    default = entry([2, 0, 2], 2)
    default = msgspec.structs.replace(
        default, results=(*default.results[:2], msgspec.structs.replace(default.results[2], runs=3))
    )
    assert _auto_reason(default, HEAD, True) == ""
    # A sweep planned with one run per query is thin, stopped or not.
    assert "thin" in _auto_reason(entry([1, 1], 1, runs_per_query=1), HEAD, True)


# ------------------------------------------------------------------ issue 32: the PR's ledger


def _loop(ledger: Ledger, base: TriggersEntry, head: TriggersEntry) -> PowerOutcome:
    """`more_runs` over one skill with a stored base (no git, no agent can start here)."""

    def file(e: TriggersEntry) -> ResultsFile:
        return ResultsFile(plugin="kit", skill="beta", models={"m": ModelEntry(triggers=e)})

    ev = SkillEvidence(plugin="kit", skill="beta", base=file(base), head=file(head))
    return more_runs(
        [ev],
        PowerJob(
            top=Path("/nonexistent"),
            prefix="",
            base_sha=None,
            environ={},
            genv={},
            options=PowerOptions(base="stored", max_runs=6),
            budget=Budget(limit_usd=0.0),  # nothing may run,
            reporter=RecordingReporter(),
            ledger=ledger,
            attempt="2.1",
        ),
    )


def _ledger(*, closed: bool, t: float) -> tuple[Ledger, TriggersEntry, TriggersEntry]:
    base = entry([3, 3, 3], 3, ran_at="2026-01-01T00:00:00Z", content_hash="B")
    head = entry([3, 0, 3], 3, ran_at="2026-01-02T00:00:00Z", content_hash="H")
    tool = "claude 0.1.0"
    runs = tuple(
        LedgerRun(
            attempt="1.1",
            skill="kit/beta",
            model="m",
            side="head",
            query=r.query,
            should_trigger=True,
            content="H",
            tool=tool,
            hits=k,
            runs=3,
        )
        for r, k in zip(head.results, (3, 0, 3), strict=True)
    )
    look = LedgerLook(
        skill="kit/beta",
        model="m",
        base="B",
        head="H",
        tool=tool,
        attempt="1.1",
        t_prev=0.25,
        t=t,
        final=True,
        label="undecided",
        closed=closed,
    )
    return Ledger(runs=runs, looks=(look,)), base, head


def test_a_closed_comparison_in_the_ledger_is_looked_at_again_with_no_session() -> None:
    out = _loop(*_ledger(closed=True, t=1.0))
    rr = out.reruns["kit/beta"]["m"]
    assert out.sessions == 0 and out.reused == 9
    assert [q.runs for q in rr.head] == [3, 3, 3]  # the earlier workflow run's extra head runs
    assert (rr.t_prev, rr.t, rr.final) == (0.25, 1.0, True)  # the same look, the same slice
    assert out.recorded.empty


def test_ledger_runs_count_against_max_runs_and_close_the_test() -> None:
    out = _loop(*_ledger(closed=False, t=0.5))  # 3 sweep + 3 ledger runs per query = max_runs 6
    rr = out.reruns["kit/beta"]["m"]
    assert out.sessions == 0
    assert (rr.t_prev, rr.t, rr.final) == (0.5, 1.0, True)  # the alpha continues from 0.5
    (look,) = out.recorded.looks
    assert look.closed and look.attempt == "2.1" and look.t_prev == 0.5


# ---------------------------------------------------------------------------------------------
# Issue 32 item 6: extracting the base archive works on every Python 3.11 (with or without
# tarfile's `data` filter, which arrived in 3.11.4) and never writes outside its directory.


@pytest.fixture(params=["filter", "no-filter"])
def tar_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    import tarfile

    if request.param == "no-filter":
        monkeypatch.delattr(tarfile, "data_filter")  # what Python 3.11.0-3.11.3 look like
    return str(request.param)


def _archive(*members: tuple[str, str, str]) -> bytes:
    """A tar of (kind, name, content or link target) members, in order."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for kind, name, value in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                data = value.encode()
                info.size = len(data)
                info.mode = 0o4777  # setuid, world-writable: both dropped
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = {
                "dir": tarfile.DIRTYPE,
                "sym": tarfile.SYMTYPE,
                "hard": tarfile.LNKTYPE,
                "chr": tarfile.CHRTYPE,
                "fifo": tarfile.FIFOTYPE,
            }[kind]
            info.linkname = value
            tar.addfile(info)
    return buf.getvalue()


def test_a_git_archive_extracts_with_or_without_the_filter(tmp_path: Path, tar_path: str) -> None:
    import os
    import subprocess

    from evolve_action.flows._power import materialise_base

    top = tmp_path / "repo"
    (top / "skills" / "a").mkdir(parents=True)
    (top / "skills" / "a" / "SKILL.md").write_text("---\nname: a\n---\n")
    (top / "link.md").symlink_to("skills/a/SKILL.md")
    git = ["git", "-C", str(top), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    into = tmp_path / "base"
    assert materialise_base(top, sha.strip(), {"PATH": os.environ["PATH"]}, into)
    assert (into / "skills" / "a" / "SKILL.md").read_text() == "---\nname: a\n---\n"
    assert (into / "link.md").is_symlink() and (into / "link.md").read_text().startswith("---")


def test_safe_members_keep_their_content_and_lose_dangerous_modes(
    tmp_path: Path, tar_path: str
) -> None:
    from evolve_action.flows._power import extract_tar

    into = tmp_path / "x"
    into.mkdir()
    extract_tar(
        _archive(("dir", "d", ""), ("file", "d/f.txt", "hi"), ("sym", "d/l", "f.txt")), into
    )
    assert (into / "d" / "l").read_text() == "hi"
    assert (into / "d" / "f.txt").stat().st_mode & 0o7022 == 0


HOSTILE = {
    "absolute": [("file", "/tmp/evolve-escape-abs", "x")],
    "dot-dot": [("file", "../escape.txt", "x")],
    "symlink-out": [("sym", "l", "../"), ("file", "l/escape.txt", "x")],
    "absolute-symlink": [("sym", "l", "/etc/passwd")],
    "chained-symlink": [("sym", "a", "."), ("sym", "b", "a/.."), ("file", "b/escape.txt", "x")],
    "hard-link-out": [("hard", "h", "../outside.txt")],
    "device": [("chr", "dev", "")],
    "fifo": [("fifo", "fifo", "")],
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_member_that_could_leave_the_directory_is_refused(
    tmp_path: Path, tar_path: str, case: str
) -> None:
    import tarfile

    from evolve_action.flows._power import extract_tar

    into = tmp_path / "sub" / "x"
    into.mkdir(parents=True)
    (tmp_path / "sub" / "outside.txt").write_text("keep")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "x" not in p.parts)
    try:
        extract_tar(_archive(*HOSTILE[case]), into)
        refused = False
    except tarfile.TarError:
        refused = True
    assert refused or case == "absolute"  # the `data` filter strips a leading `/` instead
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "x" not in p.parts)
    assert after == before
    assert (tmp_path / "sub" / "outside.txt").read_text() == "keep"
    assert not Path("/tmp/evolve-escape-abs").exists()


def test_a_selective_round_reads_the_pooled_runs_only() -> None:
    """The stored base, the head's sweep and this job's runs pooled per query, in no side's order:
    a query whose runs differ is run; swapping which side made which runs changes nothing."""
    from evolve_action.flows._power import _Track
    from evolve_action.report import SkillEvidence, selected

    def track(base: TriggersEntry, head: TriggersEntry) -> _Track:
        ev = SkillEvidence(plugin="p", skill="s", base=None, head=None)
        return _Track(ev=ev, model="m", head_entry=head, base_entry=base, key="p/s")

    a, b = entry([3, 3, 0], 3), entry([3, 0, 0], 3)
    one, other = track(a, b), track(b, a)
    assert one.pooled() == other.pooled()
    assert one.pooled()["q1"] == (1, 1, 1, 0, 0, 0)
    chosen = one.select()
    assert "q1" in chosen  # 3/3 against 0/3: can move the test
    assert chosen == {q for q, runs in one.pooled().items() if selected(q, runs, 0)}
    fresh = track(a, b)
    fresh.fresh = True  # the stored base is not tested: only the head's sweep (and fresh runs)
    assert fresh.pooled()["q0"] == (1, 1, 1)


# ---------------------------------------------------------------- issue 38: a decided verdict is final


def _attempt(ledger: Ledger, head: TriggersEntry, attempt: str) -> tuple[PowerOutcome, str]:
    """One workflow run of the same PR and commit: `more_runs` with the PR's ledger, then the
    comparison the comment shows (`compare_skill` with the runs the loop returns)."""
    from evolve_action.report import compare_skill

    base = entry([3] * 10, 3, ran_at="2026-01-01T00:00:00Z", content_hash="B")

    def file(e: TriggersEntry) -> ResultsFile:
        return ResultsFile(plugin="kit", skill="beta", models={"m": ModelEntry(triggers=e)})

    ev = SkillEvidence(plugin="kit", skill="beta", base=file(base), head=file(head))
    out = more_runs(
        [ev],
        PowerJob(
            top=Path("/nonexistent"),
            prefix="",
            base_sha=None,
            environ={},
            genv={},
            options=PowerOptions(base="stored", max_runs=18),
            budget=Budget(limit_usd=0.0),  # nothing may run: a session would be refused,
            reporter=RecordingReporter(),
            ledger=ledger,
            attempt=attempt,
        ),
    )
    ev = SkillEvidence(
        plugin="kit",
        skill="beta",
        base=file(base),
        head=file(head),
        reruns=out.reruns.get("kit/beta", {}),
    )
    (row,) = compare_skill(ev, plan=None)
    assert row.triggers is not None
    return out, row.triggers.label.value


def test_a_rerun_of_a_decided_comparison_keeps_its_verdict_whatever_its_sweep() -> None:
    """Same ledger, same commit (same content hash): "Re-run jobs" re-runs the head sweep (the
    results commit is not in its checkout) and this time the sweep comes out unchanged. The
    comparison was decided on the first sweep: the same label, and no session is started."""
    fell = entry([0] * 10, 3, ran_at="2026-01-02T00:00:00Z", content_hash="H")
    first, label = _attempt(Ledger(), fell, "7.1")
    assert label == "regression" and first.sessions == 0  # decided at look 0 (stored base)
    ledger = Ledger().merge(first.recorded)
    assert any(lk.closed and lk.label == "regression" for lk in ledger.looks)
    steady = entry([3] * 10, 3, ran_at="2026-01-03T00:00:00Z", content_hash="H")
    again, label = _attempt(ledger, steady, "7.2")
    assert label == "regression"
    assert again.sessions == 0
    # The re-run adds nothing that could re-open the comparison, and a third run agrees.
    third, label = _attempt(ledger.merge(again.recorded), steady, "7.3")
    assert label == "regression" and third.sessions == 0


def test_new_content_reopens_the_comparison() -> None:
    fell = entry([0] * 10, 3, ran_at="2026-01-02T00:00:00Z", content_hash="H")
    first, _ = _attempt(Ledger(), fell, "7.1")
    fixed = entry([3] * 10, 3, ran_at="2026-01-03T00:00:00Z", content_hash="H2")
    _, label = _attempt(Ledger().merge(first.recorded), fixed, "8.1")
    assert label == "no change"
