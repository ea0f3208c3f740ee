"""Cost of the listing check on a 300-skill repository: cold (every set captured) and cached.

    .venv/bin/python bench/listing.py                     # 3 plugins x 100 skills, default model
    .venv/bin/python bench/listing.py --plugins 6 --skills 50 --model claude-sonnet-4-6 --json

Builds a marketplace of `--plugins` plugins of `--skills` skills each (324-character descriptions)
in a temp directory, then runs `checks.check_listing` twice with a fresh cache directory: the cold
run starts the real Claude Code CLI once per set (each plugin, plus the repository-wide set)
against the scripted server; the cached run must start none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from evolve_action.checks import LISTING_CACHE_NAME, check_listing
from evolve_action.repo import discover


def build(root: Path, plugins: int, skills: int, length: int) -> None:
    entries = []
    for p in range(plugins):
        name = f"plugin{p}"
        base = root / "plugins" / name
        (base / ".claude-plugin").mkdir(parents=True)
        (base / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
        for i in range(skills):
            skill = f"{name}-s{i:03d}"
            d = base / "skills" / skill
            d.mkdir(parents=True)
            desc = (f"Use when the user asks about topic {p}-{i} " + "x" * length)[:length]
            (d / "SKILL.md").write_text(f"---\nname: {skill}\ndescription: {desc}\n---\n\nB\n")
        entries.append({"name": name, "source": f"./plugins/{name}"})
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "bench", "owner": {"name": "bench"}, "plugins": entries})
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugins", type=int, default=3)
    parser.add_argument("--skills", type=int, default=100, help="skills per plugin")
    parser.add_argument("--length", type=int, default=324, help="description characters")
    parser.add_argument(
        "--model", action="append", default=None, help="repeatable; default: CLI default"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    models = args.model or [""]
    with tempfile.TemporaryDirectory(prefix="bench-listing.") as tmp:
        root = Path(tmp) / "repo"
        build(root, args.plugins, args.skills, args.length)
        cache = Path(tmp) / "cache" / LISTING_CACHE_NAME
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        out: dict[str, object] = {"skills": args.plugins * args.skills, "models": models}
        for label in ("cold", "cached"):
            start = time.perf_counter()
            repo = discover(root, root)
            report = asyncio.run(check_listing(repo, models=models, environ=env, cache_path=cache))
            out[f"{label}_seconds"] = round(time.perf_counter() - start, 2)
            out[f"{label}_cli_starts"] = report.started
        out["sets"] = len(report.sets)
        out["name_only_in_repository_set"] = sum(
            1
            for s in report.sets
            if s.set.kind == "repository"
            for k in s.skills
            if k.status == "name-only"
        )
        out["cli"] = report.sets[0].cli_version if report.sets else ""
    print(json.dumps(out) if args.json else " ".join(f"{k}={v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
