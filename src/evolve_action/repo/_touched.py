"""The touched-path rules: which skills a changed root-relative path belongs to.

Owns: `SkillPlaces` (built from the model by `Repository.places`): skill and eval directories,
definition files bound from outside them, the containers where an absent skill would live, plugin
manifests, and the `plugins/<p>/skills|evals/<n>/` rule for a deleted plugin's skills.
Guarantees: pure: answers from the map alone (`owners`, `manifest_plugins`), in the order found,
without duplicates.
Never does: touch the file system or git, decide what is evaluated (`github` and `flows` do).
"""

from __future__ import annotations

from dataclasses import dataclass

from evolve_action.repo._model import MANIFEST_PATHS, SkillKey

__all__ = [
    "SkillPlaces",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillPlaces:
    """Where each skill's files live, root-relative with `/` separators (`Repository.places`).

    Built from the model, so every layout the model knows (`<plugin>/skills/`, `skills` lists in
    marketplace entries and plugin.json, `./` sources, `.claude/skills/`, bare `skills/`, nested
    plugins) is known here too: a new layout is taught once, in discovery.
    """

    existing: tuple[SkillKey, ...]
    """Skills with a SKILL.md at this revision, in sweep order."""
    orphans: frozenset[SkillKey]
    """Eval sets whose skill has no SKILL.md (a deleted skill whose definitions stayed)."""
    dirs: tuple[tuple[str, SkillKey], ...]
    """Directories owned by a skill: its skill directory and its eval (results) directory."""
    files: tuple[tuple[str, SkillKey], ...]
    """Definition files outside those directories (a root `evals/evals.json` bound to a skill)."""
    containers: tuple[tuple[str, str, bool], ...]
    """`(directory, plugin, is_skill)` where a skill would live even when absent at this revision:
    `is_skill` False means `directory/<name>/…` is skill `<name>` (a `skills/` or `evals/`
    directory), True means the directory itself is the skill (an entry of a `skills` list)."""
    manifests: tuple[tuple[str, str], ...]
    """`(plugin manifest path, plugin)`: a change there touches all that plugin's skills."""
    plugins_dir: bool
    """`plugins/<p>/skills|evals/<n>/…` names skill `<n>` of a (maybe deleted) plugin `<p>`."""

    def owners(self, rel: str) -> tuple[SkillKey, ...]:
        """The skills whose files include the root-relative path `rel` (existing or not)."""
        found = [k for d, k in self.dirs if _owns(d, rel)]
        found += [k for f, k in self.files if rel == f]
        if not found:
            for directory, plugin, is_skill in self.containers:
                if not rel.startswith(directory + "/"):
                    continue
                rest = rel[len(directory) + 1 :].split("/")
                if is_skill:
                    found.append((plugin, directory.rsplit("/", 1)[-1]))
                elif len(rest) >= 2:
                    found.append((plugin, rest[0]))
        if not found and self.plugins_dir:
            parts = rel.split("/")
            if len(parts) >= 5 and parts[0] == "plugins" and parts[2] in ("skills", "evals"):
                found.append((parts[1], parts[3]))
        return tuple(dict.fromkeys(found))

    def manifest_plugins(self, rel: str) -> tuple[str, ...]:
        """The plugins whose manifest `rel` is (a deleted plugin's too, under `plugins/`)."""
        found = [p for m, p in self.manifests if m == rel]
        parts = rel.split("/")
        deleted_plugin = self.plugins_dir and len(parts) == 4 and parts[0] == "plugins"
        if not found and deleted_plugin and "/".join(parts[2:]) in MANIFEST_PATHS.values():
            found.append(parts[1])
        return tuple(dict.fromkeys(found))


def _owns(directory: str, rel: str) -> bool:
    """Whether the root-relative `directory` holds `rel`; the root (`.`, a standalone skill)
    holds every path outside hidden directories, as the skill's fingerprint does."""
    if directory == ".":
        return not any(part.startswith(".") for part in rel.split("/")[:-1])
    return rel.startswith(directory + "/")
