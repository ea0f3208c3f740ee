"""The eval-definition files of one skill: evolve's `evals/<skill>/` set, skill-creator's files and
their shapes, and the one way an `EvalSet` is made.

Owns: `eval_set` (results always live in `<plugin>/evals/<skill>/`; a root skill's results are
left out of its content hash), skill-creator's in-skill set (`in_skill_set`: `evals/evals.json`
and a trigger array file, `IN_SKILL_TRIGGER_NAMES`), whether a file named like skill-creator's is
in its shape (`claims`; files in another shape are a note naming `READ_FORMATS`, never read),
`chosen_trigger_file` (several trigger files together: the shortest name is read), and the fix
that binds an unbound file (`binding_fix`).
Guarantees: never raises for a file it cannot read (it is claimed, so the checks report it).
Never does: scan the repository (`_repository` binds plugin-level, root-level and suite files).
"""

from __future__ import annotations

from pathlib import Path

from evolve_action.repo._model import EvalSet, Plugin, Skill
from evolve_action.repo._paths import absolute, rel_path
from evolve_action.repo._reading import read_manifest

__all__ = [
    "IN_SKILL_EVALS",
    "IN_SKILL_TRIGGER_NAMES",
    "READ_FORMATS",
    "binding_fix",
    "chosen_trigger_file",
    "claims",
    "eval_set",
    "in_skill_set",
    "in_skill_trigger_files",
    "named_trigger_files",
    "skill_name_of",
    "trigger_files",
]


def eval_set(
    plugin: Plugin,
    skill: str,
    skill_dir: Path,
    *,
    triggers: Path | None = None,
    evals: Path | None = None,
    fixture_bases: tuple[Path, ...] = (),
    suite_paths: tuple[Path, ...] = (),
) -> EvalSet:
    """The one way an `EvalSet` is made: results always live in `<plugin>/evals/<skill>/`."""
    results_dir = plugin.evals_dir / skill
    skips: tuple[str, ...] = ()
    if absolute(skill_dir) == absolute(plugin.dir):
        inner = rel_path(absolute(skill_dir), absolute(results_dir))
        skips = (f"{inner}/results.", "EVALUATION.")
    return EvalSet(
        content_skips=skips,
        plugin=plugin.name,
        plugin_dir=plugin.dir,
        plugin_rel=plugin.rel,
        skill=skill,
        skill_dir=skill_dir,
        results_dir=results_dir,
        triggers_path=triggers,
        evals_path=evals,
        fixture_bases=fixture_bases,
        suite_paths=suite_paths,
    )


IN_SKILL_EVALS = "evals/evals.json"
"""skill-creator's behavioural evals, inside the skill directory."""

IN_SKILL_TRIGGER_NAMES = ("trigger*.json", "eval_set.json")
"""skill-creator's trigger eval sets (a bare JSON array), looked for in `<skill>/evals/`."""


READ_FORMATS = (
    "evolve's evals/<skill>/triggers.<ext> and evals.<ext>; skill-creator's evals/evals.json "
    '({"evals": [...]}) and trigger array ([{"query", "should_trigger"}] in trigger*.json or '
    "eval_set.json); AgentEvals EVAL.yaml and AgentV suites"
)
"""The definition formats evolve-action reads, as notes about other files name them."""


def named_trigger_files(where: Path) -> list[Path]:
    found = {p for pattern in IN_SKILL_TRIGGER_NAMES for p in where.glob(pattern) if p.is_file()}
    return sorted(found, key=lambda p: p.name.encode("utf-8", "surrogateescape"))


def claims(path: Path) -> bool:
    """Whether a file named like skill-creator's is in its shape (so validated strictly): a
    trigger array (or evolve's `{"triggers": [...]}`) or an `{"evals": [...]}` object. A file
    that is not JSON at all stays claimed: its syntax error is worth reporting."""
    manifest = read_manifest(path)
    if not manifest.ok:
        return True
    value = manifest.value
    if path.name == "evals.json":
        return isinstance(value, dict) and "evals" in value
    return isinstance(value, list) or (isinstance(value, dict) and "triggers" in value)


def trigger_files(where: Path) -> list[Path]:
    """skill-creator's trigger files in `where` that are in its shape (`claims`)."""
    return [p for p in named_trigger_files(where) if claims(p)]


def in_skill_trigger_files(skill_dir: Path) -> list[Path]:
    """The trigger eval set files of `<skill_dir>/evals/` by skill-creator's common names."""
    return trigger_files(skill_dir / "evals")


def in_skill_set(plugin: Plugin, skill: Skill) -> EvalSet | None:
    """skill-creator's layout: definitions inside the skill, results beside evolve's.

    `<skill>/evals/evals.json` and one trigger array file (`IN_SKILL_TRIGGER_NAMES`) are read in
    place; results go to `<plugin>/evals/<skill>/`, outside the skill, so writing them never
    changes the skill's own fingerprint; fixtures resolve from the skill root (`evals/files/…`), as
    skill-creator resolves them. Several trigger files → the one `chosen_trigger_file` picks (a
    note names the others: `trigger_choice_notes`).
    """
    evals = skill.dir / IN_SKILL_EVALS
    evals_ok = evals.is_file() and claims(evals)  # another tool's file: a note, never read
    triggers = in_skill_trigger_files(skill.dir)
    if not evals_ok and not triggers:
        return None
    return eval_set(
        plugin,
        skill.name,
        skill.dir,
        triggers=chosen_trigger_file(triggers),
        evals=evals if evals_ok else None,
        fixture_bases=(skill.dir, *((plugin.root,) if plugin.root is not None else ())),
    )


def skill_name_of(path: Path) -> str | None:
    """The `skill_name` of a skill-creator evals.json, when it reads as one (never raises)."""
    manifest = read_manifest(path)
    if manifest.ok and isinstance(manifest.value, dict):
        name = manifest.value.get("skill_name")
        return name if isinstance(name, str) else None
    return None


def binding_fix(path: Path, names: list[str]) -> str:
    """A fix that binds `path`: naming a skill that is in scope, or moving it into one."""
    choices = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    if path.name == "evals.json":
        wanted = skill_name_of(path)
        if wanted:
            return (
                f'its "skill_name" "{wanted}" names no skill here; set it to one of: '
                f"{choices or 'no skill found'}"
            )
        return f'add "skill_name": "<skill>" to it (one of: {choices or "no skill found"})'
    return f"move it to <skill>/evals/{path.name} (skills: {choices or 'none found'})"


def chosen_trigger_file(files: list[Path]) -> Path | None:
    """The one trigger file read where several sit together: the shortest name (the one the
    others vary, `trigger-eval.json` before `trigger-eval-fuzzy.json`), then byte order."""
    if not files:
        return None
    return min(files, key=lambda p: (len(p.name), p.name.encode("utf-8", "surrogateescape")))
