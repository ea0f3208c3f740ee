"""Small repositories of the shapes Claude Code users publish (issue 12), built in a directory.

Each builder writes a minimal tree of one shape (never a copy of a public repository) and returns
its root. Skills carry a valid frontmatter with a "Use when" phrase, so the only findings are the
ones the shape itself causes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MARKETPLACE = ".claude-plugin/marketplace.json"
MANIFEST = ".claude-plugin/plugin.json"


def put(root: Path, rel: str, content: str | dict[str, Any] | list[Any]) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def skill(root: Path, rel_dir: str) -> None:
    name = rel_dir.rstrip("/").rsplit("/", 1)[-1]
    put(
        root,
        f"{rel_dir}/SKILL.md",
        f"---\nname: {name}\ndescription: Does {name} work. Use when asked for {name}.\n---\n\n"
        f"# {name}\n\nDo the work.\n",
    )


def triggers(root: Path, rel_dir: str, skill_name: str, queries: int = 2) -> None:
    put(
        root,
        f"{rel_dir}/triggers.json",
        {
            "skill_name": skill_name,
            "triggers": [
                {"query": f"{skill_name} query {i}", "should_trigger": i % 2 == 0}
                for i in range(queries)
            ],
        },
    )


def marketplace(root: Path, plugins: list[dict[str, Any]]) -> None:
    put(root, MARKETPLACE, {"name": "shapes", "owner": {"name": "Someone"}, "plugins": plugins})


def skills_list_marketplace(root: Path) -> Path:
    """Two plugins on the root itself (`./`), each an explicit `skills` list, `strict: false`."""
    marketplace(
        root,
        [
            {
                "name": "document-skills",
                "source": "./",
                "strict": False,
                "skills": ["./skills/xlsx", "./skills/docx"],
            },
            {"name": "example-skills", "source": "./", "strict": False, "skills": ["./skills/art"]},
        ],
    )
    for name in ("art", "docx", "unlisted", "xlsx"):
        skill(root, f"skills/{name}")
    triggers(root, "evals/xlsx", "xlsx")
    triggers(root, "evals/art", "art", queries=3)
    return root


def remote_marketplace(root: Path) -> Path:
    """Local plugins under `plugins/` and `external_plugins/`, one without skills, four remote."""
    marketplace(
        root,
        [
            {"name": "alpha", "source": "./plugins/alpha"},
            {"name": "ext", "source": "./external_plugins/ext"},
            {"name": "empty", "source": "./plugins/empty"},
            {"name": "by-url", "source": {"source": "url", "url": "https://example.com/u.git"}},
            {
                "name": "by-subdir",
                "source": {"source": "git-subdir", "url": "https://example.com/m.git", "path": "p"},
            },
            {"name": "by-github", "source": {"source": "github", "repo": "someone/thing"}},
            {"name": "by-string", "source": "someone/other"},
        ],
    )
    for name, rel in (("alpha", "plugins/alpha"), ("ext", "external_plugins/ext")):
        put(root, f"{rel}/{MANIFEST}", {"name": name, "version": "1.0.0"})
    put(root, f"plugins/empty/{MANIFEST}", {"name": "empty", "version": "1.0.0"})
    skill(root, "plugins/alpha/skills/one")
    skill(root, "external_plugins/ext/skills/two")
    triggers(root, "plugins/alpha/evals/one", "one")
    triggers(root, "external_plugins/ext/evals/two", "two")
    return root


def self_listing(root: Path, *, by: str) -> Path:
    """One plugin whose marketplace lists the repository itself, by `./` or by a `github` source."""
    source: Any = "./" if by == "dot" else {"source": "github", "repo": "someone/selfy"}
    marketplace(root, [{"name": "selfy", "source": source}])
    put(root, MANIFEST, {"name": "selfy", "version": "1.0.0"})
    skill(root, "skills/brainstorm")
    skill(root, "skills/plan-work")
    triggers(root, "evals/brainstorm", "brainstorm")
    return root


def bare_skills(root: Path, skills_rel: str = "skills") -> Path:
    """No manifest at all: skills under `skills/` (or `.claude/skills/`), with skill-creator's
    in-skill `evals/evals.json` beside one of them."""
    skill(root, f"{skills_rel}/alpha-skill")
    skill(root, f"{skills_rel}/beta-skill")
    put(
        root,
        f"{skills_rel}/alpha-skill/evals/evals.json",
        {"skill_name": "alpha-skill", "evals": [{"id": 1, "prompt": "p", "expected_output": "o"}]},
    )
    triggers(root, "evals/alpha-skill", "alpha-skill")
    return root


def claude_code_plugin(root: Path, opt_in: str | None = None) -> Path:
    """A plugin written for Claude Code alone: a `plugin.json` without a version, a `hooks/`
    directory, no Codex manifest, skills that declare a license and whose descriptions have no
    "Use when" phrase. `opt_in` adds one of evolve's markers: `.evolve.yaml`, `.codex-plugin` (a
    Codex manifest beside the Claude one) or `.agents/plugins` (a Codex marketplace)."""
    put(root, MANIFEST, {"name": "pdf-kit", "description": "PDF helpers"})
    put(root, "hooks/hooks.json", {"hooks": {}})
    for name, extra in (("pdf-text", "license: Apache-2.0\n"), ("pdf-tables", "")):
        put(
            root,
            f"skills/{name}/SKILL.md",
            f"---\nname: {name}\ndescription: Extracts {name} from PDF files.\n{extra}---\n\n"
            f"# {name}\n\nDo the work.\n",
        )
    if opt_in == ".evolve.yaml":
        put(root, ".evolve.yaml", "# evolve's conventions, with their defaults\n")
    elif opt_in == ".codex-plugin":
        put(root, ".codex-plugin/plugin.json", {"name": "pdf-kit"})
    elif opt_in == ".agents/plugins":
        put(root, ".agents/plugins/marketplace.json", {"name": "m", "plugins": []})
    elif opt_in is not None:
        raise ValueError(f"unknown opt-in marker {opt_in!r}")
    return root


LONG_DESCRIPTION_RUNES = 1068
"""The length of the block-scalar description of `yaml_descriptions`' `long-block` skill."""


def long_description() -> list[str]:
    """Lines of a `|-` block whose value (lines joined by newlines) is 1,068 characters long."""
    words = "Use when building with the API and its SDKs; covers models, tools and batching."
    lines = [f"{words} {i:02d}" for i in range(12)]  # 12 lines of 82 characters
    last = LONG_DESCRIPTION_RUNES - (len("\n".join(lines)) + 1)
    return [*lines, "x" * last]


def yaml_descriptions(root: Path) -> Path:
    """A bare skill repository whose descriptions use YAML as Claude Code reads it: a `|-` and a
    `>` block scalar, a quoted string over two lines, comments, an unquoted `: ` (which Claude
    Code tolerates), a 1,068-character `|-` block and one frontmatter that is not YAML at all
    (line 4 of `skills/broken/SKILL.md`)."""
    long_block = "".join(f"  {line}\n" for line in long_description())
    fronts = {
        "literal-strip": "description: |-\n  Formats reports.\n  Use when asked for a report.\n",
        "folded": "description: >\n  Folds long lines\n  into one. Use when folding.\n",
        "quoted-multiline": 'description: "Quoted over\n  two lines. Use when quoting."\n',
        "commented": "# a comment line\ndescription: Use when commenting.  # not part of it\n",
        "unquoted-colon": "description: House style: ruff lints. Use when styling.\n",
        "long-block": f"description: |-\n{long_block}",
        "broken": "description: Does broken things.\n\n  Keywords: broken, things\n",
    }
    for name, front in fronts.items():
        put(root, f"skills/{name}/SKILL.md", f"---\nname: {name}\n{front}---\n\n# {name}\n")
    return root
