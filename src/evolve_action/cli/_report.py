"""`evolve-action report`: regenerate EVALUATION.md / EVALUATION.<fmt> / plugin pages; gate; JUnit.

Owns: the `report` subcommand (flags, handler) and the I/O edge of reporting (`generate`): loading
config, repository and results, `--migrate`, the stale-results notice, writing the reports and the
JUnit file, computing staleness for `--check --strict`, and printing the `report:`/`WARN:`/`FAIL:`
lines of report spec §5.1.

Guarantees: results files are only read (never rewritten) unless `--migrate` or
`--stale-results=drop` asks for it; rendering is deterministic (`tool_version` is an option).
Never does: rollup math or formatting (see `report`, `render`, `junit`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from evolve_action import __version__, encoding
from evolve_action.catalog import Catalog, build_catalog
from evolve_action.cli._common import Invocation, add_repo_flags
from evolve_action.config import Config, load_config, with_flags
from evolve_action.errors import SpecError, UsageError
from evolve_action.plan import (
    eval_content_hash,
    eval_fingerprint,
    skill_content_hash,
    stale_tier,
    trigger_spec_hash,
)
from evolve_action.repo import CLAUDE_MANIFEST, EvalSet, Repository, discover, read_manifest
from evolve_action.report import (
    GateOptions,
    GatePlugin,
    Issue,
    LoadedFile,
    LoadedPlugin,
    PluginSummary,
    Tier,
    active_model_keys,
    build_rollup_document,
    build_suites,
    excluded_rows,
    filter_file,
    gate_issues,
    parse_maturity,
    plugin_summary,
    provider_caps,
    render_junit,
    render_plugin_page,
    render_root,
)
from evolve_action.results import (
    ResultsFile,
    drop_models,
    foreign_model_keys,
    load_results,
    migrate_in_place,
    write_results,
)
from evolve_action.results._store import lock_results
from evolve_action.specs import load_evals, load_triggers

__all__ = ["ReportOptions", "ReportOutcome", "generate", "register"]

EXIT_OK, EXIT_GATE = 0, 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportOptions:
    """Everything `generate` needs, resolved from config and flags."""

    repo: Repository
    """The discovered repository."""
    config: Config
    """Effective configuration (file < environment < flags)."""
    results_format: encoding.Format = "json"
    """Format of `EVALUATION.<fmt>` (and of migrated results files)."""
    migrate: bool = False
    """Upgrade schema 3/4 results files in place first."""
    check: bool = False
    """Evaluate the gate."""
    gate: GateOptions = field(default_factory=GateOptions)
    """Thresholds and scope of the gate."""
    junit: Path | None = None
    """Where to write JUnit XML (relative paths resolve against the working directory)."""
    stale_results: str | None = None
    """`keep` (default) or `drop` for model entries outside the configured models."""
    tool_version: str = __version__
    """Written as `tool_version` of the rollup document."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportOutcome:
    """What `generate` did."""

    written: tuple[Path, ...]
    """Report files written, in writing order."""
    plugins: int
    """Plugins in the rollup summary."""
    issues: tuple[Issue, ...]
    """Gate issues (empty without `--check`)."""
    exit_code: int
    """0, or 1 when the gate has a FAIL."""


def register(subparsers: Any) -> None:
    """Add `report` to the top-level subcommands."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="regenerate EVALUATION.md and EVALUATION.<fmt> from stored results; gate with --check",
        description=(
            "Regenerate EVALUATION.md, per-plugin EVALUATION.md pages and EVALUATION.<fmt> from the "
            "committed results files. With --check, gate on pass-rate thresholds and exit 1 on a "
            "breach in a gated plugin."
        ),
    )
    add_repo_flags(p)
    p.add_argument("--results-format", default=None, help="json, jsonc or yaml (default: json)")
    p.add_argument(
        "--migrate", action="store_true", help="upgrade schema 3/4 results files in place first"
    )
    p.add_argument("--check", action="store_true", help="gate on thresholds; exit 1 on a FAIL")
    p.add_argument(
        "--strict",
        action="store_true",
        default=None,
        help="gate every configured model and fail on stale results",
    )
    p.add_argument("--min-triggers-pass-rate", type=float, default=None, metavar="RATE")
    p.add_argument("--min-evals-pass-rate", type=float, default=None, metavar="RATE")
    p.add_argument(
        "--maturity",
        default=None,
        metavar="LEVELS",
        help="gated plugin maturity levels, comma-separated (default: stable,unstable,prerelease)",
    )
    p.add_argument("--junit", default=None, metavar="PATH", help="also write JUnit XML to PATH")
    p.add_argument(
        "--stale-results",
        default=None,
        choices=("keep", "drop"),
        help="model entries outside the configured models: keep on disk (default) or drop",
    )
    p.set_defaults(handler=handle)


def handle(inv: Invocation) -> int:
    """Resolve options from config and flags, then generate (and gate)."""
    opts = resolve_options(inv.args, inv.environ, inv.cwd)
    return generate(opts, stdout=inv.stdout, stderr=inv.stderr, cwd=inv.cwd).exit_code


def resolve_options(
    args: argparse.Namespace, environ: Mapping[str, str], cwd: Path
) -> ReportOptions:
    """Build `ReportOptions` from parsed flags, `.evolve.<ext>` and `EVOLVE_*`."""
    root: Path | None = args.root
    config_dir = (cwd / root) if root is not None else cwd
    config = load_config(config_dir, environ)
    maturity_flag = None
    if args.maturity is not None:
        maturity_flag = tuple(t.strip() for t in args.maturity.split(",") if t.strip())
        if not maturity_flag:
            raise UsageError(
                "--maturity: no maturity levels given (want stable, unstable, or prerelease)"
            )
    config = with_flags(
        config,
        {
            "results_format": args.results_format,
            "report.thresholds.triggers_min_pass_rate": args.min_triggers_pass_rate,
            "report.thresholds.evals_min_pass_rate": args.min_evals_pass_rate,
            "report.thresholds.maturity": maturity_flag,
            "report.strict": args.strict,
            "report.junit": args.junit,
            "stale_results": args.stale_results,
        },
    )
    repo = discover(root, cwd, args.layout if args.layout is not None else config.layout)
    th = config.report.thresholds
    try:
        maturity = parse_maturity(th.maturity)
    except ValueError as exc:
        raise UsageError(f"report.thresholds.maturity: {exc}") from None
    junit = Path(config.report.junit) if config.report.junit else None
    return ReportOptions(
        repo=repo,
        config=config,
        results_format=config.results_format,
        migrate=bool(args.migrate),
        check=bool(args.check),
        gate=GateOptions(
            triggers_min_pass_rate=th.triggers_min_pass_rate,
            evals_min_pass_rate=th.evals_min_pass_rate,
            models=tuple(th.models) if th.models is not None else None,
            maturity=maturity,
            strict=config.report.strict,
        ),
        junit=junit,
        stale_results=config.stale_results,
    )


# ---------------------------------------------------------------------------------------------
# The engine (I/O edge)


def _plugin_version(plugin_dir: Path) -> str | None:
    m = read_manifest(plugin_dir / CLAUDE_MANIFEST)
    if m.ok and isinstance(m.value, dict):
        v = m.value.get("version")
        if isinstance(v, str):
            return v
    return None


def _check_existing_rollup(root: Path) -> None:
    for ext in encoding.EXTENSIONS:
        path = root / f"EVALUATION.{ext}"
        if not path.is_file():
            continue
        try:
            doc = encoding.decode_path(path)
        except SpecError:
            continue
        n = doc.get("schema") if isinstance(doc, dict) else None
        if isinstance(n, int) and not isinstance(n, bool) and n > 3:
            raise SpecError(
                f"{path.name} is rollup schema {n}, written by a newer tool (this one writes "
                "schema 3); refusing to overwrite it",
                path=path,
                hint="upgrade evolve-action",
            )


def _migrate(opts: ReportOptions, sets: Sequence[EvalSet], stdout: TextIO) -> None:
    upgraded = 0
    for es in sets:
        n = migrate_in_place(es.results_dir, opts.results_format, plugin=es.plugin, skill=es.skill)
        if n is not None:
            upgraded += 1
            stdout.write(f"migrate: upgraded {es.plugin}/{es.skill} from schema {n} to 5\n")
    if upgraded:
        noun = "file" if upgraded == 1 else "files"
        stdout.write(f"migrate: upgraded {upgraded} results {noun} to schema 5\n")
    else:
        stdout.write("migrate: results files already at schema 5\n")


def _load(
    opts: ReportOptions, sets: Sequence[EvalSet], active: frozenset[str] | None, stderr: TextIO
) -> dict[str, list[tuple[EvalSet, ResultsFile]]]:
    loaded: dict[str, list[tuple[EvalSet, ResultsFile]]] = {}
    foreign: dict[str, None] = {}
    unusable: list[SpecError] = []
    for es in sets:
        try:
            lr = load_results(es.results_dir, plugin=es.plugin, skill=es.skill, root=opts.repo.root)
        except SpecError as exc:
            unusable.append(exc)
            continue
        if lr.path is None:
            continue
        file = lr.file if lr.file is not None else ResultsFile(plugin=es.plugin, skill=es.skill)
        if active is not None:
            extra = foreign_model_keys(file, active)
            if extra and opts.stale_results == "drop":
                try:
                    # Under the results lock, on what is on disk now (a run may be writing).
                    with lock_results(es.results_dir):
                        now = load_results(es.results_dir, plugin=es.plugin, skill=es.skill)
                        file = drop_models(now.file or file, extra)
                        write_results(es.results_dir, file, opts.results_format)
                except OSError as exc:
                    raise SpecError(
                        f"cannot write results: {exc.strerror or exc}",
                        path=es.results_dir,
                        hint="make the directory writable, or use --stale-results keep",
                    ) from None
                stderr.write(
                    f"stale-results: dropped {len(extra)} model(s) outside the configured "
                    f"models: {', '.join(extra)}\n"
                )
            else:
                foreign.update(dict.fromkeys(extra))
        loaded.setdefault(es.plugin, []).append((es, file))
    _refuse_unusable(unusable, opts.repo.root)
    if foreign:
        keys = sorted(foreign)
        stderr.write(
            f"stale-results: kept {len(keys)} model(s) outside the configured models on disk "
            f"(excluded from reports); pass --stale-results=drop to prune: {', '.join(keys)}\n"
        )
    return loaded


def _refuse_unusable(unusable: Sequence[SpecError], root: Path) -> None:
    """Stop `report` when a results file cannot be used, naming every such file.

    A report that silently left a skill out would be committed and read as complete, so
    `report` writes nothing and exits 2; each file is left untouched.
    """
    if not unusable:
        return
    if len(unusable) == 1:
        raise unusable[0]
    lines = "\n".join(f"  {e.render(root).splitlines()[0]}" for e in unusable)
    raise SpecError(
        f"report: cannot use {len(unusable)} results files (nothing was written):\n{lines}",
        hint="fix or delete them (or re-run the skill with --overwrite-unreadable-results); "
        "they are left untouched",
    )


def _stale(
    es: EvalSet, file: ResultsFile | None, active: frozenset[str] | None
) -> list[tuple[Tier, str]]:
    """Stale tiers of one eval set (report spec §5.4 step 4, engine spec §7.4)."""
    if file is None:
        return []
    entries = filter_file(file, active)
    out: list[tuple[Tier, str]] = []
    if es.triggers_path is not None and any(me.triggers for me in entries.values()):
        spec = load_triggers(es.triggers_path)
        fresh = {q.query: trigger_spec_hash(q.query, q.should_trigger) for q in spec.queries}
        try:
            content = skill_content_hash(es.skill_dir / "SKILL.md")
        except SpecError:
            content = ""
        if stale_tier(
            (me.triggers for me in entries.values()),
            fresh_specs=fresh,
            fresh_content_hash=content,
        ):
            out.append(("triggers", es.skill))
    if es.evals_path is not None and any(me.evals for me in entries.values()):
        evspec = load_evals(es.evals_path)
        efresh = {c.id: eval_fingerprint(c) for c in evspec.evals}
        econtent = eval_content_hash(es.skill_dir) if es.skill_dir.is_dir() else ""
        if stale_tier(
            (me.evals for me in entries.values()),
            fresh_specs=efresh,
            fresh_content_hash=econtent,
        ):
            out.append(("evals", es.skill))
    return out


def _defined(catalog: Catalog, active: frozenset[str] | None) -> list[str]:
    """The strict-mode model matrix: every active model (all catalog models when unrestricted).

    Deliberate deviation from evolve (report spec §7 quirk 10): evolve uses only the `models`
    tokens, so a configured model no allowed harness can run is reported missing forever.
    """
    return [m.key for m in catalog.models if active is None or m.key in active]


def _write(path: Path, text: str) -> None:
    """`encoding.write_text`, with a failure (not writable, a directory in the way) as `SpecError`."""
    try:
        encoding.write_text(path, text)
    except OSError as exc:
        raise SpecError(
            f"cannot write the report: {exc.strerror or exc}",
            path=path,
            hint="make the path a writable file location and re-run; results files are unchanged",
        ) from None


def generate(opts: ReportOptions, *, stdout: TextIO, stderr: TextIO, cwd: Path) -> ReportOutcome:
    """Regenerate the reports (and JUnit), evaluate the gate with `check`, print the outcome."""
    repo = opts.repo
    cfg = opts.config
    sets = repo.eval_sets()
    if opts.migrate:
        _migrate(opts, sets, stdout)
    catalog = build_catalog(cfg.providers)
    active = active_model_keys(catalog, cfg.models, cfg.harnesses)
    caps = provider_caps(catalog)
    _check_existing_rollup(repo.root)
    loaded = _load(opts, sets, active, stderr)

    plugins: list[LoadedPlugin] = []
    for p in repo.plugins:
        psets = [es for es in sets if es.plugin == p.name]
        files = tuple(
            LoadedFile(skill=es.skill, results=f, path=repo.rel(es.results_dir))
            for es, f in loaded.get(p.name, [])
        )
        plugins.append(
            LoadedPlugin(
                name=p.name,
                rel_dir=p.rel,
                files=files,
                version=_plugin_version(p.dir),
                authored_triggers=any(es.triggers_path is not None for es in psets),
                authored_evals=any(es.evals_path is not None for es in psets),
            )
        )
    with_files = [p for p in plugins if p.files]
    summaries: dict[str, PluginSummary] = {p.name: plugin_summary(p, active) for p in with_files}
    doc = build_rollup_document(summaries.values(), opts.tool_version)
    single = repo.layout == "single"

    written: list[Path] = []
    md = render_root(
        with_files,
        summaries,
        single=single,
        active=active,
        caps=caps,
        excluded=excluded_rows(catalog, active),
    )
    root_md = repo.root / "EVALUATION.md"
    _write(root_md, md)
    written.append(root_md)
    rollup_path = repo.root / f"EVALUATION.{opts.results_format}"
    _write(
        rollup_path,
        encoding.encode_document(doc.to_json(), opts.results_format, encoding.ROLLUP_COMMENT),
    )
    encoding.remove_siblings(rollup_path)
    written.append(rollup_path)
    if not single:
        for lp in with_files:
            page = repo.root / lp.rel_dir / "EVALUATION.md"
            _write(page, render_plugin_page(lp, active=active, caps=caps))
            written.append(page)
    stdout.write(
        f"report: regenerated EVALUATION.md and EVALUATION.{opts.results_format} "
        f"({len(doc.plugins)} plugin{'' if len(doc.plugins) == 1 else 's'})\n"
    )

    if opts.junit is not None:
        junit_path = opts.junit if opts.junit.is_absolute() else cwd / opts.junit
        _write(junit_path, render_junit(build_suites(with_files, active)))
        written.append(junit_path)

    issues: list[Issue] = []
    exit_code = EXIT_OK
    if opts.check:
        by_plugin = {p.name: p for p in plugins}
        gate_plugins: list[GatePlugin] = []
        for name in sorted({es.plugin for es in sets}):
            gp = by_plugin[name]
            stale: list[tuple[Tier, str]] = []
            if opts.gate.strict:
                stored = {f.skill: f.results for f in gp.files}
                for es in sets:
                    if es.plugin == name:
                        stale.extend(_stale(es, stored.get(es.skill), active))
            gate_plugins.append(
                GatePlugin(
                    name=name,
                    version=gp.version,
                    authored_triggers=gp.authored_triggers,
                    authored_evals=gp.authored_evals,
                    summary=summaries.get(name),
                    stale=tuple(stale),
                )
            )
        issues = gate_issues(gate_plugins, opts.gate, _defined(catalog, active))
        for level in ("WARN", "FAIL"):
            for issue in issues:
                if issue.level == level:
                    stderr.write(issue.line() + "\n")
        if any(i.level == "FAIL" for i in issues):
            exit_code = EXIT_GATE
        else:
            stdout.write("report: thresholds met\n")
    return ReportOutcome(
        written=tuple(written), plugins=len(doc.plugins), issues=tuple(issues), exit_code=exit_code
    )
