"""The listing check's pure parts: a skill's status from its listing entry, and the findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.checks import (
    InstallSet,
    SetListing,
    SkillListing,
    listing_findings,
    status_of,
)
from evolve_action.checks._signals import budget_share
from evolve_action.harness import ListedEntry
from evolve_action.repo import Repository
from evolve_action.specs import Severity

DESC = "Use when the user asks about PDFs."


@pytest.mark.parametrize(
    ("entry", "status", "shown"),
    [
        (ListedEntry(name="pdf", description=DESC), "whole", len(DESC)),
        (ListedEntry(name="pdf", description=DESC[:10] + "…"), "shortened", 10),
        (ListedEntry(name="pdf", description=None), "name-only", 0),
        (None, "missing", 0),
        (ListedEntry(name="pdf", description="  " + DESC + " "), "whole", len(DESC)),
    ],
    ids=["whole", "shortened", "name-only", "missing", "spaces"],
)
def test_status_of(entry: ListedEntry | None, status: str, shown: int) -> None:
    assert status_of(DESC, entry) == (status, shown)


def _set(kind: str, statuses: list[str], model: str = "m1") -> SetListing:
    s = InstallSet(kind=kind, label=kind, plugin="p")  # type: ignore[arg-type]
    if kind == "repository":
        s = InstallSet(kind="repository", label="r", plugin_dirs=(Path("a"), Path("b")))
    return SetListing(
        set=s,
        model=model,
        cli_version="2.1.332 (Claude Code)",
        skills=tuple(
            SkillListing(
                plugin="p",
                skill=f"s{i}",
                path=f"skills/s{i}/SKILL.md",
                status=st,  # type: ignore[arg-type]
                description_chars=100,
                shown_chars=100 if st == "whole" else (40 if st == "shortened" else 0),
            )
            for i, st in enumerate(statuses)
        ),
    )


REPO = Repository(root=Path("/r"), layout="single", plugins=())


def test_findings_per_plugin_set_grouped_over_models() -> None:
    sets = [
        _set("plugin", ["whole", "shortened", "name-only", "missing"], "m1"),
        _set("plugin", ["whole", "whole", "name-only", "whole"], "m2"),
    ]
    found = listing_findings(REPO, sets)
    assert [(f.path, f.severity) for f in found] == [
        ("skills/s1/SKILL.md", Severity.WARNING),
        ("skills/s2/SKILL.md", Severity.ERROR),
        ("skills/s3/SKILL.md", Severity.ERROR),
    ]
    assert "sees 40 of 100 characters" in found[0].message
    assert "description not shown to the model: listing budget (m1, m2)" in found[1].message
    assert "skill missing from the skill listing (m1)" in found[2].message


def test_repository_set_is_one_note_with_the_overflow() -> None:
    [note] = listing_findings(REPO, [_set("repository", ["whole", "name-only", "name-only"])])
    assert note.severity == Severity.SIGNAL and note.check == "listing.marketplace"
    assert "2 of 3 skills are listed by name only" in note.message
    assert "~204 characters over the budget" in note.message  # 2 x (": " + 100)
    assert "first: p:s2, p:s1" in note.message  # the end of the listing loses first
    assert listing_findings(REPO, [_set("repository", ["whole"])]) == []


def test_a_failed_capture_is_a_warning() -> None:
    failed = SetListing(set=InstallSet(kind="plugin", label="plugin p"), model="", error="boom")
    [f] = listing_findings(REPO, [failed])
    assert f.severity == Severity.WARNING and "plugin p (default): boom" in f.message


def test_budget_share() -> None:
    assert budget_share("ab", "x" * 100) == pytest.approx(100 * (len("- ab: ") + 101) / 30_000)
    assert budget_share("ab", "x" * 5000) == budget_share("ab", "x" * 1536)


def test_a_symlinked_listing_cache_is_not_written_through(tmp_path: Path) -> None:
    """Issue 29 item 4: the listing cache behind a link is lost with a warning, never followed."""
    from evolve_action.checks import ListingCache
    from evolve_action.harness import ListingCapture

    victim = tmp_path / "victim.json"
    victim.write_text("{}\n")
    path = tmp_path / "listing.json"
    path.symlink_to(victim)
    cache = ListingCache(path)
    cache.put(
        "k", ListingCapture(model="m", entries=(ListedEntry(name="a", description="d"),)), "1"
    )
    warning = cache.save()
    assert warning.startswith(f"listing cache not saved: refusing to write {path}")
    assert victim.read_text() == "{}\n"


def test_commands_are_told_from_skills_by_source_and_hidden_skills_are_not_judged(
    tmp_path: Path,
) -> None:
    """Issue 42, the listing CLI 2.1.332 sent for `commands_beside_skills` (measured): commands are
    listed beside skills as `kit:ops:deploy`, and the command `ship` takes the name of the skill
    `ship`; `menu` (`disable-model-invocation: true`) is never listed."""
    from tests.helpers.repo_shapes import commands_beside_skills

    from evolve_action.checks._listing import _judge, install_sets
    from evolve_action.harness import ListingCapture
    from evolve_action.repo import discover

    repo = discover(commands_beside_skills(tmp_path / "shape"), tmp_path)
    (kit,) = install_sets(repo, install="plugin")
    capture = ListingCapture(
        model="m1",
        entries=(
            ListedEntry(name="kit:ops:deploy", description="Deploy it"),
            ListedEntry(name="kit:ship", description="Ship the release"),
            ListedEntry(name="kit:lint", description="Does lint work. Use when asked for lint."),
        ),
    )
    judged = _judge(repo, kit, capture, "2.1.332 (Claude Code)", {}, cached=False)
    assert [(s.skill, s.status, s.command) for s in judged.skills] == [
        ("lint", "whole", ""),
        ("ship", "missing", "plugins/kit/commands/ship.md"),
    ]
    assert [f.message for f in listing_findings(repo, [judged])] == [
        "plugins/kit/skills/ship/SKILL.md: skill missing from the skill listing (m1): 2.1.332 "
        "(Claude Code) lists the command plugins/kit/commands/ship.md under its name instead, so "
        "the model never sees this skill — rename the skill or the command"
    ]
