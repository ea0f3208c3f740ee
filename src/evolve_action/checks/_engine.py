"""Tier 0: static checks of a plugin repository (engine spec §5).

Owns: `run_checks` — marketplace, plugin manifest, SKILL.md and eval-spec checks in evolve's
emission order and wording — the choice of rules (evolve's conventions where the repository opts
in, else Claude Code's and the Agent Skills specification's; docs/checks.md) and the verdict
(`CheckReport`), and the split of a report by a change (`split_pre_existing`: errors of skills
a PR did not touch are pre-existing, issue 30). One naming problem is one finding (a name and
its directory that are the same non-kebab string); a skill at a plugin's or repository's root is
named by its frontmatter, so its name is not compared with the directory. The advisory skill
signals live in
`_signals` (exported by the package: `SkillSignal`, `skill_signals`, `size_score`, `conciseness_score`,
`prose_lines`, `HEDGE_WORDS`).

Guarantees: pure over the repository (reads files, never writes or prints); every problem is a
`Finding` whose message starts with the path relative to the root (or is evolve's path-less
repository message), with the line where known; the same repository always yields the same
findings in the same order. Eval-file validation is delegated to `specs` validation (one source of
truth). Never does: reading `os.environ`, raising for a broken authored file (that is a finding).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evolve_action import specs
from evolve_action.checks._signals import (
    SkillSignal,
    skill_signals,
)
from evolve_action.config import Config, compile_description_pattern
from evolve_action.encoding import go_str_list, split_lines, trim_space
from evolve_action.errors import EvolveError
from evolve_action.harness import outside_links
from evolve_action.repo import (
    CLAUDE_MANIFEST,
    CLAUDE_MARKETPLACE,
    CODEX_MARKETPLACE,
    MANIFEST_PATHS,
    Frontmatter,
    Manifest,
    Plugin,
    Repository,
    Skill,
    entry_source,
    go_str,
    parse_frontmatter,
    plugin_skills,
    read_manifest,
    read_text,
    rel_path,
    remote_entry,
    shadowing_command,
)
from evolve_action.specs import Finding, Severity

Conventions = Literal["evolve", "claude-code"]
"""`evolve`: the repository opted in (an `.evolve.*` config, `.codex-plugin/`, `.agents/plugins/`);
`claude-code`: only what Claude Code and the Agent Skills specification require."""

ANY_LICENSE = "any"
"""`checks.license: any`: every SKILL.md may declare any license, or none."""

MAX_NAME_RUNES = 64
MAX_DESCRIPTION_RUNES = 1024
_KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_SEMVER = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOptions:
    """Per-run overrides of `checks.*` (the `run checks` flags); `None` = use the config."""

    license: str | None = None
    """`--license X`: the required SKILL.md license (overrides `checks.license`)."""
    signals: bool | None = None
    """`--no-signals` → False."""
    marketplace: bool | None = None
    """`--no-marketplace` → False."""
    check_fixtures: bool = True
    """Whether a missing `files` fixture is a finding."""
    eval_sets: frozenset[tuple[str, str]] | None = None
    """Validate only these `(plugin, skill)` eval sets' files (the action's PR job: the touched
    skills); None = every one. Repository, plugin and SKILL.md checks always cover everything."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckReport:
    """The outcome of a checks run."""

    root: Path
    layout: str
    plugins: int
    conventions: Conventions = "evolve"
    """Which checklist applied: evolve's stricter conventions or Claude Code's rules (docs/checks.md)."""
    findings: tuple[Finding, ...] = ()
    """All findings in emission order (errors and warnings)."""
    signals: tuple[SkillSignal, ...] = ()
    """Advisory signals, empty when disabled."""

    @property
    def failures(self) -> int:
        """Number of error findings (what `--strict` fails on)."""
        return sum(1 for f in self.findings if f.severity == Severity.ERROR)

    @property
    def warnings(self) -> int:
        """Number of warning findings (advisory)."""
        return sum(1 for f in self.findings if f.severity == Severity.WARNING)

    @property
    def verdict(self) -> Literal["passed", "failed"]:
        """`failed` when any error finding exists."""
        return "failed" if self.failures else "passed"


@dataclass(frozen=True, slots=True, kw_only=True)
class PreExisting:
    """A check report split by a change (issue 30): the errors a PR answers for, and the errors
    of skills it did not touch (reported once, never failing the PR's job)."""

    failures: int
    """Errors in touched skills, or in no skill at all (manifests, the repository)."""
    untouched: tuple[Finding, ...]
    """Errors whose files belong only to skills the change did not touch."""
    skills: tuple[str, ...]
    """`plugin/skill` of the untouched skills with errors, in report order."""

    def line(self) -> str:
        """The one summary line naming them (empty when there are none)."""
        if not self.untouched:
            return ""
        shown = ", ".join(self.skills[:5]) + (", …" if len(self.skills) > 5 else "")
        count = len(self.untouched)
        return (
            f"checks: {count} pre-existing failure{'' if count == 1 else 's'} in skills this change "
            f"did not touch ({shown}); not counted here — `run checks` lists them, `gate` and "
            "`run checks --strict` fail on them"
        )


def split_pre_existing(
    report: CheckReport, repo: Repository, touched: Iterable[tuple[str, str]]
) -> PreExisting:
    """Split `report`'s errors into those of touched skills and those of skills left alone.

    A finding belongs to the skills owning its file (`Repository.places`); one owned by no skill
    (a manifest, the layout) always counts.
    """
    wanted = set(touched)
    places = repo.places()
    counted = 0
    untouched: list[Finding] = []
    skills: dict[str, None] = {}
    for finding in report.findings:
        if finding.severity != Severity.ERROR:
            continue
        owners = places.owners(finding.path) if finding.path else ()
        if owners and not wanted.intersection(owners):
            untouched.append(finding)
            skills.update(dict.fromkeys(f"{p}/{s}" for p, s in owners))
        else:
            counted += 1
    return PreExisting(failures=counted, untouched=tuple(untouched), skills=tuple(skills))


@dataclass(slots=True)
class _Collector:
    root: Path
    findings: list[Finding] = field(default_factory=list)

    def add(
        self,
        message: str,
        *,
        check: str,
        path: Path | str | None = None,
        line: int | None = None,
        pointer: str | None = None,
        severity: Severity = Severity.ERROR,
    ) -> None:
        shown: str | None
        if isinstance(path, Path):
            shown = rel_path(self.root, path)
        else:
            shown = path
        self.findings.append(
            Finding(
                message=message,
                path=shown,
                line=line,
                pointer=pointer,
                check=check,
                severity=severity,
            )
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Rules:
    """What this run checks, from the conventions and the explicitly set `checks.*` keys."""

    evolve: bool
    kinds: tuple[str, ...]
    """Required plugin manifests."""
    pattern: Any
    """Compiled `checks.description_pattern`, or None when no phrase is required."""
    license: str | None
    """Required license value; None = not checked (Claude Code) or forbidden (evolve)."""
    manifest_optional: bool
    """A plugin may omit its manifest (Claude Code then names it after its directory)."""


def _rules(repo: Repository, config: Config, opts: CheckOptions) -> _Rules:
    """evolve's conventions apply where the repository opts in; explicitly set keys always do."""
    settings = config.checks
    evolve = repo.evolve_marker is not None or config.source_path is not None
    license_ = opts.license if opts.license is not None else settings.license
    if evolve or config.is_set("checks.plugin_manifests"):
        kinds = settings.plugin_manifests
    else:
        kinds = ("claude",)
    pattern = (
        compile_description_pattern(settings.description_pattern)
        if evolve or config.is_set("checks.description_pattern")
        else None
    )
    return _Rules(
        evolve=evolve,
        kinds=kinds,
        pattern=pattern,
        license=license_,
        manifest_optional=not evolve and not config.is_set("checks.plugin_manifests"),
    )


def run_checks(
    repo: Repository, config: Config, options: CheckOptions | None = None
) -> CheckReport:
    """Run every Tier 0 check over `repo` and return the findings in evolve's emission order.

    evolve's stricter conventions (Codex manifests and marketplace, the hooks ban, the license
    rule, the description phrase, version and name agreement) apply when the repository opts in
    (`Repository.evolve_marker`, or a config file in use); otherwise the checks are Claude Code's
    and the Agent Skills specification's. Keys set explicitly (environment, flags) always apply.
    """
    opts = options or CheckOptions()
    settings = config.checks
    rules = _rules(repo, config, opts)
    marketplace = settings.marketplace if opts.marketplace is None else opts.marketplace
    signals = settings.signals if opts.signals is None else opts.signals
    out = _Collector(repo.root)

    for problem in repo.problems:
        out.add(problem.message, check=problem.check, path=problem.path, pointer=problem.pointer)
    if repo.layout == "single":
        own = 0 if repo.refused else 1  # Claude Code refuses the root plugin: none of its own
        for plugin in repo.plugins[:own]:
            _plugin_checks(out, repo, plugin, "repo root", None, rules, config)
        for plugin in repo.plugins[own:]:  # project skills beside the root plugin
            _plugin_checks(out, repo, plugin, plugin.rel, plugin.name, rules, config)
    else:
        if repo.layout == "marketplace":
            if marketplace:
                _marketplace_checks(out, repo, codex=rules.evolve and not repo.claude_marketplace)
            stray = repo.root / CLAUDE_MANIFEST
            if rules.evolve and stray.is_file() and not repo.claude_marketplace:
                out.add(
                    f"repo root: stray {CLAUDE_MANIFEST} in a marketplace repository",
                    check="repo.stray_manifest",
                    path=stray,
                )
        if not repo.plugins and not repo.claude_marketplace and not repo.problems:
            out.add(
                "no plugins under plugins/ (for a root-level plugin repo, use the single layout)",
                check="repo.plugins",
            )
        for plugin in repo.plugins:
            _plugin_checks(out, repo, plugin, plugin.rel, plugin.name, rules, config)
    _eval_spec_checks(out, repo, opts)
    _output_link_checks(out, repo)
    scores = tuple(skill_signals(repo, config)) if signals else ()
    return CheckReport(
        root=repo.root,
        layout=repo.layout,
        plugins=len(repo.plugins),
        conventions="evolve" if rules.evolve else "claude-code",
        findings=tuple(out.findings),
        signals=scores,
    )


def _manifest_object(
    out: _Collector, manifest: Manifest, rel: str, check: str
) -> dict[str, Any] | None:
    """The manifest's top-level object, or None after reporting why it is unusable (§5.2)."""
    if manifest.error is not None:
        out.add(f"{rel}: {manifest.error}", check=check, path=rel, line=manifest.line)
        return None
    if not isinstance(manifest.value, dict):
        out.add(f"{rel}: manifest is not a JSON object", check=check, path=rel)
        return None
    return manifest.value


# --- marketplace (§5.4) ---------------------------------------------------------------------


def _marketplace_checks(out: _Collector, repo: Repository, *, codex: bool) -> None:
    """The Claude Code marketplace, and evolve's Codex twin when `codex` (evolve's conventions)."""
    loaded: dict[str, dict[str, Any]] = {}
    wanted: tuple[tuple[str, str], ...] = (
        ("claude", CLAUDE_MARKETPLACE),
        ("codex", CODEX_MARKETPLACE),
    )
    if not codex:
        wanted = wanted[:1]
    for kind, rel in wanted:
        path = repo.root / rel
        manifest = read_manifest(path)
        if not manifest.exists:
            out.add(
                f"missing {rel} (set checks.marketplace: false to opt out)",
                check="marketplace.missing",
                path=rel,
            )
            continue
        value = _manifest_object(out, manifest, rel, "marketplace.json")
        if value is None:
            continue
        plugins = value.get("plugins")
        if go_str(value.get("name")) == "" or not isinstance(plugins, list) or not plugins:
            out.add(
                f"{rel}: missing name or non-empty plugins array",
                check="marketplace.fields",
                path=rel,
            )
        loaded[kind] = value
    claude = loaded.get("claude")
    if claude is not None:
        owner = claude.get("owner")
        owner_name = owner.get("name") if isinstance(owner, dict) else None
        if go_str(owner_name) == "":
            out.add(
                f"{CLAUDE_MARKETPLACE}: missing owner.name",
                check="marketplace.owner",
                path=CLAUDE_MARKETPLACE,
                pointer="/owner/name",
            )
    for kind, value in loaded.items():
        rel = CLAUDE_MARKETPLACE if kind == "claude" else CODEX_MARKETPLACE
        plugins = value.get("plugins")
        for index, entry in enumerate(plugins if isinstance(plugins, list) else []):
            source: Any = entry.get("source") if isinstance(entry, dict) else None
            if isinstance(source, dict):
                source = source.get("path")
            src = go_str(source)
            if remote_entry(entry) or (repo.claude_marketplace and entry_source(entry)[0] is None):
                continue  # remote (or self-listing): a notice of the repository, never a failure
            if not src.startswith("./"):
                out.add(
                    f"marketplace source '{src}' is not ./-prefixed",
                    check="marketplace.source",
                    path=rel,
                    pointer=f"/plugins/{index}/source",
                )
            elif not (repo.root / src).is_dir():
                out.add(
                    f"marketplace source '{src}' does not resolve",
                    check="marketplace.source",
                    path=rel,
                    pointer=f"/plugins/{index}/source",
                )
    if len(loaded) == 2:
        names = {kind: sorted(_plugin_names(value)) for kind, value in loaded.items()}
        if names["claude"] != names["codex"]:
            out.add(
                f"marketplaces disagree on plugins: claude={go_str_list(names['claude'])} "
                f"codex={go_str_list(names['codex'])}",
                check="marketplace.agree",
                path=CODEX_MARKETPLACE,
            )


def _plugin_names(value: dict[str, Any]) -> list[str]:
    plugins = value.get("plugins")
    if not isinstance(plugins, list):
        return []
    return [go_str(p.get("name") if isinstance(p, dict) else None) for p in plugins]


# --- plugins (§5.2) -------------------------------------------------------------------------


def _plugin_checks(
    out: _Collector,
    repo: Repository,
    plugin: Plugin,
    label: str,
    expected: str | None,
    rules: _Rules,
    config: Config,
) -> None:
    loaded: dict[str, dict[str, Any]] = {}
    kinds = rules.kinds
    if not plugin.manifest:
        kinds = ()  # `strict: false` entry or implicit plugin: no plugin.json is expected
    for kind in kinds:
        manifest_rel = MANIFEST_PATHS[kind]
        path = plugin.dir / manifest_rel
        manifest = read_manifest(path)
        rel = rel_path(repo.root, path)
        if not manifest.exists and rules.manifest_optional:
            continue
        if not manifest.exists:
            out.add(
                f'{label}: missing {manifest_rel} (remove "{kind}" from '
                "checks.plugin_manifests to opt out)",
                check="plugin.manifest",
                path=rel,
            )
        elif (value := _manifest_object(out, manifest, rel, "plugin.manifest")) is not None:
            loaded[kind] = value
    # A plugin.json `name` Claude Code refuses (missing, empty, spaces…) made the plugin refused
    # in discovery (`plugin.refused`): it never reaches these checks.
    if kinds and len(loaded) == len(set(kinds)) and rules.evolve:
        _agreement_checks(out, repo, plugin, label, expected, loaded)
    if "claude" in kinds and "codex" in kinds and (plugin.dir / "hooks").is_dir():
        out.add(
            f"{label}: hooks/ directory is forbidden (incompatible hooks schemas across the "
            f"required plugin manifests: {', '.join(kinds)})",
            check="plugin.hooks",
            path=plugin.dir / "hooks",
        )
    skills = plugin_skills(plugin)
    if not skills and repo.claude_marketplace:
        return  # shown in the repository's notices and skipped, as Claude Code would
    if not skills and not rules.evolve:
        # Claude Code loads a plugin of commands, agents, hooks or MCP servers alone just fine.
        out.add(
            f"{label}: no skills ({_components(plugin) or 'no components'}): nothing to evaluate",
            check="plugin.skills",
            path=plugin.skills_dir,
            severity=Severity.WARNING,
        )
        return
    if not skills:
        out.add(f"{label}: no skills under skills/", check="plugin.skills", path=plugin.skills_dir)
        return
    for skill in skills:
        _skill_checks(out, repo, skill, rules, config)


_COMPONENTS = ("commands", "agents", "hooks", "output-styles")


def _components(plugin: Plugin) -> str:
    """The non-skill components a plugin ships (`commands/, agents/`), for the no-skills line."""
    found = [f"{name}/" for name in _COMPONENTS if (plugin.dir / name).is_dir()]
    found += [name for name in (".mcp.json", ".lsp.json") if (plugin.dir / name).is_file()]
    return ", ".join(found)


def _agreement_checks(
    out: _Collector,
    repo: Repository,
    plugin: Plugin,
    label: str,
    expected: str | None,
    loaded: dict[str, dict[str, Any]],
) -> None:
    if expected is not None:
        for kind, value in loaded.items():
            rel = rel_path(repo.root, plugin.dir / MANIFEST_PATHS[kind])
            name = go_str(value.get("name"))
            if name != expected:
                out.add(
                    f"{rel}: name '{name}' != directory '{expected}'",
                    check="plugin.name",
                    path=rel,
                    pointer="/name",
                )
    else:
        names = sorted({go_str(v.get("name")) for v in loaded.values()})
        if len(names) > 1:
            out.add(
                f"{label}: manifests disagree on plugin name: {go_str_list(names)}",
                check="plugin.name",
                path=rel_path(repo.root, plugin.dir / CLAUDE_MANIFEST),
            )
        for name in names:
            if not _KEBAB.fullmatch(name):
                out.add(
                    f"{label}: plugin name '{name}' not kebab-case",
                    check="plugin.name",
                    path=rel_path(repo.root, plugin.dir / CLAUDE_MANIFEST),
                    pointer="/name",
                )
    versions: list[tuple[str, str]] = []
    for kind, value in loaded.items():
        version = go_str(value.get("version"))
        versions.append((kind, version))
        if not _SEMVER.fullmatch(version):
            out.add(
                f"{label}: version '{version}' is not strict semver",
                check="plugin.version",
                path=rel_path(repo.root, plugin.dir / MANIFEST_PATHS[kind]),
                pointer="/version",
            )
    if len({v for _, v in versions}) > 1:
        pairs = " ".join(f"{k}={v}" for k, v in versions)
        out.add(
            f"{label}: version mismatch ({pairs})",
            check="plugin.version",
            path=rel_path(repo.root, plugin.dir / MANIFEST_PATHS[versions[-1][0]]),
            pointer="/version",
        )


# --- SKILL.md (§5.3) ------------------------------------------------------------------------


def _skill_checks(
    out: _Collector,
    repo: Repository,
    skill: Skill,
    rules: _Rules,
    config: Config,
) -> None:
    rel = rel_path(repo.root, skill.skill_md)
    if _outside_link_checks(out, repo, skill.skill_md.parent, check="skill.symlink"):
        return  # never read a file outside the repository (it would reach the model)
    plugin = repo.plugin(skill.plugin)
    if plugin is not None and (command := shadowing_command(plugin.dir, skill.dir, skill.name)):
        out.add(
            f"{rel}: the command {rel_path(repo.root, command)} takes this skill's name "
            f"'{skill.name}': Claude Code lists the command in its place, so the model never "
            "sees this skill and its triggers are not run — rename the skill or the command",
            check="skill.shadowed",
            path=rel,
        )
    try:
        text = read_text(skill.skill_md)
    except EvolveError as exc:
        out.add(f"{rel}: unreadable ({exc.message})", check="skill.read", path=rel, line=exc.line)
        return
    front = parse_frontmatter(text, skill.skill_md)
    if front is None:
        out.add(
            f"{rel}: no YAML frontmatter",
            check="skill.frontmatter",
            path=rel,
            line=1,
        )
        return
    if front.error is not None:
        out.add(
            f"{rel}: frontmatter is not valid YAML ({front.error}); Claude Code loads this "
            "skill with no name or description",
            check="skill.frontmatter",
            path=rel,
            line=front.error_line,
        )
        _size_check(out, rel, text, config, rules)
        return
    name = front.fields.get("name", "")
    name_line = front.lines.get("name", 1)
    # A skill at a plugin's or repository's root is named by its frontmatter (its directory is
    # the checkout's, renamed on install): only the name itself is checked then.
    at_root = skill.dir == skill.skill_md.parent and any(
        p.dir == skill.dir for p in repo.plugins if p.name == skill.plugin
    )
    _name_checks(out, rel, name, name_line, skill.name, at_root=at_root, evolve=rules.evolve)
    if len(name) > MAX_NAME_RUNES:
        out.add(
            f"{rel}: name longer than {MAX_NAME_RUNES} chars",
            check="skill.name",
            path=rel,
            line=name_line,
        )
    description = trim_space(front.fields.get("description", ""))  # Claude Code trims it
    desc_line = front.lines.get("description", 1)
    if description == "":
        out.add(f"{rel}: empty description", check="skill.description", path=rel, line=desc_line)
    if len(description) > MAX_DESCRIPTION_RUNES:
        out.add(
            f"{rel}: description longer than {MAX_DESCRIPTION_RUNES} chars",
            check="skill.description",
            path=rel,
            line=desc_line,
        )
    if rules.pattern is not None and rules.pattern.search(description) is None:
        out.add(
            f"{rel}: description missing a 'Use when/after/before' trigger phrase "
            "(checks.description_pattern)",
            check="skill.description",
            path=rel,
            line=desc_line,
        )
    _license_check(out, rel, front, rules)
    _size_check(out, rel, text, config, rules)


def _name_checks(
    out: _Collector,
    rel: str,
    name: str,
    line: int,
    directory: str,
    *,
    at_root: bool,
    evolve: bool,
) -> None:
    """The `name` against the Agent Skills rules: equal to the directory, kebab-case.

    Under evolve's conventions, evolve's findings as it words them (one per rule). Otherwise one
    finding per problem (issue 30): a missing name, a name differing from its directory (kebab
    or not), a name and directory that are the same non-kebab string. A skill at a root is named
    by its frontmatter: only its kebab-case is checked. A directory that is not kebab-case while
    the name differs is its own problem (Claude Code may then load none of the plugin's skills).
    """
    kebab = _KEBAB.fullmatch(name) is not None
    if evolve:
        if name != directory and not at_root:
            out.add(
                f"{rel}: name '{name}' != directory '{directory}'",
                check="skill.name",
                path=rel,
                line=line,
            )
        if not kebab:
            out.add(f"{rel}: name '{name}' not kebab-case", check="skill.name", path=rel, line=line)
    elif at_root:
        if not kebab:
            out.add(f"{rel}: name '{name}' not kebab-case", check="skill.name", path=rel, line=line)
    elif name == "":
        out.add(
            f"{rel}: name missing (the Agent Skills specification requires it; Claude Code uses "
            f"the directory's) — add `name: {directory}`",
            check="skill.name",
            path=rel,
            line=line,
        )
    elif name != directory:
        out.add(
            f"{rel}: name '{name}' != directory '{directory}'"
            + ("" if kebab else " (and not kebab-case)"),
            check="skill.name",
            path=rel,
            line=line,
        )
    elif not kebab:
        out.add(
            f"{rel}: name '{name}' not kebab-case (nor is its directory: rename both)",
            check="skill.name",
            path=rel,
            line=line,
        )
    dir_problem = not _KEBAB.fullmatch(directory) and not at_root
    if dir_problem and (evolve or name != directory):
        # Claude Code has been seen to list no skill at all when one directory name is not
        # kebab-case: every trigger session of the plugin would then be invalid (issue 8).
        out.add(
            f"{rel}: skill directory '{directory}' not kebab-case (Claude Code may not load "
            "this plugin's skills)",
            check="skill.dirname",
            path=rel,
        )


def _size_check(out: _Collector, rel: str, text: str, config: Config, rules: _Rules) -> None:
    """The Agent Skills specification *recommends* under 500 lines and Claude Code loads longer
    files: a warning, unless the repository opts in to evolve (or sets the cap) — then an error."""
    cap = config.checks.max_skill_lines
    count = len(split_lines(text))
    if count > cap:
        strict = rules.evolve or config.is_set("checks.max_skill_lines")
        out.add(
            f"{rel}: SKILL.md exceeds {cap} lines ({count}) (checks.max_skill_lines)",
            check="skill.size",
            path=rel,
            line=cap + 1,
            severity=Severity.ERROR if strict else Severity.WARNING,
        )


def _license_check(out: _Collector, rel: str, front: Frontmatter, rules: _Rules) -> None:
    """evolve: no `license` unless `checks.license` names it; set: equal to it; `any` or Claude
    Code's rules with nothing set: not checked."""
    license_ = rules.license
    if license_ == ANY_LICENSE:
        return
    if "license" in front.fields and not license_ and rules.evolve:
        out.add(
            f"{rel}: license '{front.fields['license']}' is forbidden (no checks.license configured)",
            check="skill.license",
            path=rel,
            line=front.lines["license"],
        )
    elif license_ and front.fields.get("license", "") != license_:
        out.add(
            f"{rel}: license must be {license_} (got '{front.fields.get('license', '')}')",
            check="skill.license",
            path=rel,
            line=front.lines.get("license", front.end_line),
        )


# --- eval specs (§5.5) ----------------------------------------------------------------------


def _eval_spec_checks(out: _Collector, repo: Repository, opts: CheckOptions) -> None:
    try:
        sets = repo.eval_sets()
    except EvolveError as exc:
        out.add(
            f"enumerating evals: {exc.message}",
            check="evals.enumerate",
            path=exc.path if exc.path is not None else None,
        )
        return
    for eval_set in sets:
        if opts.eval_sets is not None and (eval_set.plugin, eval_set.skill) not in opts.eval_sets:
            continue
        _outside_link_checks(out, repo, eval_set.results_dir, check="evals.symlink")
        if eval_set.triggers_path is not None:
            try:
                found = specs.validate_triggers(eval_set.triggers_path, repo.root)
            except EvolveError as exc:
                found = [_load_finding(repo, eval_set.triggers_path, exc, "triggers.load")]
            out.findings.extend(found)
        if eval_set.evals_path is not None:
            try:
                found = specs.validate_evals(
                    eval_set.evals_path,
                    repo.root,
                    check_fixtures=opts.check_fixtures,
                    fixture_bases=eval_set.fixture_bases,
                )
            except EvolveError as exc:
                found = [_load_finding(repo, eval_set.evals_path, exc, "evals.load")]
            out.findings.extend(found)
        for suite_path in eval_set.suite_paths:
            try:
                found = specs.validate_suite(suite_path, repo.root, skill_dir=eval_set.skill_dir)
            except EvolveError as exc:
                found = [_load_finding(repo, suite_path, exc, "suite.load")]
            out.findings.extend(found)
        if not eval_set.skill_dir.is_dir():
            out.add(
                f"{eval_set.plugin_rel}: evals/{eval_set.skill} has no matching skill at "
                f"{rel_path(repo.root, eval_set.skill_dir)}",
                check="evals.skill",
                path=eval_set.results_dir,
            )


_OUTPUT_NAMES = tuple(f"EVALUATION.{ext}" for ext in ("md", "json", "jsonc", "yaml", "yml"))
_RESULTS_NAMES = tuple(
    f"results.{ext}{tmp}" for ext in ("json", "jsonc", "yaml", "yml") for tmp in ("", ".tmp")
)


def _output_link_checks(out: _Collector, repo: Repository) -> None:
    """A finding per place we write (reports, rollups, results, `.evolve-action/`) that is, or goes
    through, a symlink inside the repository: writes there are refused (`encoding.atomic_write_text`)."""
    places = [repo.root / ".evolve-action", *(repo.root / n for n in _OUTPUT_NAMES)]
    for plugin in repo.plugins:
        places.extend(plugin.dir / n for n in _OUTPUT_NAMES)
    try:
        sets = repo.eval_sets()
    except EvolveError:
        sets = []  # already a finding (`evals.enumerate`)
    for eval_set in sets:
        places.extend(eval_set.results_dir / n for n in _RESULTS_NAMES)
    flagged = {f.path for f in out.findings if f.check.endswith(".symlink")}
    for place in dict.fromkeys(places):
        link = _linked_component(repo.root, place)
        if link is None:
            continue
        rel = rel_path(repo.root, link)
        if rel in flagged:
            continue
        flagged.add(rel)
        out.add(
            f"{rel}: symlink where evolve-action writes its output; nothing is written through it "
            "(replace it with a regular file or directory)",
            check="output.symlink",
            path=rel,
        )


def _linked_component(root: Path, path: Path) -> Path | None:
    """The first of `path`'s components below `root` that is a symlink, or None."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            return here
        if not here.exists():
            return None
    return None


def _outside_link_checks(out: _Collector, repo: Repository, directory: Path, *, check: str) -> bool:
    """A finding per symlink under `directory` that leaves the repository; True when SKILL.md is one."""
    skill_md_escapes = False
    for link in outside_links(directory, repo.root):
        rel = rel_path(repo.root, link)
        out.add(f"{rel}: symlink leaves the repository", check=check, path=rel)
        skill_md_escapes = skill_md_escapes or link.name == "SKILL.md"
    return skill_md_escapes


def _load_finding(repo: Repository, path: Path, exc: EvolveError, check: str) -> Finding:
    rel = rel_path(repo.root, path)
    where = f"{rel}:{exc.line}" if exc.line else rel
    return Finding(message=f"{where}: {exc.message}", path=rel, line=exc.line, check=check)
