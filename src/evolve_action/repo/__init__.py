"""The repository model: layout detection, root resolution, plugins, skills, eval sets, manifests.

Owns: `discover` (engine spec §1: marketplace → multi → single, `--layout`, `--root`, the walk up
from the working directory and its exact error messages), the frozen `Repository`/`Plugin`/`Skill`/
`EvalSet` values, whether a repository opts in to evolve's conventions (`evolve_marker`: an
`.evolve.*` config, `.agents/plugins/`, a `.codex-plugin/`), SKILL.md frontmatter parsing (§5.3:
evolve's `---` fences, the block decoded as YAML by `encoding.decode_yaml` with Claude Code's
leniency, key line numbers) and strict JSON manifest reading (`plugin.json`,
`marketplace.json`) with the Go-`encoding/json` error wording the checks print (§5.2; deliberately
not `encoding.decode_path`, whose messages and empty-file rule are for authored spec files).

Marketplaces are read two ways. An evolve marketplace (a Codex marketplace
`.agents/plugins/marketplace.json` beside it, or every entry a local `./plugins/<dir>` source) keeps
evolve's rule: the plugins are the directories under `plugins/`. Any other marketplace is read the
way Claude Code reads it: one plugin per local entry (any `./` path, the root itself for `./`),
an entry's `skills` list names its skills, `strict: false` makes the entry the manifest, remote
sources (`github`, `url`, `git-subdir`, … objects, a `path` in them being inside the remote) are
listed in `Repository.notices` as not evaluated here — in an evolve marketplace too — and a remote
entry naming the root's own plugin.json is the root plugin (a self-listing marketplace). What the
bundled CLI refuses to install (`manifest_refusals`: plugin.json component paths; a `source`
string without `./` or leaving the marketplace directory; conflicting manifests) is a
`RepoProblem`, and the plugin goes to `Repository.refused`: never evaluated, never touched, its
skills named in a note as not loadable. With no marker at all, `skills/*/SKILL.md` (or
`.claude/skills/*/SKILL.md`) form one implicit plugin named after the directory (a bare skill
repository, layout `single`), found only when no ancestor has a marker; failing that, a
`SKILL.md` at the top makes a standalone skill repository (one skill, named by its frontmatter).
A plugin with a root `SKILL.md` and no `skills/` or `skills` key is a single-skill plugin, and a
plugin.json `skills` key adds to `skills/` — both as the bundled Claude Code lists them
(tests/integration/test_discovery_cli.py is the oracle). Files named like skill-creator's but in
another shape are a note (`READ_FORMATS`), never read; several trigger files in one skill-creator
`evals/` → `chosen_trigger_file` is read and a note names the others. `SkillPlaces` knows each
skill directory by its path and, when a symlink inside the repository leads there, by its target
too (and every discovered skill's directory, even when its eval definitions cannot be read).

Guarantees: enumeration order is deterministic (byte order of names, like Go's `os.ReadDir`);
symlinked plugin and eval directories are skipped like evolve does; every unusable input is an
`EvolveError` subclass naming the path. A `Repository` is a snapshot of the tree at discovery: its
eval sets and suite bindings are read once per model (writing results files never changes them;
after adding or removing definitions, discover again). Never does: printing, reading `os.environ`, writing files.

Files (private; import from this package):
- `_model`: the names and plain values: layouts, manifest paths, `Plugin`, `Skill`, `EvalSet`, `RepoProblem`.
- `_paths`: absolute paths without resolving symlinks, root-relative rendering, escaping the repository.
- `_reading`: strict readers: capped UTF-8 text, JSON manifests with Go's wording, `go_str`.
- `_frontmatter`: SKILL.md frontmatter, decoded as YAML with Claude Code's leniency.
- `_skills`: a plugin's skills (`plugin_skills`), a root skill's name.
- `_touched`: the touched-path rules (`SkillPlaces`).
- `_suites`: AgentEvals / AgentV suite files, globs and `.agentv/config.yaml`.
- `_manifests`: plugin manifests, marketplace entries, what the bundled CLI refuses, the evolve marker.
- `_evalfiles`: one skill's eval-definition files (evolve's, skill-creator's) and how an `EvalSet` is made.
- `_repository`: the `Repository` model: its eval sets, plugin/root-level and suite bindings, `SkillPlaces`.
- `_discovery`: `discover`: layouts, `--root`/`--layout`, the walk up, bare and standalone skill repositories;
  `locate`: where `discover` would look, by markers alone (nothing read).
"""

from evolve_action.repo._discovery import (
    ACCEPTED_LAYOUTS,
    BARE_SKILL_DIRS,
    LAYOUT_MARKERS,
    NOT_FOUND,
    NOT_RECOGNIZED,
    classify,
    discover,
    locate,
    parse_layout,
)
from evolve_action.repo._evalfiles import (
    IN_SKILL_EVALS,
    IN_SKILL_TRIGGER_NAMES,
    READ_FORMATS,
    chosen_trigger_file,
    in_skill_trigger_files,
)
from evolve_action.repo._frontmatter import (
    Frontmatter,
    model_invocable,
    parse_frontmatter,
)
from evolve_action.repo._manifests import (
    COMPONENT_SUFFIXES,
    EVOLVE_DIRS,
    entry_source,
    evolve_marker,
    manifest_refusals,
    remote_entry,
)
from evolve_action.repo._model import (
    CLAUDE_MANIFEST,
    CLAUDE_MARKETPLACE,
    CODEX_MANIFEST,
    CODEX_MARKETPLACE,
    CONFIG_NAMES,
    LAYOUTS,
    MANIFEST_PATHS,
    PROJECT_SKILLS,
    EvalSet,
    Layout,
    Plugin,
    RepoProblem,
    Skill,
    SkillKey,
)
from evolve_action.repo._paths import (
    absolute,
    escapes,
    rel_path,
)
from evolve_action.repo._reading import (
    MAX_TEXT_BYTES,
    Manifest,
    go_str,
    read_manifest,
    read_text,
)
from evolve_action.repo._repository import (
    Repository,
    suite_bindings,
)
from evolve_action.repo._skills import (
    plugin_skills,
    root_skill_name,
    shadowing_command,
)
from evolve_action.repo._suites import (
    EVOLVE_NAMES,
    SUITE_FILE_NAMES,
    SUITE_SKIP_DIRS,
    glob_match,
    is_suite_name,
    sniff_suite,
    suite_files,
    suite_skill,
)
from evolve_action.repo._touched import (
    SkillPlaces,
)

__all__ = [
    "ACCEPTED_LAYOUTS",
    "BARE_SKILL_DIRS",
    "CLAUDE_MANIFEST",
    "CLAUDE_MARKETPLACE",
    "CODEX_MANIFEST",
    "CODEX_MARKETPLACE",
    "COMPONENT_SUFFIXES",
    "CONFIG_NAMES",
    "EVOLVE_DIRS",
    "EVOLVE_NAMES",
    "IN_SKILL_EVALS",
    "IN_SKILL_TRIGGER_NAMES",
    "LAYOUTS",
    "LAYOUT_MARKERS",
    "MANIFEST_PATHS",
    "MAX_TEXT_BYTES",
    "NOT_FOUND",
    "NOT_RECOGNIZED",
    "PROJECT_SKILLS",
    "READ_FORMATS",
    "SUITE_FILE_NAMES",
    "SUITE_SKIP_DIRS",
    "EvalSet",
    "Frontmatter",
    "Layout",
    "Manifest",
    "Plugin",
    "RepoProblem",
    "Repository",
    "Skill",
    "SkillKey",
    "SkillPlaces",
    "absolute",
    "chosen_trigger_file",
    "classify",
    "discover",
    "entry_source",
    "escapes",
    "evolve_marker",
    "glob_match",
    "go_str",
    "in_skill_trigger_files",
    "is_suite_name",
    "locate",
    "manifest_refusals",
    "model_invocable",
    "parse_frontmatter",
    "parse_layout",
    "plugin_skills",
    "read_manifest",
    "read_text",
    "rel_path",
    "remote_entry",
    "root_skill_name",
    "shadowing_command",
    "sniff_suite",
    "suite_bindings",
    "suite_files",
    "suite_skill",
]
