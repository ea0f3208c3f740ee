"""The `Repository` model and what it reads from the tree once: its eval sets (evolve's,
skill-creator's at the skill, plugin and root level, AgentEvals/AgentV suites) and its
`SkillPlaces`.

Owns: `Repository` (the frozen model discovery returns: `eval_sets`, `skills`, `places`, `rel`),
the binding of files found at plugin or root level to a skill (by `skill_name`, or the only skill
in scope), `suite_bindings` (a suite binds to the skill its `metadata.skill`/`skill_path` names,
else to the skill whose eval or skill directory holds it), and the notes discovery adds about them
(`foreign_notes`, `trigger_choice_notes`, `unbound_eval_files`, `refused_notes`).
Guarantees: a `Repository` is a snapshot of the tree at discovery: its eval sets and suite bindings
are read once per model (`_memoized`: the error too), so writing results files never changes them;
enumeration order is deterministic (plugin, then byte order of skill names); symlinked eval
directories are skipped, and nothing resolving outside the repository is read.
Never does: detect a layout or walk up from the working directory (`_discovery` does), print,
write files.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve_action.encoding import (
    find_one,
)
from evolve_action.errors import EvolveError
from evolve_action.repo._evalfiles import (
    READ_FORMATS,
    chosen_trigger_file,
    claims,
    eval_set,
    in_skill_set,
    named_trigger_files,
    skill_name_of,
    trigger_files,
)
from evolve_action.repo._manifests import manifest_refusals
from evolve_action.repo._model import (
    CLAUDE_MANIFEST,
    CLAUDE_MARKETPLACE,
    MANIFEST_PATHS,
    PROJECT_SKILLS,
    EvalSet,
    Layout,
    Plugin,
    RepoProblem,
    Skill,
    SkillKey,
)
from evolve_action.repo._paths import absolute, escapes, rel_path, subdirs, within
from evolve_action.repo._skills import inside, plugin_skills
from evolve_action.repo._suites import eval_patterns, suite_files, suite_skill
from evolve_action.repo._touched import SkillPlaces

__all__ = [
    "Repository",
    "foreign_notes",
    "refused_notes",
    "suite_bindings",
    "trigger_choice_notes",
    "unbound_eval_files",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Repository:
    """A detected plugin repository."""

    root: Path
    """Absolute root (made absolute without resolving symlinks)."""
    layout: Layout
    plugins: tuple[Plugin, ...]
    claude_marketplace: bool = False
    """A marketplace read the way Claude Code reads it (not an evolve marketplace)."""
    notices: tuple[str, ...] = ()
    """One-line facts about how the repository was read (remote plugins, implicit plugin, …)."""
    evolve_marker: str | None = None
    """What opts the repository in to evolve's stricter conventions (see `evolve_marker`): an
    `.evolve.<ext>` at the root; None = Claude Code's and the Agent Skills specification's rules
    only."""
    problems: tuple[RepoProblem, ...] = ()
    """What Claude Code would refuse, met while reading the repository (Tier 0 errors): rejected
    marketplace entries and manifest fields, directories resolving outside the repository."""
    refused: tuple[Plugin, ...] = ()
    """Plugins the bundled Claude Code refuses to install (`manifest_refusals`; the reason is in
    `problems`): never evaluated, never touched; their skills are named in a note as not
    loadable."""
    _memo: dict[str, tuple[Any, EvolveError | None]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """What was read from the tree once for this model (`_memoized`): the eval sets, the
    skill-creator files at plugin or root level and the suite bindings, or the error reading
    them raised."""

    def rel(self, path: Path) -> str:
        """Render `path` relative to the root with `/` separators; absolute when outside it."""
        return rel_path(self.root, path)

    def plugin(self, name: str) -> Plugin | None:
        """The plugin named `name`, if any."""
        return next((p for p in self.plugins if p.name == name), None)

    def eval_sets(self) -> list[EvalSet]:
        """Every eval set in (plugin, skill) order — the sweep order (spec §1.3).

        Read from the tree once per `Repository` (a model is a snapshot of the tree when it was
        discovered: writing results files never changes it; discover again after adding or
        removing definitions). Raises `SpecError` when a directory holds two files for one
        basename (every call, for this model).
        """
        return list(_memoized(self, "eval_sets", lambda: tuple(_eval_sets(self))))

    def skills(self) -> list[Skill]:
        """Every `skills/*/SKILL.md` of every plugin, in plugin then path order."""
        found: list[Skill] = []
        for plugin in self.plugins:
            found.extend(plugin_skills(plugin))
        return found

    def places(self) -> SkillPlaces:
        """Where every skill's files live: the one map the touched-skill rule reads."""
        return _places(self)


def refused_notes(repo: Repository) -> list[str]:
    """A note per refused plugin naming its skills as not loadable (never planned)."""
    notes: list[str] = []
    for plugin in repo.refused:
        skills = [s.name for s in plugin_skills(plugin)]
        shown = ", ".join(skills) if skills else "none"
        manifest = plugin.dir / CLAUDE_MANIFEST
        where = (
            repo.rel(manifest) if manifest_refusals(repo.root, plugin.dir) else CLAUDE_MARKETPLACE
        )
        notes.append(
            f"note: Claude Code refuses to install plugin '{plugin.name}' (the error on {where}): "
            f"its skills are not loadable and not evaluated: {shown}"
        )
    return notes


def _memoized(repo: Repository, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()` once per repository model (its error too: raised again on each call)."""
    memo = repo._memo
    if key not in memo:
        try:
            memo[key] = (compute(), None)
        except EvolveError as exc:
            memo[key] = (None, exc)
    value, error = memo[key]
    if error is not None:
        raise error
    return value


def _eval_sets(repo: Repository) -> Iterable[EvalSet]:
    """Per plugin: evolve's `evals/<skill>/` sets, then skill-creator's in-skill sets, then
    skill-creator files placed at the plugin or repository level (`_level_sets`)."""
    claimed: dict[Path, set[str]] = {}
    for plugin in repo.plugins:
        if plugin.skill_dirs is not None:
            names = claimed.setdefault(absolute(plugin.evals_dir), set())
            names.update(s.name for s in plugin_skills(plugin))
    level = _level_sets(repo)
    suites = suite_bindings(repo)[0]
    for plugin in repo.plugins:
        skills = {s.name: s.dir for s in plugin_skills(plugin)}
        listed = skills if plugin.skill_dirs is not None else None
        others = claimed.get(absolute(plugin.evals_dir), set()) - set(skills)
        found: dict[str, EvalSet] = {}
        evals_ok = inside(plugin, plugin.evals_dir)
        for skill, directory in subdirs(plugin.evals_dir) if evals_ok else []:
            if listed is not None and skill not in listed:
                continue  # another plugin sharing this directory owns it
            if listed is None and skill in others:
                continue  # a listed skill of another plugin sharing this directory
            triggers = find_one(directory, "triggers")
            evals = find_one(directory, "evals")
            if triggers is None and evals is None:
                continue
            skill_dir = (
                listed[skill]
                if listed is not None
                else skills.get(skill, plugin.skills_dir / skill)
            )
            found[skill] = eval_set(plugin, skill, skill_dir, triggers=triggers, evals=evals)
        for sk in plugin_skills(plugin):
            if sk.name in found or not evals_ok:
                continue
            in_skill = in_skill_set(plugin, sk) or level.get((plugin.name, sk.name))
            if in_skill is not None:
                found[sk.name] = in_skill
        for sk in plugin_skills(plugin) if evals_ok else []:
            bound = suites.get((plugin.name, sk.name))
            if not bound:
                continue
            prior = found.get(sk.name)
            found[sk.name] = (
                dataclasses.replace(prior, suite_paths=bound)
                if prior is not None
                else eval_set(plugin, sk.name, sk.dir, suite_paths=bound)
            )
        yield from (found[k] for k in sorted(found, key=lambda k: k.encode("utf-8", "replace")))


def _places(repo: Repository) -> SkillPlaces:
    real_root = os.path.realpath(repo.root)

    def rels(path: Path) -> list[str]:
        """`path` relative to the root, and where it really is when a symlink inside the
        repository leads there (`.claude/skills -> ../.agents/skills`): a change at either
        place touches it. Links leaving the repository are never followed."""
        shown = rel_path(repo.root, path)
        real = os.path.realpath(path)
        if real == real_root or not within(real_root, real):
            return [shown]
        target = Path(real).relative_to(real_root).as_posix()
        return [shown] if target == shown else [shown, target]

    existing: dict[SkillKey, None] = {}
    dirs: list[tuple[str, SkillKey]] = []
    containers: list[tuple[str, str, bool]] = []
    manifests: list[tuple[str, str]] = []
    for plugin in repo.plugins:
        for sk in plugin_skills(plugin):
            existing.setdefault((plugin.name, sk.name), None)
            dirs += [(r, (plugin.name, sk.name)) for r in rels(sk.dir)]
        if plugin.skill_dirs is None:
            containers += [(r, plugin.name, False) for r in rels(plugin.skills_dir)]
            containers += [(r, plugin.name, False) for r in rels(plugin.evals_dir)]
        else:
            for listed in plugin.skill_dirs:
                is_skill = os.path.lexists(listed / "SKILL.md") or not listed.is_dir()
                is_skill = is_skill and listed != plugin.skills_dir  # the default, kept by a key
                if listed == plugin.dir:
                    continue  # the root as a skill: its directory entry above covers it
                containers += [(r, plugin.name, is_skill) for r in rels(listed)]
                if is_skill:
                    evals = plugin.evals_dir / listed.name
                    containers += [(r, plugin.name, True) for r in rels(evals)]
        for manifest in MANIFEST_PATHS.values():
            manifests += [(r, plugin.name) for r in rels(plugin.dir / manifest)]
    files: list[tuple[str, SkillKey]] = []
    orphans: set[SkillKey] = set()
    try:
        sets = repo.eval_sets()
    except EvolveError:
        sets = []  # definitions that cannot be enumerated never hide a skill's own files
    for es in sets:
        key = (es.plugin, es.skill)
        if key not in existing:
            orphans.add(key)
        dirs += [(r, key) for r in rels(es.results_dir)]
        for path in (es.triggers_path, es.evals_path, *es.suite_paths):
            if path is not None:
                files += [(r, key) for r in rels(path)]
    return SkillPlaces(
        existing=tuple(existing),
        orphans=frozenset(orphans),
        dirs=tuple(dirs),
        files=tuple(files),
        containers=tuple(containers),
        manifests=tuple(manifests),
        plugins_dir=repo.layout != "single",
    )


def foreign_notes(repo: Repository) -> list[str]:
    """A note per file named like a definition the tool reads but in another shape (issue 30):
    never validated, never an error."""
    places: dict[Path, None] = {absolute(repo.root / "evals"): None}
    for plugin in repo.plugins:
        places[absolute(plugin.evals_dir)] = None
        for sk in plugin_skills(plugin):
            places[absolute(sk.dir / "evals")] = None
    notes: list[str] = []
    for where in places:
        if escapes(repo.root, where):
            continue
        candidates = [*named_trigger_files(where), where / "evals.json"]
        for path in candidates:
            if path.is_file() and not claims(path):
                notes.append(
                    f"note: {repo.rel(path)} is not in a format evolve-action reads (not "
                    f"evaluated, not checked); formats read: {READ_FORMATS}"
                )
    return notes


def _level_scan(
    repo: Repository,
) -> tuple[dict[SkillKey, EvalSet], list[tuple[Path, list[str]]]]:
    """`_scan_levels`, read once per repository model."""
    found: tuple[dict[SkillKey, EvalSet], list[tuple[Path, list[str]]]]
    found = _memoized(repo, "level_scan", lambda: _scan_levels(repo))
    return dict(found[0]), list(found[1])


def _scan_levels(
    repo: Repository,
) -> tuple[dict[SkillKey, EvalSet], list[tuple[Path, list[str]]]]:
    """skill-creator files placed at the plugin level (`<plugin>/evals/evals.json`) or the root
    (`evals/evals.json`), with trigger arrays beside them (`trigger*.json`, `eval_set.json`).

    A file binds to the skill its `skill_name` names among the skills in scope (the plugins
    whose `evals/` it is in; every skill for the root `evals/`), or to the only skill in scope.
    Returns the bound sets and the unbound files with the skill names that could bind them.
    """
    scopes: dict[Path, list[tuple[Plugin, Skill]]] = {}
    everything: list[tuple[Plugin, Skill]] = []
    for plugin in repo.plugins:
        skills = [(plugin, s) for s in plugin_skills(plugin)]
        everything.extend(skills)
        scopes.setdefault(absolute(plugin.evals_dir), []).extend(skills)
    scopes.setdefault(absolute(repo.root / "evals"), everything)
    own = {absolute(s.dir / "evals") for _, s in everything}
    bound: dict[SkillKey, EvalSet] = {}
    unbound: list[tuple[Path, list[str]]] = []
    for directory, scope in scopes.items():
        if directory in own:
            continue  # a skill's own evals/ (a root skill's): read as its in-skill set
        evals = directory / "evals.json"
        evals_path = evals if evals.is_file() and claims(evals) else None
        triggers = trigger_files(directory)
        if evals_path is None and not triggers:
            continue
        names = sorted({s.name for _, s in scope})
        wanted = skill_name_of(evals) if evals_path is not None else None
        picks = [(p, s) for p, s in scope if s.name == wanted] if wanted else []
        if not picks and len(scope) == 1:
            picks = scope
        if len(picks) != 1:
            unbound.extend((path, names) for path in ([evals] if evals_path else []) + triggers)
            continue
        plugin, skill = picks[0]
        bound.setdefault(
            (plugin.name, skill.name),
            eval_set(
                plugin,
                skill.name,
                skill.dir,
                triggers=chosen_trigger_file(triggers),
                evals=evals_path,
                fixture_bases=(skill.dir, repo.root),
            ),
        )
    return bound, unbound


def _level_sets(repo: Repository) -> dict[SkillKey, EvalSet]:
    return _level_scan(repo)[0]


def unbound_eval_files(repo: Repository) -> list[tuple[Path, list[str]]]:
    try:
        return _level_scan(repo)[1]
    except EvolveError:
        return []


def trigger_choice_notes(repo: Repository) -> list[str]:
    """A note per skill-creator set whose `evals/` holds several trigger files: which is read,
    why, which are not, and how to have them read."""
    try:
        sets = repo.eval_sets()
    except EvolveError:
        return []  # reported by the checks (`evals.enumerate`)
    notes: list[str] = []
    for es in sets:
        chosen = es.triggers_path
        if chosen is None or chosen.parent == absolute(es.results_dir):
            continue  # evolve's own `evals/<skill>/triggers.<ext>`: one by rule
        others = [p.name for p in trigger_files(chosen.parent) if p != chosen]
        if not others:
            continue
        notes.append(
            f"note: {repo.rel(chosen.parent)}/ holds {len(others) + 1} trigger eval sets for "
            f"{es.plugin}/{es.skill}: {chosen.name} is read (the shortest name, the one the "
            f"others vary) and {', '.join(others)} {'is' if len(others) == 1 else 'are'} not; "
            f"to evaluate {'its' if len(others) == 1 else 'their'} queries too, add them to "
            f"{chosen.name}"
        )
    return notes


def suite_bindings(repo: Repository) -> tuple[dict[SkillKey, tuple[Path, ...]], list[str]]:
    """Which skill each suite file evaluates, and a note for each one bound to none.

    Searched: each skill's eval directories (evolve's `<plugin>/evals/<skill>/` and the
    co-located `<skill>/evals/`), every `evals/` directory of the repository and its plugins,
    and the files `.agentv/config.yaml`'s `eval_patterns` match. A file binds to the skill its
    `metadata.skill` (or `metadata.skill_path`) names, else to the skill whose eval directory
    (or skill directory) holds it; otherwise it is named in a note with the fix. Read once per
    repository model.
    """
    found: tuple[dict[SkillKey, tuple[Path, ...]], list[str]]
    found = _memoized(repo, "suite_bindings", lambda: _bind_suites(repo))
    return dict(found[0]), list(found[1])


def _bind_suites(repo: Repository) -> tuple[dict[SkillKey, tuple[Path, ...]], list[str]]:
    skills: list[tuple[Plugin, Skill]] = [
        (p, s) for p in repo.plugins if inside(p, p.evals_dir) for s in plugin_skills(p)
    ]
    owners: list[tuple[Path, SkillKey]] = []
    for plugin, sk in skills:
        owned = (plugin.name, sk.name)
        owners += [(absolute(plugin.evals_dir / sk.name), owned), (absolute(sk.dir), owned)]
    owners.sort(key=lambda item: -len(str(item[0])))
    candidates: dict[Path, None] = {}
    for plugin, sk in skills:
        for directory in (plugin.evals_dir / sk.name, sk.dir / "evals"):
            if directory.is_dir() and not escapes(repo.root, directory):
                candidates.update(dict.fromkeys(suite_files(absolute(directory))))
    for directory in {
        absolute(repo.root / "evals"),
        *(absolute(p.evals_dir) for p in repo.plugins),
    }:
        if directory.is_dir() and not escapes(repo.root, directory):
            candidates.update(dict.fromkeys(suite_files(directory)))
    for pattern in eval_patterns(repo.root):
        for path in sorted(repo.root.glob(pattern.removeprefix("./"))):
            if path.is_file() and not escapes(repo.root, path):
                candidates[absolute(path)] = None
    bound: dict[SkillKey, list[Path]] = {}
    notes: list[str] = []
    names = sorted({sk.name for _, sk in skills})
    for path in sorted(candidates, key=lambda p: str(p).encode("utf-8", "surrogateescape")):
        if any(part.startswith(".") for part in path.relative_to(repo.root).parts[:-1]) and not (
            path.is_relative_to(absolute(repo.root / PROJECT_SKILLS))
        ):
            continue
        meta_skill, meta_path = suite_skill(path)
        key: SkillKey | None = None
        if meta_path:
            target = absolute(repo.root / meta_path)
            key = next(((p.name, s.name) for p, s in skills if absolute(s.dir) == target), None)
        if key is None and meta_skill:
            matches = [(p, s) for p, s in skills if s.name == meta_skill]
            near = [m for m in matches if path.is_relative_to(absolute(m[0].dir))]
            pick = near if len(near) == 1 else matches
            if len(pick) == 1:
                key = (pick[0][0].name, pick[0][1].name)
            else:
                why = "is not a skill here" if not matches else "names several skills"
                notes.append(
                    f"note: {repo.rel(path)}: metadata.skill {meta_skill!r} {why} (suite not "
                    f"evaluated); fix: name one of: {', '.join(names[:8]) or 'no skills found'}"
                )
                continue
        if key is None:
            key = next((k for d, k in owners if path.is_relative_to(d)), None)
        if key is None:
            choices = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
            notes.append(
                f"note: {repo.rel(path)} is an AgentEvals/AgentV suite bound to no skill (not "
                f"evaluated); fix: add `metadata: {{skill: <name>}}` (one of: "
                f"{choices or 'no skills found'}) or move it to evals/<skill>/"
            )
            continue
        bound.setdefault(key, []).append(path)
    return {k: tuple(v) for k, v in bound.items()}, notes
