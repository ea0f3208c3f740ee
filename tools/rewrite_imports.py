#!/usr/bin/env python3
"""Rewrite imports of evolve_action's old flat modules to the package layout (issue 10).

Usage:
    python tools/rewrite_imports.py [--check] [PATH ...]      # default PATHs: src tests bench
    python tools/rewrite_imports.py --map > design/layout-move-map.md

Idempotent: a file already on the new layout is left byte-identical, so rerun it after any merge.

Rules, given `MOVES` (old module -> (package, private file)) and each package's `__all__` (read with
`ast` from `src/evolve_action/<package>/__init__.py`):

- `from evolve_action.<old> import a, b as c`
  - from a file inside the same package: `from evolve_action.<pkg>.<_file> import a, b as c`
    (siblings import each other by private path; going through `__init__` would be a circle);
  - elsewhere: `from evolve_action.<pkg> import ...` for the names in `__all__`; names that are not
    exported stay on the private path (`from evolve_action.<pkg>.<_file> import ...`) and, for a
    file under `src/`, are reported: export them or stop using them.
- `from evolve_action import <old> [as A]` (module-style use, `A.name`):
  - inside the same package: `from evolve_action.<pkg> import <_file> as A`;
  - elsewhere, when every `A.name` used in the file is exported: `from evolve_action import <pkg>`
    (`as A` kept; `as <old>` added when the names differ, so `old.name` keeps working);
  - otherwise (a test reaching for `_private` names or monkeypatching module globals): the private
    module, `from evolve_action.<pkg> import <_file> as A`.
- the string form `"evolve_action.<old>.name"` (monkeypatch targets, `-m` runs) is rewritten to the
  private module path, which is where the patched global lives — unless `<old>` names a package
  today (`"evolve_action.results"`), which is left alone.

Exit status: 0, or 1 with `--check` when a file would change.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG_DIR = ROOT / "src" / "evolve_action"

# old dotted module (below evolve_action) -> (new package, private file module name)
MOVES: dict[str, tuple[str, str]] = {
    # encoding/: decode, encode, YAML, Go compatibility, atomic writes
    "encoding": ("encoding", "_decode"),
    "encode": ("encoding", "_encode"),
    "yamldecode": ("encoding", "_yaml"),
    "yamlscalar": ("encoding", "_yamlscalar"),
    "gocompat": ("encoding", "_gocompat"),
    "fsio": ("encoding", "_fsio"),
    # specs/: authored models, loading, validation, findings
    "specs": ("specs", "_load"),
    "specs_model": ("specs", "_model"),
    "validation": ("specs", "_validation"),
    "findings": ("specs", "_findings"),
    # results/: schema-5 model, codec, merge, store
    "results": ("results", "_store"),
    "results_model": ("results", "_model"),
    "results_codec": ("results", "_codec"),
    "results_merge": ("results", "_merge"),
    # plan/
    "plan": ("plan", "_select"),
    "plan_model": ("plan", "_model"),
    "fingerprint": ("plan", "_fingerprint"),
    # checks/: Tier 0 and the advisory skill signals (not OS signals)
    "checks": ("checks", "_engine"),
    "signals": ("checks", "_signals"),
    # harness/
    "harness.base": ("harness", "_base"),
    "harness.claude_code": ("harness", "_claude_code"),
    "harness._locate": ("harness", "_locate"),
    "workspace": ("harness", "_workspace"),
    "procenv": ("harness", "_procenv"),
    "tokens": ("harness", "_tokens"),
    # grading/
    # added after the merge with issue 8/9/11 work
    "preflight": ("harness", "_preflight"),
    "lifecycle": ("harness", "_lifecycle"),
    "sandbox": ("harness", "_sandbox"),
    "compare": ("report", "_compare"),
    "pr_comment": ("report", "_pr_comment"),
    "github.api": ("github", "_api"),
    "github.context": ("github", "_context"),
    "github.inputs": ("github", "_inputs"),
    "github.outputs": ("github", "_outputs"),
    "github.touched": ("github", "_touched"),
    "grading": ("grading", "_assertions"),
    "judge": ("grading", "_judge"),
    # triggers/ and evals/
    "triggers": ("triggers", "_engine"),
    "trigger_verdicts": ("triggers", "_verdicts"),
    "evals": ("evals", "_engine"),
    "eval_assembly": ("evals", "_assembly"),
    # report/
    "report": ("report", "_rollup"),
    "gate": ("report", "_gate"),
    "render": ("report", "_render"),
    "junit": ("report", "_junit"),
    # github/ (other files there: api, context, inputs, outputs, touched — added by the action issue)
    "github.workflow": ("github", "_workflow"),
    # flows/
    "demo": ("flows", "_demo"),
    # cli/
    "cli": ("cli", "_main"),
    "commands._common": ("cli", "_common"),
    "commands.all": ("cli", "_all"),
    "commands.checks": ("cli", "_checks"),
    "commands.demo": ("cli", "_demo"),
    "commands.evals": ("cli", "_evals"),
    "commands.model_server": ("cli", "_model_server"),
    "commands.report": ("cli", "_report"),
    "commands.triggers": ("cli", "_triggers"),
}

# Names that moved out of their old module in a later commit (old module, name) -> new (pkg, file).
# Consulted before MOVES, so `from evolve_action.commands.report import generate` finds the flow.
NAME_MOVES: dict[tuple[str, str], tuple[str, str]] = {
    ("commands._common", "available_harnesses"): ("harness", "_locate"),
    ("commands.report", "ReportOptions"): ("flows", "_report"),
    ("commands.report", "ReportOutcome"): ("flows", "_report"),
    ("report", "Tier"): ("plan", "_model"),  # one Tier: the plan's StrEnum
    ("grading", "ToolCall"): ("harness", "_base"),  # one ToolCall: `input_json` is `raw_input`
    ("grading", "GradeSummary"): ("results", "_model"),
    ("grading", "compile_re2"): ("encoding", "_regex"),  # raises `Re2Error` (a ValueError)
}
# Not expressible above (the signature or the module kind changed): fix these by hand.
BY_HAND: tuple[str, ...] = (
    "`commands._common.results_format(flag, config)` → `config.resolve_results_format(flag, config)`",
    "`grading.summarize(verdicts)` → `results.summarise_grades(verdicts)`",
    "`grading.describe(a)` → `a.describe()` (`specs.Assertion.describe`)",
    "`grading.ToolCall(name=…, input_json=…)` → `harness.ToolCall(name=…, input=…, raw_input=…)`",
    "`specs.compile_re2(p)` returning `(regex, go_error)` → `encoding.compile_re2(p)`, which raises"
    " `encoding.Re2Error` (its `go_message` is the old error text)",
    "`commands.report.generate(opts, stdout=…, stderr=…, cwd=…)` (load, build, write, gate, print)"
    " → `flows.regenerate_report(opts, cwd=…)` (returns a `ReportOutcome`, prints nothing) +"
    " `cli._report.print_report(outcome, stdout=…, stderr=…)`",
    "`commands.all.handle` / the demo's re-parsed `Namespace` → `flows.run_all(RunAllOptions(…),"
    " reporter=…, on_step=…)` and `flows.run_demo(DemoOptions(…), …)`",
    "`triggers` options from flags → `flows.trigger_options(repo, config, environ, …)`",
    "`evals.DEFAULT_MAX_TURNS` → `config.DEFAULT_MAX_TURNS`;"
    " `judge.DEFAULT_JUDGE_MODEL` → `catalog.DEFAULT_JUDGE_MODEL`",
    "a test that monkeypatches a module global: patch the facade (`evolve_action.<pkg>`) when the"
    " code under test calls the name through it, else the private module that defines it",
)

# Renamed names: (module, old name) -> new name. The import is rewritten, and so are the file's
# uses of the bare name (when imported by name) or of `<module>.<old name>` (when the module is).
RENAMES: dict[tuple[str, str], str] = {
    ("events", "Warning"): "RunWarning",  # stops shadowing the builtin `Warning`
    ("catalog", "Selection"): "ModelSelection",  # `plan.Selection` is the case selection
}

_FROM_RE = re.compile(
    r"^(?P<indent>[ \t]*)from evolve_action(?P<dot>\.(?P<mod>[A-Za-z_][\w.]*))? import "
    r"(?P<names>\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)",
    re.M,
)
_STRING_RE = re.compile(r"""(?P<q>["'])evolve_action\.(?P<path>[\w.]+)(?P=q)""")


def exports(package: str) -> set[str]:
    """The `__all__` of `evolve_action.<package>` (read with ast, never imported)."""
    init = PKG_DIR / package / "__init__.py"
    if not init.exists():
        return set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            if isinstance(value, (ast.List, ast.Tuple)):
                return {e.value for e in value.elts if isinstance(e, ast.Constant)}
    return set()


def definitions(package: str) -> dict[str, set[str]]:
    """Top-level names defined (not imported) in the private files of a package: name -> files."""
    out: dict[str, set[str]] = {}
    pkg_dir = PKG_DIR / package
    if not pkg_dir.is_dir():
        return out
    for f in sorted(pkg_dir.glob("_*.py")):
        if f.name == "__init__.py":
            continue
        for node in ast.parse(f.read_text(encoding="utf-8")).body:
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            elif isinstance(node, getattr(ast, "TypeAlias", ())) and isinstance(
                node.name, ast.Name
            ):
                names = [node.name.id]
            for n in names:
                out.setdefault(n, set()).add(f.stem)
    return out


def is_submodule(package: str, name: str) -> bool:
    """Whether `evolve_action.<package>.<name>` is a module or package on disk."""
    base = PKG_DIR / package.replace(".", "/")
    return (base / f"{name}.py").exists() or (base / name / "__init__.py").exists()


def home_of(path: Path) -> str | None:
    """The package (below evolve_action) that a source file belongs to, or None."""
    try:
        rel = path.resolve().relative_to(PKG_DIR)
    except ValueError:
        return None
    return rel.parts[0] if len(rel.parts) > 1 else None


def _split_names(text: str) -> list[tuple[str, str | None]]:
    text = text.strip()
    if text.startswith("("):
        text = text[1:-1]
    text = re.sub(r"#[^\n]*", "", text).replace("\\\n", " ")
    out: list[tuple[str, str | None]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        bits = part.split()
        out.append((bits[0], bits[2] if len(bits) == 3 and bits[1] == "as" else None))
    return out


def _fmt(indent: str, module: str, names: list[tuple[str, str | None]]) -> str:
    items = [n if a is None else f"{n} as {a}" for n, a in names]
    one = f"{indent}from {module} import {', '.join(items)}"
    if len(one) <= 100:
        return one
    body = "".join(f"{indent}    {i},\n" for i in items)
    return f"{indent}from {module} import (\n{body}{indent})"


def _attrs_used(source: str, alias: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == alias
    }


class Rewriter:
    """Rewrites one file's text; collects warnings."""

    def __init__(self) -> None:
        pkgs = {p for p, _ in MOVES.values()}
        self.all = {pkg: exports(pkg) for pkg in pkgs}
        self.defs = {pkg: definitions(pkg) for pkg in pkgs}
        self.warnings: list[str] = []

    def rewrite(self, path: Path, text: str) -> str:
        self.text = text
        home = home_of(path)
        in_src = home is not None or path.resolve().is_relative_to(PKG_DIR)

        def from_line(m: re.Match[str]) -> str:
            indent, mod, names = m["indent"], m["mod"], _split_names(m["names"])
            if mod is None:
                return self._from_root(path, text, indent, names, home, in_src) or m[0]
            return self._from_module(path, indent, mod, names, home, in_src) or m[0]

        new = _FROM_RE.sub(from_line, text)
        new = self._renames(new)
        return _STRING_RE.sub(self._string, new)

    def _renames(self, text: str) -> str:
        for (mod, old), new in RENAMES.items():
            leaf = mod.rsplit(".", 1)[-1]
            by_name = re.search(
                rf"^[ \t]*from evolve_action\.{re.escape(mod)} import [^\n]*\b{old}\b", text, re.M
            ) or re.search(
                rf"^[ \t]*from evolve_action\.{re.escape(mod)} import \([^)]*\b{old}\b", text, re.M
            )
            if by_name:
                text = re.sub(rf"(?<![\w.]){old}\b", new, text)
            if re.search(rf"^[ \t]*from evolve_action import [^\n]*\b{leaf}\b", text, re.M):
                text = re.sub(rf"\b{leaf}\.{old}\b", f"{leaf}.{new}", text)
        return text

    def _from_module(self, path, indent, mod, names, home, in_src):  # type: ignore[no-untyped-def]
        groups: dict[str, list[tuple[str, str | None]]] = {}
        changed = False
        for name, alias in names:
            if f"{mod}.{name}" in MOVES:  # `from evolve_action.commands import all as run_all`
                entry, line = self._module(
                    path, self.text, indent, f"{mod}.{name}", alias or name, home, in_src
                )
                if entry is not None:
                    groups.setdefault("evolve_action", []).append(entry)
                else:
                    groups.setdefault(line.split(" import ")[0].split("from ")[-1], []).append(
                        (MOVES[f"{mod}.{name}"][1], alias or name)
                    )
                changed = True
                continue
            target = NAME_MOVES.get((mod, name)) or MOVES.get(mod)
            new_name = RENAMES.get((mod, name), name)
            if target is None or is_submodule(mod, name):
                groups.setdefault(f"evolve_action.{mod}", []).append((name, alias))
                continue
            pkg, file = target
            homes = self.defs[pkg].get(new_name, set())
            if homes and file not in homes:
                file = sorted(homes)[0]  # the name moved to a sibling (or was re-exported)
            if home == pkg:
                module = f"evolve_action.{pkg}.{file}"
            elif new_name in self.all.get(pkg, set()):
                module = f"evolve_action.{pkg}"
            else:
                module = f"evolve_action.{pkg}.{file}"
                if in_src and self.all.get(pkg):
                    self.warnings.append(f"{path}: {new_name} is not exported by {pkg}")
            changed = changed or module != f"evolve_action.{mod}" or new_name != name
            groups.setdefault(module, []).append((new_name, alias))
        if not changed:
            return None
        return "\n".join(_fmt(indent, m, ns) for m, ns in groups.items())

    def _module(self, path, text, indent, old, bound, home, in_src):  # type: ignore[no-untyped-def]
        """A module-style import of old module `old` bound to `bound`: (plain entry | line)."""
        pkg, file = MOVES[old]
        used = _attrs_used(text, bound)
        # `setattr(mod, "name", …)` patches a module global. A name the facade exports is patched
        # there (callers in other packages look it up through the facade); any other name lives
        # only in the private module.
        patched = set(re.findall(rf"setattr\(\s*{re.escape(bound)}\s*,\s*[\"'](\w+)", text))
        if home == pkg or patched - self.all.get(pkg, set()):
            return None, _fmt(indent, f"evolve_action.{pkg}", [(file, bound)])
        exported = self.all.get(pkg, set())
        if exported and used <= exported:
            return (pkg, None if bound == pkg else bound), None
        if in_src and exported:
            missing = sorted(used - exported)
            self.warnings.append(f"{path}: {bound}.{missing} not exported by {pkg}")
        return None, _fmt(indent, f"evolve_action.{pkg}", [(file, bound)])

    def _from_root(self, path, text, indent, names, home, in_src):  # type: ignore[no-untyped-def]
        plain: list[tuple[str, str | None]] = []
        lines: list[str] = []
        changed = False
        for name, alias in names:
            if name not in MOVES:
                plain.append((name, alias))
                continue
            entry, line = self._module(path, text, indent, name, alias or name, home, in_src)
            if entry is not None:
                plain.append(entry)
                changed = changed or entry != (name, alias)
            else:
                lines.append(line)
                changed = True
        if not changed:
            return None
        if plain:
            lines.insert(0, _fmt(indent, "evolve_action", plain))
        return "\n".join(lines)

    def _string(self, m: re.Match[str]) -> str:
        dotted = m["path"]
        parts = dotted.split(".")
        if len(parts) > 1 and parts[0] in self.all and is_submodule(parts[0], parts[1]):
            return m[0]  # already on the new layout
        for cut in range(len(parts), 0, -1):
            old = ".".join(parts[:cut])
            if old in MOVES and is_submodule(
                ".".join(old.split(".")[:-1]) or "", old.split(".")[-1]
            ):
                return m[0]  # the old path is a package today (`evolve_action.results`): keep it
            if old in MOVES:
                pkg, file = MOVES[old]
                rest = parts[cut:]
                new = ".".join(["evolve_action", pkg, file, *rest])
                return f"{m['q']}{new}{m['q']}"
        return m[0]


def move_map() -> str:
    """The move map as Markdown (design/layout-move-map.md)."""
    out = [
        "# Layout move map (issue 10)",
        "",
        "Old flat module → new package (private file). Generated from `MOVES` in `tools/rewrite_imports.py`;",
        "regenerate with `python tools/rewrite_imports.py --map > design/layout-move-map.md`.",
        "",
        "**After merging other branches**: run `.venv/bin/python tools/rewrite_imports.py` (idempotent) to move",
        "their `from evolve_action.<old> import X` lines to the new public paths, then",
        "`.venv/bin/ruff check --fix src tests bench && .venv/bin/ruff format src tests bench`. New files they",
        "added at old paths move by hand (`git mv`), e.g. a new `src/evolve_action/compare.py` or `pr_comment.py`",
        "belongs in `report/` (add its names to `report/__init__.py`'s `__all__`); new files under `github/`",
        "(`api.py`, `context.py`, `inputs.py`, `outputs.py`, `touched.py`) stay in `github/` — rename them",
        "`_api.py`… and export their names from `github/__init__.py` (then fix pyproject's",
        "`per-file-ignores` path for `github/api.py`). A warning `X is not exported by P` means: add `X` to",
        "`P/__init__.py`'s imports and `__all__`, then rerun.",
        "",
        "| old module | new public import path | file |",
        "| --- | --- | --- |",
    ]
    for old, (pkg, f) in MOVES.items():
        out.append(f"| `evolve_action.{old}` | `evolve_action.{pkg}` | `{pkg}/{f}.py` |")
    out += [
        "",
        "Unchanged: `evolve_action.repo`, `config`, `catalog`, `errors`, `events`, `modelserver`,",
        "and the `evolve_action.cli:main` entry point (`cli/__init__` exports `main`).",
        "",
        "## What each package exports (`__all__`)",
        "",
    ]
    pkgs = sorted({p for p, _ in MOVES.values()})
    for p in pkgs:
        names = sorted(exports(p))
        out.append(f"- **`evolve_action.{p}`**: " + ", ".join(f"`{n}`" for n in names))
    if NAME_MOVES or RENAMES:
        out += ["", "## Names that moved or were renamed after the file move", ""]
        for (old, name), (pkg, _file) in sorted(NAME_MOVES.items()):
            out.append(f"- `evolve_action.{old}.{name}` → `evolve_action.{pkg}.{name}`")
        for (old, name), new in sorted(RENAMES.items()):
            pkg = MOVES[old][0] if old in MOVES else old
            out.append(f"- `evolve_action.{old}.{name}` → `evolve_action.{pkg}.{new}`")
    out += ["", "## By hand (the rewrite script cannot)", ""]
    out += [f"- {note}" for note in BY_HAND]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="report files that would change")
    parser.add_argument("--map", action="store_true", help="print the move map (Markdown) and exit")
    args = parser.parse_args(argv)
    if args.map:
        sys.stdout.write(move_map())
        return 0
    paths = args.paths or [ROOT / "src", ROOT / "tests", ROOT / "bench"]
    rewriter = Rewriter()
    changed = []
    for base in paths:
        files = [base] if base.is_file() else sorted(base.rglob("*.py"))
        for f in files:
            text = f.read_text(encoding="utf-8")
            new = rewriter.rewrite(f, text)
            if new != text:
                changed.append(f)
                if not args.check:
                    f.write_text(new, encoding="utf-8")
    for f in changed:
        print(("would rewrite " if args.check else "rewrote ") + str(f))
    for w in rewriter.warnings:
        print("warning: " + w, file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
