"""The listing check (Tier 0, offline): does each skill's description reach the model?

Owns: `install_sets` (the sets of skills installed together: each plugin as the trigger tier
installs it, and the whole repository as a marketplace user installs it), `check_listing` (one real
CLI start per set × model through `harness.capture_listing`, cached), the per-skill verdict
(`SkillListing.status`: `whole`, `shortened`, `name-only`, `missing`), `listing_findings` (a warning
for a shortened description, an error for name-only or missing in a plugin's own set, one note per
model for the repository-wide set), `ListingCache` (`skill-listings.json` beside the token cache)
and `cached_status` (the status of one skill from the cache alone, for trigger results and reports).

Guarantees: the cache key is the set's content (every installed SKILL.md, and the plugin manifests
in plugin mode), the model asked for and the CLI binary's fingerprint, so a no-op run starts no
process; a set whose capture failed yields one warning finding, never an exception; findings come
in set order, then skill order. Never does: print, read `os.environ` (callers pass `environ`), call
a real model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evolve_action import encoding
from evolve_action.catalog import build_catalog, resolve_models
from evolve_action.config import Config
from evolve_action.encoding import trim_space
from evolve_action.errors import EvolveError
from evolve_action.harness import (
    CREDENTIAL_VARS,
    ListedEntry,
    ListingCapture,
    available_harnesses,
    capture_listing,
    cli_identity,
    cli_version,
    find_cli,
    plugin_skill_dirs,
)
from evolve_action.plan import staged_copy
from evolve_action.repo import (
    CLAUDE_MANIFEST,
    Repository,
    model_invocable,
    parse_frontmatter,
    read_text,
    rel_path,
)
from evolve_action.specs import Finding, Severity

__all__ = [
    "CACHE_NAME",
    "NOT_SHOWN",
    "Install",
    "InstallSet",
    "ListingCache",
    "ListingReport",
    "ListingStatus",
    "SetListing",
    "SkillListing",
    "check_listing",
    "install_sets",
    "listing_findings",
    "listing_models",
    "status_of",
]

ListingStatus = Literal["whole", "shortened", "name-only", "missing"]
"""How a skill's description reached the model: in full, cut (with `…`), by name only, not at all."""

NOT_SHOWN: frozenset[str] = frozenset({"name-only", "missing"})
"""Statuses under which the model never sees the description: trigger misses say so."""

CACHE_NAME = "skill-listings.json"
"""The listing cache's file name, beside `token-counts.json` in the cache directory."""

Install = Literal["skills", "plugin"]
DOCS = "docs/checks.md#the-listing-check"
ELLIPSIS = "…"
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True, kw_only=True)
class SetMember:
    """One skill of an install set."""

    plugin: str
    skill: str
    """The skill's name: its directory's, or (a skill at a plugin's or repository's root) its
    frontmatter's — it is then installed from a copy named so."""
    dir: Path


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallSet:
    """Skills that are installed together in one agent session."""

    kind: Literal["plugin", "repository"]
    label: str
    """`plugin <name>` or `repository (N plugins)`."""
    plugin: str = ""
    """The plugin of a `plugin` set."""
    install: Install = "skills"
    members: tuple[SetMember, ...] = ()
    plugin_dirs: tuple[Path, ...] = ()
    """Loaded with `--plugin-dir` (plugin mode, and the repository-wide set)."""
    plugin_names: Mapping[str, str] = field(default_factory=dict)
    """Plugin directory name → the namespace its skills are listed under (manifest `name`)."""

    def content_hash(self) -> str:
        """sha256 over what decides the listing: names, SKILL.md bytes, manifests."""
        h = hashlib.sha256(f"{self.kind}\0{self.install}\0".encode())
        for m in self.members:
            h.update(f"{m.plugin}\0{m.skill}\0".encode())
            h.update(_read_bytes(m.dir / "SKILL.md"))
        for d in self.plugin_dirs:
            h.update(f"{d.name}\0".encode())
            h.update(_read_bytes(d / CLAUDE_MANIFEST))
        return h.hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillListing:
    """One skill of one set, for one model."""

    plugin: str
    skill: str
    path: str
    """Its SKILL.md, root-relative."""
    status: ListingStatus
    description_chars: int
    """Characters of its description (trimmed, whitespace collapsed)."""
    shown_chars: int
    """Characters of it the model sees (0 for name-only or missing)."""
    command: str = ""
    """The root-relative command file listed under the skill's name (`commands/<name>.md` of its
    plugin): Claude Code lists the command there, not the skill, so the skill is `missing`."""

    @property
    def cut(self) -> int:
        """Characters the model does not see."""
        return max(self.description_chars - self.shown_chars, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetListing:
    """The listing of one install set for one model."""

    set: InstallSet
    model: str
    """The model asked for (`""`: the CLI's default)."""
    request_model: str = ""
    cli_version: str = ""
    listing_chars: int = 0
    """Characters of the whole listing (built-in skills included)."""
    skills: tuple[SkillListing, ...] = ()
    cached: bool = False
    error: str = ""

    @property
    def model_label(self) -> str:
        """The model for messages: the id asked for, else the CLI's default as it resolved it."""
        return self.model or (f"default: {self.request_model}" if self.request_model else "default")

    @property
    def over_budget(self) -> int:
        """Characters more the listing would need to show every description of the set."""
        return sum(len(": ") + s.description_chars for s in self.skills if s.status in NOT_SHOWN)


@dataclass(frozen=True, slots=True, kw_only=True)
class ListingReport:
    """Every set × model checked."""

    sets: tuple[SetListing, ...] = ()
    started: int = 0
    """CLI starts (cache misses)."""
    findings: tuple[Finding, ...] = ()


def install_sets(repo: Repository, *, install: Install = "skills") -> list[InstallSet]:
    """Each plugin's set (as the trigger tier installs it), then the repository-wide set when
    the repository has more than one plugin with skills (every plugin loaded with `--plugin-dir`)."""
    sets: list[InstallSet] = []
    names: dict[str, str] = {}
    with_skills: list[tuple[str, Path]] = []
    for plugin in repo.plugins:
        listed = _plugin_skill_list(repo, plugin.name)
        # a skill at the plugin's root (installed from a copy named after it) or reached
        # through a symlink is itself; the others bring every skill of their directory, as the
        # trigger tier installs them
        at_root = tuple(m for m in listed if m.dir == plugin.dir or m.dir.is_symlink())
        parents = dict.fromkeys(m.dir.parent for m in listed if m.dir != plugin.dir)
        members = at_root + tuple(
            SetMember(plugin=plugin.name, skill=d.name, dir=d)
            for parent in parents
            for d in plugin_skill_dirs(parent)
        )
        if not members:
            continue
        names[plugin.name] = _manifest_name(plugin.dir) or plugin.name
        with_skills.append((plugin.name, plugin.dir))
        sets.append(
            InstallSet(
                kind="plugin",
                label=f"plugin {plugin.name}",
                plugin=plugin.name,
                install=install,
                members=members,
                plugin_dirs=(plugin.dir,) if install == "plugin" else (),
                plugin_names={plugin.name: names[plugin.name]},
            )
        )
    if len(sets) > 1:
        sets.append(
            InstallSet(
                kind="repository",
                label=f"repository ({len(sets)} plugins installed together)",
                install="plugin",
                members=tuple(m for s in sets for m in s.members),
                plugin_dirs=tuple(d for _, d in with_skills),
                plugin_names=dict(names),
            )
        )
    return sets


def _plugin_skill_list(repo: Repository, plugin: str) -> list[SetMember]:
    return [
        SetMember(plugin=s.plugin, skill=s.name, dir=s.dir)
        for s in repo.skills()
        if s.plugin == plugin
    ]


def _manifest_name(plugin_dir: Path) -> str:
    try:
        value = json.loads((plugin_dir / CLAUDE_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) else ""


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _name_and_description(skill_md: Path, memo: dict[Path, tuple[str, str]]) -> tuple[str, str]:
    """The front matter `name` and description (trimmed, whitespace collapsed) of a SKILL.md,
    parsed once per check run (`memo`); empty strings when unreadable."""
    if skill_md in memo:
        return memo[skill_md]
    try:
        text = read_text(skill_md)
    except EvolveError:
        text = ""
    front = parse_frontmatter(text, skill_md) if text else None
    if front is None or front.error is not None:
        found = ("", "")
    else:
        description = _WS.sub(" ", trim_space(front.fields.get("description", "")))
        found = (front.fields.get("name", ""), description)
    memo[skill_md] = found
    return found


def listing_models(
    config: Config, environ: Mapping[str, str], model_flags: Sequence[str] = ()
) -> list[str]:
    """The distinct Claude Code model ids the trigger tier would run (`--model`, else the config's
    models, else the catalog default): the listing budget depends on the model."""
    selection = resolve_models(
        build_catalog(config.providers),
        model_flags=model_flags,
        config_models=config.models,
        config_harnesses=config.harnesses,
        available=available_harnesses(environ, dry_run=True),
        tier="triggers",
    )
    return list(dict.fromkeys(m.cli_model for m in selection.models if m.harness == "claude"))


# --- the cache --------------------------------------------------------------------------------


class ListingCache:
    """`skill-listings.json`: `{key: {cli_version, request_model, entries: [[name, desc|null]]}}`."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._data: dict[str, dict[str, object]] = _load(path) if path is not None else {}
        self._dirty = False

    @staticmethod
    def key(cli: str, model: str, content: str) -> str:
        """sha256 of the CLI fingerprint, the model asked for and the set's content hash."""
        return hashlib.sha256(f"{cli}\0{model}\0{content}".encode()).hexdigest()

    def get(self, key: str) -> tuple[ListingCapture, str] | None:
        """The cached capture and CLI version, if any."""
        raw = self._data.get(key)
        if not isinstance(raw, dict):
            return None
        entries = raw.get("entries")
        if not isinstance(entries, list):
            return None
        listed = tuple(
            ListedEntry(name=str(e[0]), description=None if e[1] is None else str(e[1]))
            for e in entries
            if isinstance(e, list) and len(e) == 2
        )
        capture = ListingCapture(
            model=str(raw.get("model", "")),
            request_model=str(raw.get("request_model", "")),
            entries=listed,
        )
        return capture, str(raw.get("cli_version", ""))

    def put(self, key: str, capture: ListingCapture, version: str) -> None:
        """Remember a successful capture."""
        self._data[key] = {
            "cli_version": version,
            "model": capture.model,
            "request_model": capture.request_model,
            "entries": [[e.name, e.description] for e in capture.entries],
        }
        self._dirty = True

    def save(self) -> str:
        """Write the cache atomically when it changed; a warning text when it could not be."""
        if not self._dirty or self.path is None:
            return ""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            encoding.atomic_write_text(
                self.path, json.dumps(dict(sorted(self._data.items())), indent=1) + "\n"
            )
        except encoding.UnsafeWriteError as exc:  # a link where the cache goes: lose the cache only
            return f"listing cache not saved: {exc.message}"
        except OSError as exc:
            return f"listing cache {self.path} not saved: {exc.strerror or exc}"
        self._dirty = False
        return ""


def _load(path: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


# --- the check --------------------------------------------------------------------------------


async def check_listing(
    repo: Repository,
    *,
    models: Sequence[str],
    environ: Mapping[str, str],
    cache_path: Path | None,
    install: Install = "skills",
    sets: Sequence[InstallSet] | None = None,
    tmp_root: Path | None = None,
) -> ListingReport:
    """Capture (or read from the cache) the listing of every set × model and judge each skill.

    `models` are CLI model ids (`""`: the CLI's default); duplicates are checked once.
    """
    chosen = list(sets) if sets is not None else install_sets(repo, install=install)
    cache = ListingCache(cache_path)
    cli = find_cli(environ)
    fingerprint = cli_identity(cli)
    version = ""
    started = 0
    out: list[SetListing] = []
    memo: dict[Path, tuple[str, str]] = {}
    for model in dict.fromkeys(models):
        for s in chosen:
            key = ListingCache.key(fingerprint, model, s.content_hash())
            hit = cache.get(key)
            if hit is not None:
                capture, ver = hit
                out.append(_judge(repo, s, capture, ver, memo, cached=True))
                continue
            if not version:
                version = cli_version(cli, _no_credentials(environ))
            started += 1
            with contextlib.ExitStack() as stack:
                skills = [
                    m.dir
                    if m.dir.name == m.skill
                    else stack.enter_context(staged_copy(m.dir, m.skill, (), tmp_root))
                    for m in (s.members if not s.plugin_dirs else ())
                ]
                capture = await capture_listing(
                    model=model,
                    environ=environ,
                    skills=skills,
                    plugin_dirs=s.plugin_dirs,
                    tmp_root=tmp_root,
                    cli_path=cli,
                )
            if capture.error:
                out.append(SetListing(set=s, model=model, cli_version=version, error=capture.error))
                continue
            cache.put(key, capture, version)
            out.append(_judge(repo, s, capture, version, memo, cached=False))
    problem = cache.save()
    findings = listing_findings(repo, out)
    if problem:
        findings.append(Finding(message=problem, check="listing.cache", severity=Severity.WARNING))
    return ListingReport(sets=tuple(out), started=started, findings=tuple(findings))


def _no_credentials(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k not in CREDENTIAL_VARS}


def status_of(description: str, entry: ListedEntry | None) -> tuple[ListingStatus, int]:
    """The status of a skill with `description` given its listing entry, and the characters shown."""
    if entry is None:
        return "missing", 0
    if entry.description is None:
        return "name-only", 0
    shown = _WS.sub(" ", entry.description.strip())
    if shown.endswith(ELLIPSIS) and len(shown) <= len(description) and shown != description:
        return "shortened", len(shown) - len(ELLIPSIS)
    return "whole", len(description)


def _find_entry(
    s: InstallSet, member: SetMember, name: str, by_name: Mapping[str, ListedEntry]
) -> ListedEntry | None:
    wanted = [member.skill, name] if s.install == "skills" and not s.plugin_dirs else []
    namespace = s.plugin_names.get(member.plugin, member.plugin)
    wanted += [f"{namespace}:{member.skill}", f"{namespace}:{name}"]
    return next((by_name[w] for w in wanted if w and w in by_name), None)


def _commands(repo: Repository, s: InstallSet) -> dict[str, str]:
    """The set's plugin commands by listing name (`plugin:name`, a subdirectory adding a segment:
    `plugin:ops:deploy`) → their root-relative file. Commands are listed beside skills in the
    same form (measured, CLI 2.1.332): they are told apart by source, never by shape."""
    if not s.plugin_dirs:
        return {}
    found: dict[str, str] = {}
    for plugin in repo.plugins:
        commands = plugin.dir / "commands"
        if plugin.dir not in s.plugin_dirs or not commands.is_dir():
            continue
        namespace = s.plugin_names.get(plugin.name, plugin.name)
        for md in sorted(commands.rglob("*.md")):
            parts = md.relative_to(commands).with_suffix("").parts
            found.setdefault(":".join((namespace, *parts)), rel_path(repo.root, md))
    return found


def _judge(
    repo: Repository,
    s: InstallSet,
    capture: ListingCapture,
    version: str,
    memo: dict[Path, tuple[str, str]],
    *,
    cached: bool,
) -> SetListing:
    by_name = {e.name: e for e in capture.entries}
    commands = _commands(repo, s)
    skills: list[SkillListing] = []
    for m in s.members:
        md = m.dir / "SKILL.md"
        if not model_invocable(md):
            continue  # never listed by design (`disable-model-invocation`): planning says so
        name, description = _name_and_description(md, memo)
        namespace = s.plugin_names.get(m.plugin, m.plugin)
        command = commands.get(f"{namespace}:{m.skill}", "")
        entry = None if command else _find_entry(s, m, name, by_name)
        status, shown = status_of(description, entry)
        skills.append(
            SkillListing(
                plugin=m.plugin,
                skill=m.skill,
                path=rel_path(repo.root, md),
                status=status,
                description_chars=len(description),
                shown_chars=shown,
                command=command,
            )
        )
    return SetListing(
        set=s,
        model=capture.model,
        request_model=capture.request_model,
        cli_version=version,
        listing_chars=capture.chars,
        skills=tuple(skills),
        cached=cached,
    )


# --- findings ---------------------------------------------------------------------------------


def listing_findings(repo: Repository, sets: Iterable[SetListing]) -> list[Finding]:
    """Warnings (shortened) and errors (name-only, missing) per plugin set, grouped over models;
    one note per model for the repository-wide set; a warning per set that could not be captured."""
    found: list[Finding] = []
    per_skill: dict[tuple[str, str, ListingStatus], list[SetListing]] = {}
    detail: dict[tuple[str, str, ListingStatus], SkillListing] = {}
    for sl in sets:
        if sl.error:
            found.append(
                Finding(
                    message=f"listing check: {sl.set.label} ({sl.model_label}): {sl.error}",
                    check="listing.capture",
                    severity=Severity.WARNING,
                )
            )
            continue
        if sl.set.kind == "repository":
            if note := _repository_note(sl):
                found.append(note)
            continue
        for sk in sl.skills:
            if sk.status == "whole":
                continue
            key: tuple[str, str, ListingStatus] = (sk.path, sk.skill, sk.status)
            per_skill.setdefault(key, []).append(sl)
            detail.setdefault(key, sk)
    for group, where in per_skill.items():
        sk = detail[group]
        models = ", ".join(dict.fromkeys(w.model_label for w in where))
        version = where[0].cli_version or "Claude Code"
        if sk.status == "shortened":
            message = (
                f"{sk.path}: description shortened in the skill listing ({models}): the model "
                f"sees {sk.shown_chars} of {sk.description_chars} characters ({version})"
            )
            severity = Severity.WARNING
        elif sk.status == "name-only":
            message = (
                f"{sk.path}: description not shown to the model: listing budget ({models}); "
                f"{version} lists this skill by name only when plugin {sk.plugin} is installed, "
                "so its trigger results cannot be trusted: shorten the descriptions or put fewer "
                f"skills in the plugin ({DOCS})"
            )
            severity = Severity.ERROR
        elif sk.command:
            message = (
                f"{sk.path}: skill missing from the skill listing ({models}): {version} lists "
                f"the command {sk.command} under its name instead, so the model never sees this "
                "skill — rename the skill or the command"
            )
            severity = Severity.ERROR
        else:
            message = (
                f"{sk.path}: skill missing from the skill listing ({models}); {version} did not "
                f"list it when plugin {sk.plugin} is installed: check its directory name and "
                "front matter"
            )
            severity = Severity.ERROR
        found.append(
            Finding(message=message, path=sk.path, check="listing.description", severity=severity)
        )
    return found


def _repository_note(sl: SetListing) -> Finding | None:
    lost = [s for s in sl.skills if s.status in NOT_SHOWN]
    if not lost:
        return None
    names = [f"{s.plugin}:{s.skill}" for s in reversed(lost)]
    shown = ", ".join(names[:5]) + (f" (+{len(names) - 5} more)" if len(names) > 5 else "")
    return Finding(
        message=(
            f"listing budget: with all {len(sl.set.plugin_dirs)} plugins installed together "
            f"({sl.model_label}), {len(lost)} of {len(sl.skills)} skills are listed by name only "
            f"(~{encoding_group(sl.over_budget)} characters over the budget); descriptions are "
            f"dropped from the end of the name-sorted listing, first: {shown}"
        ),
        check="listing.marketplace",
        severity=Severity.SIGNAL,
    )


def encoding_group(n: int) -> str:
    """`12,345`."""
    return f"{n:,}"
