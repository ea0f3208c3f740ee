"""`evolve-action init` end to end against the scripted model server (no agent CLI needed)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from evolve_action import flows
from evolve_action.checks import CheckOptions, run_checks
from evolve_action.cli import main
from evolve_action.config import resolve_repository
from evolve_action.errors import EnvironmentProblem
from evolve_action.events import NullReporter
from evolve_action.modelserver import ModelServer
from evolve_action.specs import Severity

CSV_BODY = """# Totals

- Total the amount column for each region of the file
- Total the amount column for each region of the file
- Sort the regions by their totals, largest first
- Add the csv-report footer with the row count
- Round money to two decimals and separate thousands

## Do not use for

- Drawing charts or plots from spreadsheet data
"""

FR_BODY = """# Journal

- Ajouter une section pour la nouvelle version du projet
- Classer les entrées sous Ajouté, Modifié et Corrigé
- Garder la section Unreleased en haut du fichier
"""


def _skill(root: Path, name: str, description: str, body: str) -> None:
    d = root / "skills" / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n{body}", encoding="utf-8"
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}\n', encoding="utf-8")
    _skill(root, "csv-report", "Summarise CSV files into Markdown reports.", CSV_BODY)
    _skill(root, "journal", "Tenir à jour le fichier CHANGELOG.md du projet.", FR_BODY)
    _skill(root, "license-header", "Add SPDX license headers to source files.", "- Add a header\n")
    authored = root / "evals" / "license-header"
    authored.mkdir(parents=True)
    (authored / "triggers.json").write_text(
        '{"triggers": [{"query": "Add the MIT header to main.py", "should_trigger": true}]}\n',
        encoding="utf-8",
    )
    return root


@pytest.fixture
def server() -> ModelServer:
    with ModelServer(flows.demo_policy(), port=0, keep_requests=True) as srv:
        yield srv


def _environ(server: ModelServer, tmp_path: Path) -> dict[str, str]:
    return flows.scripted_environ({}, base_url=server.base_url, cache_dir=tmp_path / "cache")


def _run(repo: Path, env: dict[str, str], **kw: object) -> flows.InitOutcome:
    return flows.run_init(
        flows.InitOptions(cwd=repo, environ=env, **kw),  # type: ignore[arg-type]
        reporter=NullReporter(),
    )


def test_drafts_skills_without_definitions(repo: Path, server: ModelServer, tmp_path: Path) -> None:
    outcome = _run(repo, _environ(server, tmp_path))
    drafts = {d.skill: d for d in outcome.drafts}
    assert set(drafts) == {"csv-report", "journal"}  # license-header has authored triggers
    csv = drafts["csv-report"]
    triggers = (repo / "evals" / "csv-report" / "triggers.yaml").read_text(encoding="utf-8")
    assert triggers.startswith("# DRAFT by `evolve-action init` with anthropic/claude-sonnet-5")
    # the body's tasks asked as a user would (issue 43): the duplicate line once, the line naming
    # the skill left out by the drafter itself, so the gates had nothing to drop
    assert "Quick task: sort the regions by their totals, largest first." in triggers
    assert triggers.count("Can you total the amount column for each region") == 1
    assert "footer" not in triggers and csv.dropped == ()
    # siblings' tasks (not their descriptions) and the body's "do not use" items are near-misses
    assert "Quick task: add SPDX license headers." in triggers
    assert "Add SPDX license headers to source files." not in triggers
    assert "drawing charts or plots from spreadsheet data" in triggers
    # the French skill is drafted in French
    journal = (repo / "evals" / "journal" / "triggers.yaml").read_text(encoding="utf-8")
    assert "Peux-tu m''aider : ajouter une section pour la nouvelle version du projet ?" in journal
    assert drafts["journal"].language == "fr"
    for d in drafts.values():
        assert d.should >= 5 and d.should_not >= 5, d
    # every drafted file passes Tier 0 and is planned
    r, config = resolve_repository(None, repo, None, {})
    report = run_checks(r, config, CheckOptions(signals=False))
    assert [f.message for f in report.findings if f.severity == Severity.ERROR] == []
    assert outcome.findings == ()
    assert outcome.planned_triggers > 0 and outcome.planned_evals > 0
    assert outcome.sweep is not None and outcome.cost_usd is not None and outcome.cost_usd > 0
    # the request the server saw is the product's prompt, one per skill
    drafts_seen = [r for r in server.messages() if r["rule"] == "draft"]
    assert len(drafts_seen) == 2 and all(r["forced_tool"] == "submit_draft" for r in drafts_seen)


def test_authored_files_kept_and_force_keeps_a_backup(
    repo: Path, server: ModelServer, tmp_path: Path
) -> None:
    where = repo / "evals" / "license-header"
    before = (where / "triggers.json").read_bytes()
    kept = _run(repo, _environ(server, tmp_path), skills=("license-header",), evals=0)
    assert (where / "triggers.json").read_bytes() == before
    assert not (where / "triggers.yaml").exists()
    assert kept.drafts[0].kept == (where / "triggers.json",)
    forced = _run(repo, _environ(server, tmp_path), skills=("license-header",), evals=0, force=True)
    assert (where / "triggers.json.bak").read_bytes() == before
    assert not (where / "triggers.json").exists()
    assert (where / "triggers.yaml").read_text(encoding="utf-8").startswith("# DRAFT")
    assert forced.drafts[0].backups == (where / "triggers.json.bak",)
    assert list(repo.rglob("results.*")) == []  # init never writes results


def test_without_credentials_it_stops_before_any_request(repo: Path) -> None:
    with pytest.raises(EnvironmentProblem, match="no Anthropic credentials"):
        _run(repo, {})


def test_cli_scripted_with_workflow(repo: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["init", "--scripted", "--workflow"], environ={}, stdout=out, stderr=err, cwd=repo)
    text = out.getvalue()
    assert code == 0, err.getvalue()
    assert re.search(
        r"init: drafting 2 skill\(s\) with anthropic/claude-sonnet-5: about [\d,]+ input "
        r"tokens, estimated \$\d+\.\d{4}\n",
        text,
    )
    assert "drafting cost: $" in text
    assert re.search(
        r"^first sweep \(what `run all --new --dry-run` plans\): \d+ trigger queries, \d+ eval "
        r"cases, on anthropic/claude-sonnet-5 \(the default: no --model and no `models:` in "
        r"\.evolve\.yaml; name others with either\)$",
        text,
        re.M,
    )
    # one estimate (issue 43): the closing estimate is the one the recommended command prints
    closing = re.search(r"^estimate: .*\n(?:  .*\n)*", text, re.M)
    assert closing is not None and "evolve-action run all --new --dry-run" in text
    dry = io.StringIO()
    assert main(["run", "all", "--new", "--dry-run"], environ={}, stdout=dry, cwd=repo) == 0
    assert closing.group(0) in dry.getvalue()
    assert "add the repository secret ANTHROPIC_API_KEY" in text
    assert (repo / ".github" / "workflows" / "evolve-pr.yml").is_file()
    assert (repo / ".github" / "workflows" / "evolve-gate.yml").is_file()
    again = io.StringIO()
    assert main(["init", "--scripted", "--workflow"], environ={}, stdout=again, cwd=repo) == 0
    assert "kept .github/workflows/evolve-pr.yml (exists" in again.getvalue()
    assert "nothing to draft" in again.getvalue()
    forced = io.StringIO()
    assert main(["init", "--workflow", "--force"], environ={}, stdout=forced, cwd=repo) == 0
    workflows = repo / ".github" / "workflows"
    assert (workflows / "evolve-pr.yml.bak").read_bytes() == (
        workflows / "evolve-pr.yml"
    ).read_bytes()
    assert "kept the old workflow as .github/workflows/evolve-pr.yml.bak" in forced.getvalue()


def test_skill_creator_repository_gets_skill_creator_files(
    tmp_path: Path, server: ModelServer
) -> None:
    root = tmp_path / "creator"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}\n', encoding="utf-8")
    _skill(root, "csv-report", "Summarise CSV files into Markdown reports.", CSV_BODY)
    _skill(root, "journal", "Tenir à jour le fichier CHANGELOG.md du projet.", FR_BODY)
    authored = root / "skills" / "journal" / "evals"
    authored.mkdir()
    (authored / "evals.json").write_text(
        '{"skill_name": "journal", "evals": [{"id": 1, "prompt": "Ajoute la version 1.2", '
        '"expectations": ["La section 1.2 existe"]}]}\n',
        encoding="utf-8",
    )
    outcome = _run(root, _environ(server, tmp_path))
    assert [d.skill for d in outcome.drafts] == ["csv-report"]
    where = root / "skills" / "csv-report" / "evals"
    evals_json = (where / "evals.json").read_text(encoding="utf-8")
    assert evals_json.startswith('{\n  "_draft": "DRAFT by `evolve-action init` with ')
    assert (where / "trigger-queries.json").read_text(encoding="utf-8").startswith("[\n")
    assert not (root / "evals").exists()
    assert outcome.findings == () and outcome.planned_triggers > 0
    r, _ = resolve_repository(None, root, None, {})
    sets = {e.skill: e for e in r.eval_sets()}
    assert sets["csv-report"].triggers_path == where / "trigger-queries.json"
    assert sets["csv-report"].evals_path == where / "evals.json"


def test_a_failed_request_leaves_that_skill_undrafted(repo: Path, tmp_path: Path) -> None:
    policy = {
        "rules": [
            {"name": "refuse", "when": {"prompt": "<skill_name>journal<"}, "status": 400},
            {"name": "draft", "when": {"tool_choice": "^submit_draft$"}, "draft": True},
        ]
    }
    with ModelServer(policy, port=0) as srv:
        outcome = _run(repo, _environ(srv, tmp_path))
    drafts = {d.skill: d for d in outcome.drafts}
    assert drafts["journal"].error.startswith("HTTP 400: ")
    assert drafts["journal"].written == () and not (repo / "evals" / "journal").exists()
    assert (repo / "evals" / "csv-report" / "triggers.yaml").is_file()


def test_a_drafted_file_failing_tier0_is_removed_and_the_authored_one_restored(
    repo: Path,
) -> None:
    from evolve_action.flows._init import _verify, _without

    where = repo / "evals" / "csv-report"
    where.mkdir(parents=True)
    backup = where / "triggers.json.bak"
    backup.write_text('{"triggers": []}\n', encoding="utf-8")
    drafted = where / "triggers.yaml"
    drafted.write_text(
        "triggers:\n  - query: Total the sales per region\n    should_trigger: true\n"
        "  - query: Total the sales per region\n    should_trigger: false\n",
        encoding="utf-8",
    )
    draft = flows.SkillDraft(
        plugin="tools",
        skill="csv-report",
        should=1,
        should_not=1,
        written=(drafted,),
        backups=(backup,),
    )
    bad = _verify(repo, flows.InitOptions(cwd=repo, environ={}), [draft])
    assert list(bad) == [drafted] and "duplicate" in bad[drafted][0]
    after = _without(draft, bad)
    assert not drafted.exists() and after.written == () and after.should == 0
    assert (where / "triggers.json").read_text(encoding="utf-8") == '{"triggers": []}\n'
    assert after.backups == () and not backup.exists()


TIMESTAMPS_BODY = """# Timestamps

Work with dates and times exactly, with the zone always explicit.

## Tasks

- Parse a timestamp in any common format, attach its source zone (IANA names such as
  Europe/Paris), and print it as ISO 8601.
- Convert a meeting time from one zone to another, including across a daylight-saving change.
- Normalise every date column of a CSV file to ISO 8601 in UTC.
- Compute the duration between two timestamps in hours and minutes.
- Turn Unix epoch seconds into a readable local time.
- List the upcoming daylight-saving transitions for a zone.

## Do not use for

- Scheduling or calendar invitations
"""
TIMESTAMPS_DESCRIPTION = (
    "Parse, convert and format timestamps and time zones. Use when the user asks to convert a "
    "time between zones or normalise dates in a file."
)
TOTALS_DESCRIPTION = "Use when the user asks for totals, averages or group sums over a CSV file."


def test_offline_draft_of_a_two_skill_plugin(tmp_path: Path) -> None:
    """Issue 43's acceptance: `init --scripted` on a plugin whose one skill has authored evals
    drafts ≥ 5 + ≥ 5 requests for the other (none naming it, none copying a run of either
    description), leaves the authored file alone, writes a valid, planned draft, and closes with
    the estimate `run all --new --dry-run` prints."""
    from evolve_action.flows._draft import check_text
    from evolve_action.modelserver._draft import body_items

    root = tmp_path / "two"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "datatools"}\n')
    _skill(root, "timestamps", TIMESTAMPS_DESCRIPTION, TIMESTAMPS_BODY)
    _skill(root, "csv-totals", TOTALS_DESCRIPTION, "- Total a numeric column of a CSV file\n")
    authored = root / "evals" / "csv-totals" / "triggers.yaml"
    authored.parent.mkdir(parents=True)
    authored.write_text(
        "skill_name: csv-totals\ntriggers:\n"
        '  - {query: "What is the total of the amount column in sales.csv?", should_trigger: true}\n'
        '  - {query: "Convert this CSV file to JSON please", should_trigger: false}\n'
    )
    before = authored.read_bytes()
    out, err = io.StringIO(), io.StringIO()
    assert main(["init", "--scripted"], environ={}, stdout=out, stderr=err, cwd=root) == 0
    text = out.getvalue()
    assert "datatools/timestamps: " in text and "csv-totals:" not in text
    assert authored.read_bytes() == before
    r, config = resolve_repository(None, root, None, {})
    (drafted,) = [e for e in r.eval_sets() if e.skill == "timestamps"]
    assert drafted.triggers_path is not None
    from evolve_action.encoding import decode_yaml

    items = decode_yaml(drafted.triggers_path.read_text(), drafted.triggers_path).value["triggers"]
    should = [i["query"] for i in items if i["should_trigger"]]
    near = [i["query"] for i in items if not i["should_trigger"]]
    assert len(should) >= 5 and len(near) >= 5, items
    tasks = [t[:1].lower() + t[1:].rstrip(".") for t in body_items(TIMESTAMPS_BODY)[0]]
    for q in should + near:
        assert "timestamps" not in q.lower()
        assert q.rstrip(".?") not in tasks  # asked, never a bare body line
        assert check_text(q, name="timestamps", description=TIMESTAMPS_DESCRIPTION) is None
        assert check_text(q, name="csv-totals", description=TOTALS_DESCRIPTION) is None, q
    assert sum(any(t.split(",")[0] in q for t in tasks) for q in should) >= 5
    assert any("CSV file" in q and ("totals" in q or "averages" in q) for q in near)  # sibling
    report = run_checks(r, config, CheckOptions(signals=False))
    assert [f.message for f in report.findings if f.severity == Severity.ERROR] == []
    # one estimate: the closing one is the one `run all --new --dry-run` prints
    closing = re.search(r"^first sweep .*\n(estimate: .*\n(?:  .*\n)*)", text, re.M)
    assert closing is not None, text
    dry = io.StringIO()
    assert main(["run", "all", "--new", "--dry-run"], environ={}, stdout=dry, cwd=root) == 0
    assert closing.group(1) in dry.getvalue()
    planned = re.search(r"first sweep .*: (\d+) trigger queries, (\d+) eval cases", text)
    assert planned is not None and int(planned.group(1)) == 2 + len(should) + len(near)


def test_docs_show_the_offline_draft_as_it_comes_out(tmp_path: Path) -> None:
    """docs/init.md's offline draft of the example `csv-report` is what `init --scripted` writes
    now (refresh: copy examples/, remove evals/csv-report, run `init --scripted`, paste the file)."""
    import shutil

    docs = Path(__file__).resolve().parents[3] / "docs" / "init.md"
    shown = re.search(
        r"--scripted`, default counts\), exactly as it comes out:\n\n```yaml\n(.*?)```\n",
        docs.read_text(encoding="utf-8"),
        re.S,
    )
    assert shown is not None
    root = tmp_path / "examples"
    shutil.copytree(docs.parent.parent / "examples", root)
    shutil.rmtree(root / "plugins" / "project-tools" / "evals" / "csv-report")
    assert main(["init", "--scripted"], environ={}, stdout=io.StringIO(), cwd=root) == 0
    drafted = root / "plugins" / "project-tools" / "evals" / "csv-report" / "triggers.yaml"
    assert drafted.read_text(encoding="utf-8") == shown.group(1)
