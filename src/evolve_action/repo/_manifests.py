"""Plugin manifests and marketplace entries, and what the bundled Claude Code refuses to install.

Owns: plugin.json's `skills` key (`manifest_skills`: it adds to the default `skills/`), the two
readings of a marketplace: an evolve marketplace (a Codex marketplace
`.agents/plugins/marketplace.json` beside it, or every entry a local `./plugins/<dir>` source) keeps
evolve's rule (the plugins are the directories under `plugins/` it lists: `listed_plugin_dirs`);
any other is read as Claude Code reads it (`claude_marketplace`: one plugin per local entry, any
`./` path, the root itself for `./`; an entry's `skills` list names its skills; `strict: false`
makes the entry the manifest; a remote entry naming the root's own plugin.json is the root plugin),
remote sources listed in a note as not evaluated here (`remote_entries`, `remote_note`), what the
CLI refuses (`manifest_refusals`: plugin.json's `name` and component paths; a `source` string without `./` or
leaving the marketplace directory; conflicting manifests) as `RepoProblem`s, directories resolving
outside the repository (`plugin_escapes`, `escaping_entries`), and whether the repository opts in
to evolve's conventions (`evolve_marker`: an `.evolve.*` config at the root).
Guarantees: the rules and messages are the CLI's as measured (CLI 2.1.332;
tests/integration/test_discovery_cli.py is the oracle), each with the fix; an unreadable manifest
is never an error here (the checks report it).
Never does: classify a layout or build the `Repository` (`_discovery` does), print.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evolve_action.encoding import (
    trim_space,
)
from evolve_action.repo._model import (
    CLAUDE_MANIFEST,
    CLAUDE_MARKETPLACE,
    CODEX_MARKETPLACE,
    CONFIG_NAMES,
    Plugin,
    RepoProblem,
)
from evolve_action.repo._paths import absolute, escapes, rel_path
from evolve_action.repo._reading import go_str, read_manifest
from evolve_action.repo._skills import plugin_skills

__all__ = [
    "COMPONENT_SUFFIXES",
    "EVOLVE_DIRS",
    "claude_marketplace",
    "entry_source",
    "escaping_entries",
    "evolve_marker",
    "listed_plugin_dirs",
    "manifest_refusals",
    "manifest_skills",
    "plugin_escapes",
    "remote_entries",
    "remote_entry",
    "remote_note",
    "single_name",
]


def _path_list(value: Any) -> list[str] | None:
    """A manifest's `skills` value as Claude Code accepts it (a path or a list of paths)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _kind_of(value: Any) -> str:
    if isinstance(value, list):
        bad = next((v for v in value if not isinstance(v, str)), None)
        return f"a list holding {_kind_of(bad)}"
    if isinstance(value, dict):
        return "an object"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string"


def manifest_skills(
    root: Path, directory: Path
) -> tuple[tuple[Path, ...] | None, list[RepoProblem]]:
    """plugin.json's `skills` (a path or list of paths relative to the plugin root) after the
    default `skills/`, if the key is there."""
    manifest = read_manifest(directory / CLAUDE_MANIFEST)
    if not manifest.ok or not isinstance(manifest.value, dict) or "skills" not in manifest.value:
        return None, []
    value = manifest.value["skills"]
    paths = _path_list(value)
    if paths is None:
        rel = rel_path(root, manifest.path)
        return (), [
            RepoProblem(
                message=f"{rel}: field `skills` holds {_kind_of(value)}, not paths; Claude Code "
                "refuses this manifest — write `skills` as a path or a list of paths relative "
                'to the plugin root, such as "./skills/<name>"',
                path=rel,
                pointer="/skills",
                check="plugin.skills_field",
            )
        ]
    # Measured with the bundled CLI (2.1.332, tests/integration/test_discovery_cli.py): the key
    # adds to the default `skills/` rather than replacing it (a marketplace entry's list replaces).
    return (directory / "skills", *(absolute(directory / p) for p in paths)), []


def _outside(root: Path, path: Path, what: str) -> RepoProblem:
    rel = rel_path(root, path)
    return RepoProblem(
        message=f"{rel}: {what} resolves outside the repository (to {os.path.realpath(path)}); "
        "it is not evaluated and nothing is written there — replace the symlink with the files",
        path=rel,
        check="repo.outside",
    )


def escaping_entries(root: Path, directory: Path, what: str) -> list[RepoProblem]:
    """Symlinked entries of `directory` that resolve outside `root`."""
    try:
        with os.scandir(directory) as entries:
            links = sorted(e.name for e in entries if e.is_symlink())
    except OSError:
        return []
    return [
        _outside(root, directory / name, what) for name in links if escapes(root, directory / name)
    ]


def plugin_escapes(root: Path, plugin: Plugin) -> list[RepoProblem]:
    """Every directory of `plugin` that resolves outside the repository (issue 20)."""
    if escapes(root, plugin.dir):
        return [_outside(root, plugin.dir, "plugin directory")]
    found: list[RepoProblem] = []
    containers = [plugin.skills_dir] if plugin.skill_dirs is None else list(plugin.skill_dirs)
    for directory in containers:
        if os.path.lexists(directory) and escapes(root, directory):
            found.append(_outside(root, directory, "skill directory"))
        elif plugin.skill_dirs is None or not os.path.lexists(directory / "SKILL.md"):
            found.extend(escaping_entries(root, directory, "skill directory"))
    if os.path.lexists(plugin.evals_dir) and escapes(root, plugin.evals_dir):
        found.append(_outside(root, plugin.evals_dir, "eval directory"))
    else:
        found.extend(escaping_entries(root, plugin.evals_dir, "eval directory"))
    return found


def listed_plugin_dirs(root: Path) -> set[str] | None:
    """The `plugins/<dir>` names an evolve marketplace lists (None: unreadable or an empty list,
    which the checks report: every folder stays a plugin, as evolve reads it)."""
    manifest = read_manifest(root / CLAUDE_MARKETPLACE)
    if not manifest.ok or not isinstance(manifest.value, dict):
        return None
    entries = manifest.value.get("plugins")
    if not isinstance(entries, list) or not entries:
        return None
    names: set[str] = set()
    codex = read_manifest(root / CODEX_MARKETPLACE)
    if codex.ok and isinstance(codex.value, dict) and isinstance(codex.value.get("plugins"), list):
        entries = [*entries, *codex.value["plugins"]]
    for entry in entries:
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, dict):
            source = source.get("path")
        if not isinstance(source, str):
            continue
        parts = [p for p in source.split("/") if p not in ("", ".")]
        if len(parts) == 2 and parts[0] == "plugins":
            names.add(parts[1])
    return names


EVOLVE_DIRS = (".agents/plugins", ".codex-plugin")
"""Codex's marketplace directory and plugin manifest directory (no longer evolve opt-ins)."""


def evolve_marker(root: Path, plugins: Iterable[Plugin] = ()) -> str | None:
    """What opts `root` in to evolve's stricter conventions: an `.evolve.<ext>` config file at the
    root (its name), else None. A Codex manifest or marketplace is not an opt-in: a repository
    published for Claude Code and Codex alike gets Claude Code's rules (issue 21)."""
    del plugins  # kept for callers; the Codex directories no longer opt in
    for name in CONFIG_NAMES:
        if os.path.lexists(root / name) and not (root / name).is_dir():
            return name
    return None


def entry_source(entry: Any) -> tuple[str | None, str]:
    """`(local ./ path or None, how a remote source is described)` of a marketplace entry.

    Local: a `./`-relative string, or a `{source: local, path: ./…}` object (evolve's form).
    """
    source = entry.get("source") if isinstance(entry, dict) else None
    if isinstance(source, str):
        return (source, "") if source.startswith("./") or source == "." else (None, source)
    if isinstance(source, dict):
        path = source.get("path")
        kind = source.get("source")
        if isinstance(path, str) and kind in (None, "local") and path.startswith("./"):
            return path, ""
        where = source.get("repo") or source.get("url") or source.get("package") or ""
        return None, f"{go_str(kind)} {go_str(where)}".strip()
    return None, go_str(source)


def _is_evolve_marketplace(root: Path, entries: list[Any]) -> bool:
    """evolve's layout: every local entry is `./plugins/<name>`, listed whole.

    With evolve's Codex marketplace beside it, an entry that is not local (a typo such as
    `plugins/a`) stays evolve's to report; without it, such an entry is a remote source.
    """
    codex_twin = (root / CODEX_MARKETPLACE).exists()
    for entry in entries:
        local, _ = entry_source(entry)
        if local is None or not isinstance(entry, dict):
            if codex_twin:
                continue
            return False
        if "skills" in entry or entry.get("strict") is False:
            return False
        parts = [p for p in local.split("/") if p not in ("", ".")]
        if len(parts) != 2 or parts[0] != "plugins":
            return False
    return True


def _entry_problem(index: int, name: str, field: str, detail: str) -> RepoProblem:
    who = f"plugin '{name}' (plugins[{index}])" if name else f"plugins[{index}]"
    return RepoProblem(
        message=f"{CLAUDE_MARKETPLACE}: {who}: {detail}",
        path=CLAUDE_MARKETPLACE,
        pointer=f"/plugins/{index}" + (f"/{field}" if field else ""),
        check="marketplace.entry",
    )


def _entry_problems(index: int, entry: Any) -> list[RepoProblem]:
    """What makes Claude Code reject a marketplace entry (`marketplace entry is invalid: …`)."""
    if not isinstance(entry, dict):
        return [
            _entry_problem(
                index,
                "",
                "",
                f"is {_kind_of(entry)}, not a plugin entry object; Claude Code "
                'rejects it — write {"name": …, "source": …}',
            )
        ]
    name = entry.get("name")
    shown = name if isinstance(name, str) else ""
    found: list[RepoProblem] = []
    if not isinstance(name, str) or trim_space(name) == "":
        found.append(
            _entry_problem(
                index,
                "",
                "name",
                "field `name` is missing or not a string; Claude Code "
                "rejects the entry (marketplace entry is invalid: name) — give it the plugin's name",
            )
        )
    source = entry.get("source")
    if not isinstance(source, str | dict):
        found.append(
            _entry_problem(
                index,
                shown,
                "source",
                f"field `source` is {_kind_of(source)}; Claude Code "
                'rejects the entry (marketplace entry is invalid: source) — write a "./path" '
                'or a {"source": "github", …} object',
            )
        )
    if "skills" in entry and _path_list(entry["skills"]) is None:
        found.append(
            _entry_problem(
                index,
                shown,
                "skills",
                f"field `skills` holds {_kind_of(entry['skills'])}, not "
                "paths; Claude Code rejects the entry (marketplace entry is invalid: skills: "
                'Invalid input) — list each skill as a path such as "./skills/<name>"',
            )
        )
    if "strict" in entry and not isinstance(entry["strict"], bool):
        found.append(
            _entry_problem(
                index,
                shown,
                "strict",
                f"field `strict` is {_kind_of(entry['strict'])}, not true "
                "or false; Claude Code rejects the entry (marketplace entry is invalid: strict)",
            )
        )
    return found


def claude_marketplace(
    root: Path,
) -> tuple[tuple[Plugin, ...], tuple[str, ...], tuple[RepoProblem, ...], tuple[Plugin, ...]] | None:
    """The plugins, notices, problems and refused plugins of a marketplace read as Claude Code
    reads it; None for evolve's."""
    manifest = read_manifest(root / CLAUDE_MARKETPLACE)
    if not manifest.ok or not isinstance(manifest.value, dict):
        return None
    entries = manifest.value.get("plugins")
    if not isinstance(entries, list) or _is_evolve_marketplace(root, entries):
        return None
    root_manifest = read_manifest(root / CLAUDE_MANIFEST)
    root_name = (
        root_manifest.value.get("name")
        if root_manifest.ok and isinstance(root_manifest.value, dict)
        else None
    )
    plugins: dict[str, Plugin] = {}
    remote: list[str] = []
    problems: list[RepoProblem] = []
    refused: list[Plugin] = []
    for index, entry in enumerate(entries):
        rejected = _entry_problems(index, entry)
        if rejected:
            problems.extend(rejected)
            continue  # Claude Code refuses the entry: never a plugin here either
        name = go_str(entry.get("name"))
        local, described = entry_source(entry)
        if local is None and name and name == root_name:
            local = "./"  # a marketplace listing the repository itself
        if local is None and isinstance(entry.get("source"), str):
            problems.append(_source_refusal(index, name, entry["source"]))
            meant = absolute(root / entry["source"])  # the directory the author meant, if any
            if meant.is_dir() and not escapes(root, meant) and meant != absolute(root):
                refused.append(_entry_plugin(root, name, meant, None, True))
            continue  # a string is a path to Claude Code: it refuses one without `./`
        if local is None:
            remote.append(f"{name} ({described})" if described else name)
            continue
        directory = absolute(root / local)
        if rel_path(root, directory).startswith("/"):
            remote.append(f"{name} ({local})")
            continue
        if name in plugins or not directory.is_dir():
            continue  # the checks report an unresolved source
        if escapes(root, directory):
            problems.append(_outside(root, directory, f"plugin '{name}' (source {local})"))
            continue
        listed = _path_list(entry.get("skills")) if "skills" in entry else None
        strict = entry.get("strict") is not False
        if not _source_stays_inside(local):
            problems.append(_source_refusal(index, name, local))
            refused.append(_entry_plugin(root, name, directory, listed, strict))
            continue
        if not strict and listed is not None and (directory / CLAUDE_MANIFEST).is_file():
            problems.append(_conflict(index, name, directory, root))
            refused.append(_entry_plugin(root, name, directory, listed, strict))
            continue  # Claude Code loads nothing of it (measured, CLI 2.1.332)
        if strict and (refusals := manifest_refusals(root, directory)):
            problems.extend(refusals)
            refused.append(_entry_plugin(root, name, directory, listed, strict))
            continue
        problems.extend(manifest_skills(root, directory)[1] if strict else [])
        plugins[name] = _entry_plugin(root, name, directory, listed, strict)
    notices: list[str] = []
    if remote:
        notices.append(remote_note(remote))
    ordered = tuple(plugins[n] for n in sorted(plugins, key=lambda n: n.encode()))
    empty = [p.name for p in ordered if not plugin_skills(p)]
    if empty:
        notices.append(f"note: plugins with no skills (shown, skipped): {', '.join(empty)}")
    return ordered, tuple(notices), tuple(problems), tuple(refused)


def remote_note(remote: list[str]) -> str:
    """The one note naming a marketplace's remote plugins (fetched by Claude Code elsewhere)."""
    return (
        f"note: {len(remote)} marketplace plugin{'' if len(remote) == 1 else 's'} "
        f"not evaluated here (remote): {', '.join(remote)}"
    )


def _entry_plugin(
    root: Path, name: str, directory: Path, listed: list[str] | None, strict: bool
) -> Plugin:
    """A marketplace entry's plugin as Claude Code would have loaded it (for a refused one: the
    skills the note names as not loadable)."""
    skill_dirs, _ = manifest_skills(root, directory) if strict else (None, [])
    if listed is not None:
        # Measured with CLI 2.1.332: an entry's `skills` add to the plugin's own (its `skills/`
        # and plugin.json's), except for a plugin at the marketplace's root (`./`), whose listed
        # skills replace `skills/`.
        own = skill_dirs or ((directory / "skills",) if directory != root else ())
        skill_dirs = (*own, *(absolute(directory / item) for item in listed))
    return Plugin(
        name=name,
        dir=directory,
        rel=rel_path(root, directory),
        skills_dir=directory / "skills",
        evals_dir=directory / "evals",
        skill_dirs=skill_dirs,
        manifest=strict,
        root=root,
    )


def _conflict(index: int, name: str, directory: Path, root: Path) -> RepoProblem:
    """`strict: false` with skills in the entry while the plugin has its own plugin.json."""
    return _entry_problem(
        index,
        name,
        "strict",
        f"`strict: false` with `skills` in the entry, and {rel_path(root, directory)}/"
        f"{CLAUDE_MANIFEST} exists; Claude Code loads none of this plugin's skills (conflicting "
        "manifests) — drop `strict: false` (the entry's skills then add to the plugin's), or "
        "remove the plugin.json",
    )


# --- What the bundled Claude Code refuses (measured, CLI 2.1.332; docs/checks.md) ------------
#
# `claude plugin install` validates the plugin.json and the marketplace entry before it loads
# anything, and refuses the whole plugin on any violation: none of its skills load. These are the
# rules as the CLI applied them (tests/integration/test_discovery_cli.py checks them against it),
# each worded with the CLI's own message and the fix.

COMPONENT_SUFFIXES: dict[str, str] = {
    "commands": "",
    "agents": ".md",
    "skills": "",
    "hooks": ".json",
    "mcpServers": ".json",
    "lspServers": ".json",
}
"""plugin.json component path fields → the suffix the CLI requires of each path given there
(`""`: any). Every path must also start with `./`. Inline objects (`mcpServers: {…}`) are not
paths and are not checked; `outputStyles` paths are not refused (measured)."""

_COMPONENT_FIXES: dict[str, str] = {
    ".md": 'list each agent file, such as "./agents/<name>.md", or drop the field (the '
    "default agents/ directory is loaded without it)",
    ".json": "point it at a JSON file such as {example}, or drop the field (the default file is "
    "loaded without it)",
}
_JSON_EXAMPLES = {
    "hooks": '"./hooks/hooks.json"',
    "mcpServers": '"./.mcp.json"',
    "lspServers": '"./.lsp.json"',
}


def manifest_refusals(root: Path, directory: Path) -> list[RepoProblem]:
    """Why the CLI refuses the plugin in `directory` (its plugin.json's component paths), one
    problem per refused path; empty when it installs (or there is no usable plugin.json)."""
    manifest = read_manifest(directory / CLAUDE_MANIFEST)
    if not manifest.ok or not isinstance(manifest.value, dict):
        return []
    rel = rel_path(root, manifest.path)
    found: list[RepoProblem] = []
    if refusal := _name_refusal(manifest.value.get("name", _MISSING), directory.name):
        rule, fix = refusal
        found.append(
            RepoProblem(
                message=f"{rel}: plugin `name`: Claude Code refuses to load this plugin "
                f"(Validation errors: name: {rule}), so none of its skills load — {fix}",
                path=rel,
                pointer="/name",
                check="plugin.refused",
            )
        )
    for key, suffix in COMPONENT_SUFFIXES.items():
        value = manifest.value.get(key)
        if isinstance(value, str):
            items: list[tuple[str, str, str]] = [(key, f"/{key}", value)]
        elif isinstance(value, list):
            items = [
                (f"{key}.{i}", f"/{key}/{i}", v) for i, v in enumerate(value) if isinstance(v, str)
            ]
        else:
            continue
        for label, pointer, path in items:
            if not path.startswith("./"):
                rule = (
                    "Invalid input" if key == "commands" else 'Invalid string: must start with "./"'
                )
                fix = _prefix_fix(path)
            elif suffix and not path.endswith(suffix):
                rule = f'Invalid string: must end with "{suffix}"'
                fix = _COMPONENT_FIXES[suffix].format(example=_JSON_EXAMPLES.get(key, ""))
            else:
                continue
            found.append(
                RepoProblem(
                    message=f"{rel}: `{key}` path {json.dumps(path)}: Claude Code refuses to "
                    f"install this plugin (Validation errors: {label}: {rule}), so none of its "
                    f"skills load — {fix}",
                    path=rel,
                    pointer=pointer,
                    check="plugin.refused",
                )
            )
    return found


_MISSING = object()
_JSON_TYPES = {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}
_NAME_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Control and bidirectional-formatting characters, which the CLI refuses in a plugin name."""


def _name_refusal(value: object, directory: str) -> tuple[str, str] | None:
    """The CLI's rule a plugin.json `name` breaks (its wording, measured on 2.1.332 for
    `claude plugin install` and `--plugin-dir` alike) and the fix, or None when it loads. Upper
    case, `_`, `.`, `/` and `:` load; only the rules below refuse."""
    kebab = re.sub(r"[^a-z0-9]+", "-", directory.lower()).strip("-") or "my-plugin"
    fix = f'set it to a kebab-case name, such as "{kebab}"'
    if value is _MISSING or value is None or not isinstance(value, str):
        received = (
            "undefined"
            if value is _MISSING
            else "null"
            if value is None
            else _JSON_TYPES.get(type(value), "object")
        )
        return f"Invalid input: expected string, received {received}", fix
    if value == "":
        return "Plugin name cannot be empty", fix
    if _NAME_CONTROL.search(value):
        return "Plugin name cannot contain control or bidirectional-formatting characters", fix
    if " " in value:
        return 'Plugin name cannot contain spaces. Use kebab-case (e.g., "my-plugin")', fix
    return None


def _prefix_fix(path: str) -> str:
    """How to write a component path the CLI refused for lacking its leading `./`."""
    if path.startswith(("/", "..")) or "\\" in path:
        return (
            "keep the files inside the plugin and point at them with a path relative to the "
            'plugin root that starts with "./"'
        )
    return (
        f'write it {json.dumps("./" + path)} (relative to the plugin root, with its leading "./")'
    )


def _source_stays_inside(local: str) -> bool:
    """The CLI's rule for a local source path: `./` then no `.` or `..` segment and no backslash
    (`./` and `./plugins/p/` install; `./.`, `./plugins/p/.` and `./a/../b` are refused; a bare
    `.` installs the root)."""
    if local == ".":
        return True
    parts = local.removeprefix("./").split("/")
    return "\\" not in local and not any(part in (".", "..") for part in parts)


def _source_refusal(index: int, name: str, source: str) -> RepoProblem:
    """A marketplace entry whose `source` string the CLI refuses to install."""
    if not source.startswith("./") and source != ".":
        detail = (
            f'source {json.dumps(source)} is a path without a leading "./"; Claude Code refuses '
            "to install it (marketplace entry is invalid: source: Invalid string: must start "
            'with "./") — write "./<dir>" for a plugin in this repository, or a '
            '{"source": "github", "repo": "owner/name"} object for another repository'
        )
    else:
        detail = (
            f"source {json.dumps(source)} does not stay inside the marketplace directory; "
            "Claude Code refuses to install it (its marketplace entry path does not stay inside "
            'the marketplace directory) — write "./" for the repository root, or a "./<dir>" '
            'path with no "." or ".." segments'
        )
    return _entry_problem(index, name, "source", detail)


def remote_entry(entry: Any) -> bool:
    """Whether a marketplace entry's source is fetched from elsewhere (`url`, `github`,
    `git-subdir`, `npm`, … with or without a `path`, which is inside that remote)."""
    source = entry.get("source") if isinstance(entry, dict) else None
    return isinstance(source, dict) and source.get("source") not in (None, "local")


def remote_entries(root: Path) -> list[str]:
    """`name (kind where)` of each remote entry of the root marketplace (evolve's reading)."""
    manifest = read_manifest(root / CLAUDE_MARKETPLACE)
    value = manifest.value if manifest.ok and isinstance(manifest.value, dict) else {}
    entries = value.get("plugins")
    found: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        if remote_entry(entry):
            name, described = go_str(entry.get("name")), entry_source(entry)[1]
            found.append(f"{name} ({described})" if described else name)
    return found


def single_name(root: Path) -> str:
    manifest = read_manifest(root / CLAUDE_MANIFEST)
    if manifest.ok and isinstance(manifest.value, dict):
        name = manifest.value.get("name")
        if isinstance(name, str):
            return name
    return root.name
