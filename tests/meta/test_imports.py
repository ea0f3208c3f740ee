"""The import rules of DESIGN.md §5, checked on the source with `ast` (nothing is imported).

- no circle between our modules (module-level, function-level and type-checking imports all count);
- imports point one way, down the pipeline: a package never imports one of a later stage;
- a package's private files (`_x.py`) are imported only from inside that package;
- no function-level (lazy) import of our own modules, except the few in `LAZY_ALLOWED`, each kept
  on purpose for start-up time (`evolve-action --version` must not import the slow libraries).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = "evolve_action"

# The pipeline order (DESIGN.md §5), lowest first: a module may import its own rank or lower.
# Within the second layer (repo/specs/results + config/catalog) the order is refined so it has no
# circle: specs only needs repo's discovery types, the catalog checks a spec's model filter
# (`specs.model_allowed`), results price with the catalog, and config validates harness names
# against it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "errors", "events", "sanitise", "redact"),
    ("encoding",),
    ("repo",),
    ("specs",),
    ("catalog",),
    ("results", "config"),
    ("plan",),
    ("checks", "harness", "grading", "modelserver"),
    ("triggers", "evals"),
    ("report",),
    ("github",),
    ("flows",),
    ("cli",),
    ("__main__",),
)
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}

# Lazy imports kept on purpose: (importing module, imported module) -> why.
LAZY_ALLOWED: dict[tuple[str, str], str] = {
    ("evolve_action.harness", "evolve_action.harness._claude_code"): (
        "start-up: `claude_agent_sdk` takes ~0.3 s to import; only a real agent session needs it"
    ),
    ("evolve_action.harness._agents", "evolve_action.harness._claude_code"): (
        "start-up: a sweep imports only the agent CLIs its models use (`claude_agent_sdk` is slow)"
    ),
    ("evolve_action.harness._listing", "evolve_action.harness._claude_code"): (
        "start-up: only a listing capture that misses its cache starts the CLI through the SDK"
    ),
    ("evolve_action.harness._agents", "evolve_action.harness._codex"): (
        "start-up: a sweep imports only the agent CLIs its models use"
    ),
    ("evolve_action.specs", "evolve_action.specs._validation"): (
        "start-up: `jsonschema` and `referencing` are only needed when specs are validated"
    ),
}


@dataclass(frozen=True)
class Import:
    """One import of one of our modules."""

    source: str
    target: str
    line: int
    lazy: bool
    type_only: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    base = SRC / Path(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports_of(path: Path) -> list[Import]:
    source = module_name(path)
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Import] = []

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = node.module or ""
        if node.level:
            package = source.split(".") if is_pkg else source.split(".")[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        out = []
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            out.append(sub if is_module(sub) else base)
        return out

    def visit(node: ast.AST, lazy: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for sub in child.body:
                    visit_one(sub, lazy, True)
                for sub in child.orelse:
                    visit_one(sub, lazy, type_only)
                continue
            visit_one(child, lazy, type_only)

    def visit_one(child: ast.AST, lazy: bool, type_only: bool) -> None:
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            for target in targets(child):
                if target == ROOT or target.startswith(ROOT + "."):
                    found.append(Import(source, target, child.lineno, lazy, type_only))
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            visit(child, True, type_only)
        else:
            visit(child, lazy, type_only)

    visit(tree, False, False)
    return found


def stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


ALL: list[Import] = [i for p in sorted((SRC / ROOT).rglob("*.py")) for i in imports_of(p)]


def test_the_walk_sees_the_imports() -> None:
    assert len(ALL) > 100
    assert set(RANK) >= {stage(i.source) for i in ALL}, "a new package needs a place in LAYERS"


def test_no_import_circle() -> None:
    graph: dict[str, set[str]] = {}
    for i in ALL:
        if i.source != i.target:
            graph.setdefault(i.source, set()).add(i.target)
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                circles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    assert circles == [], "\n".join(" -> ".join(c) for c in circles)


def test_imports_point_down_the_pipeline() -> None:
    wrong = [
        f"{i.source}:{i.line} imports {i.target} ({stage(i.source)} may not depend on "
        f"{stage(i.target)}, a later stage)"
        for i in ALL
        if RANK[stage(i.target)] > RANK[stage(i.source)]
    ]
    assert wrong == [], "\n".join(wrong)


def test_private_modules_are_imported_only_from_their_package() -> None:
    wrong = []
    for i in ALL:
        parts = i.target.split(".")
        private = [n for n, part in enumerate(parts) if part.startswith("_")]
        if not private:
            continue
        owner = ".".join(parts[: private[0]])
        if not (i.source == owner or i.source.startswith(owner + ".")):
            wrong.append(f"{i.source}:{i.line} imports {i.target}: import from {owner} instead")
    assert wrong == [], "\n".join(wrong)


def test_no_lazy_import_of_our_modules_beyond_the_allowlist() -> None:
    lazy = {(i.source, i.target): i for i in ALL if i.lazy and not i.type_only}
    unexpected = [
        f"{i.source}:{i.line} imports {i.target} inside a function"
        for key, i in sorted(lazy.items())
        if key not in LAZY_ALLOWED
    ]
    assert unexpected == [], "\n".join(unexpected)
    stale = sorted(set(LAZY_ALLOWED) - set(lazy))
    assert stale == [], f"allowlisted lazy imports that no longer exist: {stale}"


@pytest.mark.parametrize(
    "package", sorted(p.parent.name for p in (SRC / ROOT).glob("*/__init__.py"))
)
def test_every_package_facade_declares_all(package: str) -> None:
    init = SRC / ROOT / package / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    names = {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    assert "__all__" in names, f"{package}/__init__.py has no __all__"


def _imported_names(tree: ast.Module) -> set[str]:
    """Every name an import statement binds in the module (at any depth)."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }


def _declared_all(tree: ast.Module) -> list[str]:
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            assert value is not None
            return [str(name) for name in ast.literal_eval(value)]
    return []


def test_only_a_package_facade_re_exports() -> None:
    """A module's `__all__` lists its own definitions: only a package's `__init__` (its face)
    names what it imports. A re-export elsewhere is a second way in to the same definition."""
    wrong = []
    for path in sorted((SRC / ROOT).rglob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = _imported_names(tree)
        wrong += [
            f"{module_name(path)}.__all__ names {name!r}, which it imports: import it from "
            "where it is defined"
            for name in _declared_all(tree)
            if name in imported
        ]
    assert wrong == [], "\n".join(wrong)


def test_the_re_export_rule_sees_a_re_export() -> None:
    tree = ast.parse("from x import a\nfrom y import b as c\ndef d(): ...\n__all__ = ['c', 'd']\n")
    assert [n for n in _declared_all(tree) if n in _imported_names(tree)] == ["c"]
