"""The repository model's names and plain values: layouts, the marker and manifest paths, and the
frozen `Plugin`, `Skill`, `EvalSet` and `RepoProblem` values discovery builds.

Owns: `Layout`/`LAYOUTS` (auto-detection order), the manifest and marketplace paths
(`CLAUDE_MANIFEST`, `CODEX_MANIFEST`, `CLAUDE_MARKETPLACE`, `CODEX_MARKETPLACE`, `MANIFEST_PATHS`),
`CONFIG_NAMES` (the config files, also evolve's opt-in marker), `PROJECT_SKILLS`, and `SkillKey`
(a skill's identity across the model).
Guarantees: pure values: frozen dataclasses and constants, nothing computed.
Never does: touch the file system, import another module of this package.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "CLAUDE_MANIFEST",
    "CLAUDE_MARKETPLACE",
    "CODEX_MANIFEST",
    "CODEX_MARKETPLACE",
    "CONFIG_NAMES",
    "LAYOUTS",
    "MANIFEST_PATHS",
    "PROJECT_SKILLS",
    "EvalSet",
    "Layout",
    "Plugin",
    "RepoProblem",
    "Skill",
    "SkillKey",
]


Layout = Literal["marketplace", "multi", "single"]
"""A detected (or forced) repository kind."""

LAYOUTS: tuple[Layout, ...] = ("marketplace", "multi", "single")
"""Auto-detection order: the first kind whose marker is present wins."""

CLAUDE_MANIFEST = ".claude-plugin/plugin.json"
CODEX_MANIFEST = ".codex-plugin/plugin.json"
CLAUDE_MARKETPLACE = ".claude-plugin/marketplace.json"
CODEX_MARKETPLACE = ".agents/plugins/marketplace.json"

CONFIG_NAMES: tuple[str, ...] = (".evolve.yaml", ".evolve.yml", ".evolve.json", ".evolve.jsonc")
"""Candidate config file names, in discovery order (also evolve's opt-in marker at the root)."""

MANIFEST_PATHS: dict[str, str] = {"claude": CLAUDE_MANIFEST, "codex": CODEX_MANIFEST}
"""Plugin manifest kind (`checks.plugin_manifests`) → path inside the plugin directory."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Plugin:
    """One plugin of the repository."""

    name: str
    """Directory name (multi/marketplace) or the root manifest's `name` (single)."""
    dir: Path
    """Absolute plugin directory (the root itself in the single layout)."""
    rel: str
    """`dir` relative to the root with `/` separators (`.` for the single layout)."""
    skills_dir: Path
    """`<dir>/skills`."""
    evals_dir: Path
    """`<dir>/evals`."""
    skill_dirs: tuple[Path, ...] | None = None
    """A marketplace entry's explicit `skills` list (absolute), replacing the `skills_dir` glob."""
    manifest: bool = True
    """False when no plugin.json is expected: a `strict: false` entry or an implicit plugin."""
    root: Path | None = None
    """The repository root: skill and eval directories resolving outside it are never used."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """A `skills/<name>/SKILL.md` found by the checks glob."""

    name: str
    """The skill directory name."""
    plugin: str
    dir: Path
    """Absolute skill directory."""
    skill_md: Path
    """Absolute path of its SKILL.md."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalSet:
    """A skill with authored definitions: `evals/<skill>/` holding a triggers and/or evals file."""

    plugin: str
    plugin_dir: Path
    plugin_rel: str
    skill: str
    """Skill name = the eval directory name (authoritative over any `skill_name` field)."""
    skill_dir: Path
    """`<plugin>/skills/<skill>` (may not exist; the checks flag it)."""
    results_dir: Path
    """`<plugin>/evals/<skill>`: where triggers, evals, fixtures and results live."""
    triggers_path: Path | None
    evals_path: Path | None
    fixture_bases: tuple[Path, ...] = ()
    """Where a `files` entry not found beside the evals file is looked for next: for
    skill-creator's files the skill root (`evals/files/…`), then the repository root; empty for
    evolve's own `evals/<skill>/` sets (evolve's rule only)."""
    suite_paths: tuple[Path, ...] = ()
    """AgentEvals/AgentV suite files bound to this skill (`suite_bindings`), in path order."""
    content_skips: tuple[str, ...] = ()
    """Path prefixes (relative to `skill_dir`) the eval `content_hash` leaves out: the results
    files and reports this tool writes inside a skill whose directory is a root (a standalone
    skill, a single-skill plugin), so recording results never makes the skill look modified."""

    @property
    def has_evals(self) -> bool:
        """Whether the set has Tier 2 definitions: an evals file or any suite."""
        return self.evals_path is not None or bool(self.suite_paths)


@dataclass(frozen=True, slots=True, kw_only=True)
class RepoProblem:
    """A manifest or layout problem met by discovery; the checks report it as an error."""

    message: str
    """Starts with the root-relative path; says what Claude Code does and what to do."""
    path: str
    check: str
    pointer: str | None = None


SkillKey = tuple[str, str]
"""`(plugin, skill)`: a skill's identity across the repository model."""


PROJECT_SKILLS = ".claude/skills"
"""Project skills: Claude Code loads them for anyone working in the repository."""
