"""action.yml ↔ the code, the docs, the example workflows, the Dockerfile and .ci/run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evolve_action.encoding import decode_yaml
from evolve_action.github import (
    COMMENT_MODES,
    FAIL_ON,
    INPUT_DEFAULTS,
    MODES,
    OUTPUT_NAMES,
    read_inputs,
)


def _load_yaml(text: str) -> Any:
    """Decode YAML as evolve's yaml.v3 does (`on:` stays a string key)."""
    return decode_yaml(text, Path("inline.yaml")).value


REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / "examples" / "workflows").glob("*.yml"))
README = REPO / "docs" / "action.md"  # the inputs and outputs tables
SHA_PIN = re.compile(r"[^@\s]+@[0-9a-f]{40}")


def load(path: Path) -> Any:
    return _load_yaml(path.read_text(encoding="utf-8"))


ACTION = load(REPO / "action.yml")


def test_docker_action_runs_the_mode_as_the_command() -> None:
    runs = ACTION["runs"]
    assert runs["using"] == "docker" and runs["image"] == "Dockerfile"
    assert runs["args"] == ["${{ inputs.mode }}"]
    assert set(ACTION["branding"]) == {"icon", "color"}


def test_inputs_match_the_reader() -> None:
    inputs = ACTION["inputs"]
    assert list(inputs) == list(INPUT_DEFAULTS)
    for name, spec in inputs.items():
        assert "-" not in name, name
        assert spec["description"].strip(), name
        assert str(spec.get("default", "")) == INPUT_DEFAULTS[name], name
        assert spec.get("required", False) is False, name
    assert inputs["github_token"]["default"] == "${{ github.token }}"


def test_defaults_parse() -> None:
    # Every default as the runner passes it (the token expression expanded to a token).
    environ = {f"INPUT_{k.upper()}": v for k, v in INPUT_DEFAULTS.items()}
    environ["INPUT_GITHUB_TOKEN"] = "ghs_example"
    got = read_inputs(environ, workspace=REPO)
    assert got.mode == "pr" and got.commit and not got.allow_fork_target


@pytest.mark.parametrize(
    ("name", "values"), [("mode", MODES), ("comment", COMMENT_MODES), ("fail_on", FAIL_ON)]
)
def test_descriptions_name_every_choice(name: str, values: tuple[str, ...]) -> None:
    text = ACTION["inputs"][name]["description"]
    for value in values:
        assert f"`{value}`" in text, (name, value)


def test_outputs_match_the_writer() -> None:
    assert tuple(ACTION["outputs"]) == OUTPUT_NAMES
    for name, spec in ACTION["outputs"].items():
        assert spec["description"].strip(), name


def test_action_yml_validates_against_github_schema() -> None:
    tool = REPO / ".venv" / "bin" / "check-jsonschema"
    exe = str(tool) if tool.exists() else shutil.which("check-jsonschema")
    if exe is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    proc = subprocess.run(
        [exe, "--builtin-schema", "vendor.github-actions", str(REPO / "action.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _doc_table_names(section: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {section}\n(.*?)(?=^##)", text, flags=re.S | re.M)
    assert match is not None, f"docs/action.md has no '## {section}' section"
    return re.findall(r"^\| `([a-z_]+)` \|", match.group(1), flags=re.M)


def test_readme_lists_every_input_and_output() -> None:
    assert _doc_table_names("Inputs") == list(INPUT_DEFAULTS)
    assert _doc_table_names("Outputs") == list(OUTPUT_NAMES)


def test_readme_defaults_match() -> None:
    text = README.read_text(encoding="utf-8")
    for name, default in INPUT_DEFAULTS.items():
        row = re.search(rf"^\| `{name}` \| ([^|]*) \|", text, flags=re.M)
        assert row is not None, name
        shown = row.group(1).strip()
        assert shown == (f"`{default}`" if default else "(empty)"), (name, shown)


def _steps(workflow: Any) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            found.append((job_name, step))
    return found


def test_there_are_four_example_workflows() -> None:
    assert [p.name for p in WORKFLOWS] == [
        "fork-safe.yml",
        "pr.yml",
        "release-gate.yml",
        "sharded.yml",
    ]


# The sharded example runs the CLI (`plan`, `run all --shard`, `merge`): the action's
# `mode: plan|shard|merge` are not wired yet.
CLI_EXAMPLES: set[str] = set()  # every example uses the action


def test_sharded_example_plans_runs_shards_and_merges() -> None:
    workflow = load(REPO / "examples" / "workflows" / "sharded.yml")
    jobs = workflow["jobs"]
    modes = {
        job: [
            s["with"]["mode"]
            for _, s in _steps({"jobs": {job: j}})
            if "evolve-action" in str(s.get("uses", ""))
        ]
        for job, j in jobs.items()
    }
    assert modes == {"plan": ["plan"], "shard": ["shard"], "merge": ["merge"]}
    assert jobs["shard"]["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert jobs["plan"]["outputs"]["matrix"] == "${{ steps.plan.outputs.matrix }}"
    # Only the merge job writes; only the shard jobs see the model key.
    assert "contents" not in {k for k, v in jobs["shard"]["permissions"].items() if v == "write"}
    assert jobs["merge"]["permissions"]["contents"] == "write"
    secrets = {job: "secrets." in json.dumps(j) for job, j in jobs.items()}
    assert secrets == {"plan": False, "shard": True, "merge": False}
    assert jobs["merge"]["needs"] == "shard"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_example_uses_only_existing_inputs(path: Path) -> None:
    workflow = load(path)
    used = [step for _, step in _steps(workflow) if "evolve-action" in str(step.get("uses", ""))]
    assert used or path.name in CLI_EXAMPLES, "the example does not use the action"
    for step in used:
        keys = set(step.get("with", {}))
        assert keys <= set(INPUT_DEFAULTS), keys - set(INPUT_DEFAULTS)
        mode = step.get("with", {}).get("mode", "pr")
        assert mode in MODES


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_example_permissions_are_minimal_and_actions_pinned(path: Path) -> None:
    workflow = load(path)
    assert workflow["permissions"] == {}, "top-level permissions must be empty"
    for name, job in workflow["jobs"].items():
        perms = job.get("permissions")
        assert isinstance(perms, dict) and perms, f"job {name} declares no permissions"
        assert set(perms) <= {"contents", "pull-requests"}, perms
        assert "timeout-minutes" in job, name
    for _, step in _steps(workflow):
        uses = step.get("uses")
        if uses is None or "evolve-action" in uses:
            continue
        assert SHA_PIN.fullmatch(uses), f"{uses} is not pinned by commit SHA"
        if uses.startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


def test_fork_safe_pins_the_labelled_head_sha() -> None:
    workflow = load(REPO / "examples" / "workflows" / "fork-safe.yml")
    assert set(workflow["on"]) == {"pull_request", "pull_request_target"}
    assert workflow["on"]["pull_request_target"]["types"] == ["labeled"]
    job = workflow["jobs"]["evaluate-fork"]
    assert "github.event.label.name" in job["if"]
    checkout = job["steps"][0]
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    action = job["steps"][1]["with"]
    assert action["allow_fork_target"] == "true" and action["commit"] == "false"
    assert job["permissions"]["contents"] == "read"
    checks = workflow["jobs"]["checks"]
    assert "'checks'" in checks["steps"][1]["with"]["tiers"]


def test_release_gate_uses_gate_mode() -> None:
    workflow = load(REPO / "examples" / "workflows" / "release-gate.yml")
    step = workflow["jobs"]["gate"]["steps"][1]
    assert step["with"]["mode"] == "gate"
    assert workflow["jobs"]["gate"]["permissions"] == {"contents": "read"}


def test_dockerfile_and_ci_share_the_install_script() -> None:
    docker = (REPO / "Dockerfile").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.1[12]-slim", docker, flags=re.M)
    # The entrypoint runs evolve-action by absolute path (a workflow's `env: PATH:` replaces the
    # image's) and gives back what it wrote (docs/container.md).
    assert 'ENTRYPOINT ["/usr/local/bin/evolve-action-entrypoint"]' in docker
    assert "COPY scripts/entrypoint.sh /usr/local/bin/evolve-action-entrypoint" in docker
    entrypoint = (REPO / "scripts" / "entrypoint.sh").read_text(encoding="utf-8")
    assert "EVOLVE_ACTION=/opt/evolve-action/bin/evolve-action" in entrypoint
    assert 'exec "$EVOLVE_ACTION" "$@"' in entrypoint and '"$EVOLVE_ACTION" "$@" <&3' in entrypoint
    assert not re.search(r"^\s*exec evolve-action\b", entrypoint, flags=re.M)
    # Agents run as the unprivileged `evolve-agent`, never as root: no IS_SANDBOX=1.
    assert "useradd" in docker and "evolve-agent" in docker
    assert "IS_SANDBOX=1" not in docker
    assert "safe.directory" in docker
    assert "scripts/install.sh" in docker and "scripts/install.sh" in ci
    assert not re.search(r"^USER\b", docker, flags=re.M)
    assert not re.search(r"^WORKDIR\b", docker, flags=re.M)
    for check in ("check-jsonschema", "zizmor", "actionlint"):
        assert check in ci, check
    ignore = (REPO / ".dockerignore").read_text(encoding="utf-8")
    assert "!src/" in ignore and "!scripts/install.sh" in ignore
    assert "!scripts/entrypoint.sh" in ignore
