"""AgentEvals / AgentV suite files (issue 23), the micromatch-style globs and AgentV's
`.agentv/config.yaml` that find them.

Owns: what counts as a suite file (`is_suite_name`: `EVAL.yaml`, `dataset.yaml`, `*.eval.yaml`;
`sniff_suite`: any other `*.yaml` that is an AgentV v2 file), `suite_skill` (a suite's
`metadata.skill`/`skill_path`), `suite_files` (the walk below a directory), `glob_match`, and
`eval_patterns` (AgentV's config).
Guarantees: never raises for an unreadable file (it is not a suite, or names no skill);
deterministic order; hidden directories and symlinks are not followed.
Never does: bind a suite to a skill (`_repository.suite_bindings` does), parse cases (`specs` does).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from evolve_action.encoding import (
    MAX_FILE_BYTES,
    decode_path,
)
from evolve_action.errors import SpecError

__all__ = [
    "EVOLVE_NAMES",
    "SUITE_FILE_NAMES",
    "SUITE_SKIP_DIRS",
    "eval_patterns",
    "glob_match",
    "is_suite_name",
    "sniff_suite",
    "suite_files",
    "suite_skill",
]


# --- AgentEvals / AgentV suites (issue 23) ----------------------------------------------------

SUITE_FILE_NAMES = ("EVAL.yaml", "EVAL.yml", "dataset.yaml", "dataset.yml")
"""AgentEvals suite file names (besides `*.eval.yaml`)."""
EVOLVE_NAMES = frozenset(
    f"{stem}.{ext}" for stem in ("evals", "triggers", "results") for ext in ("yaml", "yml")
)
"""evolve's own YAML files: never suites."""


def is_suite_name(name: str) -> bool:
    """`EVAL.yaml`, `dataset.yaml` or `*.eval.yaml` (any case of `eval`; `.yml` too)."""
    if name in SUITE_FILE_NAMES:
        return True
    lower = name.lower()
    return lower.endswith((".eval.yaml", ".eval.yml"))


_SNIFF = re.compile(rb"(?m)^(\$schema:\s*['\"]?agentv-eval-v2|evalcases:|eval_cases:)")


def sniff_suite(path: Path) -> bool:
    """Whether a `*.yaml` file not named like a suite is an AgentV v2 file (`$schema:
    agentv-eval-v2`, or an `evalcases`/`eval_cases` list at the top level)."""
    if path.name in EVOLVE_NAMES or path.suffix not in (".yaml", ".yml"):
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(MAX_FILE_BYTES)
    except OSError:
        return False
    return _SNIFF.search(head) is not None


def suite_skill(path: Path) -> tuple[str, str]:
    """`(metadata.skill, metadata.skill_path)` of a suite file ((``, ``) when absent or unreadable)."""
    try:
        value = decode_path(path)
    except SpecError:
        return "", ""
    meta = value.get("metadata") if isinstance(value, dict) else None
    if not isinstance(meta, dict):
        return "", ""
    skill, where = meta.get("skill"), meta.get("skill_path")
    return (skill if isinstance(skill, str) else "", where if isinstance(where, str) else "")


# --------------------------------------------------------------------------------------------
# Globs and AgentV's config files


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if ch == "*":
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "{":
            end = pattern.find("}", i)
            if end > i:
                out += "(?:" + "|".join(re.escape(p) for p in pattern[i + 1 : end].split(",")) + ")"
                i = end + 1
                continue
            out += re.escape(ch)
        else:
            out += re.escape(ch)
        i += 1
    return re.compile(out + r"\Z")


def glob_match(rel: str, pattern: str) -> bool:
    """micromatch-style match of a `/`-separated relative path (`**`, `*`, `?`, `{a,b}`)."""
    return _glob_regex(pattern.removeprefix("./")).match(rel) is not None


SUITE_SKIP_DIRS = frozenset({"node_modules", "__pycache__"})
"""Never searched for suite files (besides hidden directories)."""


def suite_files(directory: Path) -> list[Path]:
    """Suite files below `directory`: `EVAL.yaml`, `*.eval.yaml`, `dataset.yaml` by name, other
    `*.yaml` by content (an AgentV v2 file); hidden directories and symlinks are not followed."""
    found: list[Path] = []
    stack = [directory]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as entries:
                items = sorted(entries, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        except OSError:
            continue
        for entry in items:
            if entry.name.startswith("."):
                continue
            path = here / entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SUITE_SKIP_DIRS:
                    stack.append(path)
            elif entry.is_file(follow_symlinks=False) and (
                is_suite_name(entry.name) or sniff_suite(path)
            ):
                found.append(path)
    return sorted(found, key=lambda p: str(p).encode("utf-8", "surrogateescape"))


def eval_patterns(root: Path) -> list[str]:
    """`eval_patterns` of the root `.agentv/config.yaml` (AgentEvals discovery)."""
    path = root / ".agentv" / "config.yaml"
    if not path.is_file():
        return []
    try:
        value = decode_path(path)
    except SpecError:
        return []
    patterns = value.get("eval_patterns") if isinstance(value, dict) else None
    return [p for p in patterns if isinstance(p, str)] if isinstance(patterns, list) else []
