"""The released image's name and tag in the docs ↔ the package version and the release workflow."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import evolve_action
from evolve_action.encoding import decode_yaml


def _load_yaml(text: str) -> Any:
    """Decode YAML as evolve's yaml.v3 does (`on:` stays a string key)."""
    return decode_yaml(text, Path("inline.yaml")).value


REPO = Path(__file__).resolve().parents[2]
DOC_PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RELEASE = REPO / ".github" / "workflows" / "release.yml"
IMAGE_TAG = re.compile(r"ghcr\.io/OWNER/evolve-action:([0-9A-Za-z.+-]+)")
PLACEHOLDER = re.compile(r"[XYZ](\.[XYZ])*")
"""`X.Y.Z` in prose about the release scheme, not a concrete tag."""
DIGEST_PIN = re.compile(r"docker://ghcr\.io/OWNER/evolve-action@sha256:\S+\s+#\s*(\S+)")


def _version() -> str:
    with (REPO / "pyproject.toml").open("rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def test_package_and_pyproject_agree() -> None:
    assert evolve_action.__version__ == _version()


def test_image_tags_in_docs_are_the_package_version() -> None:
    version = _version()
    tags = {
        (page.name, tag)
        for page in DOC_PAGES
        for tag in IMAGE_TAG.findall(page.read_text(encoding="utf-8"))
        if not PLACEHOLDER.fullmatch(tag)
    }
    assert ("container.md", version) in tags, "docs/container.md no longer names the image tag"
    assert {tag for _, tag in tags} == {version}, sorted(tags)


def test_digest_pins_in_docs_are_commented_with_the_package_version() -> None:
    version = _version()
    comments = [
        comment
        for page in DOC_PAGES
        for comment in DIGEST_PIN.findall(page.read_text(encoding="utf-8"))
    ]
    assert comments, "docs/container.md no longer shows a docker://…@sha256: pin"
    assert set(comments) == {version}


def test_docs_pin_example_passes_the_mode_and_the_token() -> None:
    text = (REPO / "docs" / "container.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(- uses: docker://.*?)```", text, flags=re.S)
    assert block is not None
    (step,) = _load_yaml(block.group(1))
    assert step["with"]["args"] == "pr"
    assert step["with"]["github_token"] == "${{ github.token }}"


def test_release_workflow_pushes_the_tagged_version_to_ghcr() -> None:
    workflow = _load_yaml(RELEASE.read_text(encoding="utf-8"))
    assert workflow["on"] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    assert workflow["permissions"] == {}
    job = workflow["jobs"]["image"]
    assert job["permissions"] == {"contents": "read", "packages": "write"}
    steps = job["steps"]
    assert re.fullmatch(r"actions/checkout@[0-9a-f]{40}", steps[0]["uses"])
    uses = [s["uses"] for s in steps if "uses" in s]
    assert uses == [steps[0]["uses"]], "only actions/checkout: the docker CLI does the rest"
    script = "\n".join(s.get("run", "") for s in steps)
    assert '"$GITHUB_REF_NAME" != "v$version"' in script  # the tag must be the package version
    assert "ghcr.io/${GITHUB_REPOSITORY,,}" in script
    assert '--version)"' in script and "docker push" in script
