"""The report flow: load stored results, build the reports, write them, evaluate the gate.

Owns: `ReportOptions`, `ReportOutcome` and `regenerate_report` — loading config-scoped results
(`--migrate`, `--stale-results`), refusing to overwrite a newer rollup, writing the documents the
pure build (`report.build_report`) returns plus the JUnit file, computing staleness for
`--check --strict` and gating. Returns everything the CLI prints as data.

Guarantees: results files are only read (never rewritten) unless `migrate` or
`stale_results="drop"` asks for it; with `write=False` nothing is written at all; a write failure is a `SpecError` naming the path. Never does:
print, parse argv, rollup math or rendering (see `report`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evolve_action import __version__, encoding
from evolve_action.catalog import build_catalog
from evolve_action.config import Config, as_committed
from evolve_action.errors import SpecError
from evolve_action.plan import (
    Tier,
    eval_content_hash,
    eval_fingerprint,
    skill_content_hash,
    stale_tier,
    trigger_spec_hash,
)
from evolve_action.repo import CLAUDE_MANIFEST, EvalSet, Repository, read_manifest
from evolve_action.report import (
    GateOptions,
    GatePlugin,
    Issue,
    LoadedFile,
    LoadedPlugin,
    active_model_keys,
    build_report,
    filter_file,
    gate_issues,
    gate_models,
)
from evolve_action.results import (
    ResultsFile,
    drop_models,
    foreign_model_keys,
    load_results,
    lock_results,
    migrate_in_place,
    write_results,
)
from evolve_action.specs import load_evals, load_triggers

__all__ = ["Migration", "ReportOptions", "ReportOutcome", "regenerate_report"]

EXIT_OK, EXIT_GATE = 0, 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportOptions:
    """Everything `regenerate_report` needs, resolved from config and flags."""

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
    write: bool = True
    """Write the reports (and the JUnit file); False: build and gate only, nothing on disk
    changes (`gate`, which is read-only from any directory)."""
    harnesses_here: frozenset[str] = frozenset({"claude"})
    """The agent CLIs this machine can run (`harness.available_harnesses`): the strict gate asks
    only for evidence one of them could produce."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Migration:
    """One results file upgraded in place by `migrate`."""

    plugin: str
    skill: str
    from_schema: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportOutcome:
    """What `regenerate_report` did."""

    written: tuple[Path, ...]
    """Report files written, in writing order."""
    plugins: int
    """Plugins in the rollup summary."""
    issues: tuple[Issue, ...]
    """Gate issues (empty without `check`)."""
    exit_code: int
    """0, or 1 when the gate has a FAIL."""
    results_format: encoding.Format = "json"
    """The format of the rollup written (`EVALUATION.<fmt>`)."""
    migrated: tuple[Migration, ...] | None = None
    """Files upgraded by `migrate` (None when not asked)."""
    notices: tuple[str, ...] = ()
    """`stale-results:` notices, in order (the CLI prints them on stderr)."""
    checked: bool = False
    """The gate was evaluated."""
    repo_plugins: int | None = None
    """Plugins in the repository (with results or not); None when not counted."""


def regenerate_report(opts: ReportOptions, *, cwd: Path) -> ReportOutcome:
    """Load → build → write → gate; return what happened (nothing is printed)."""
    repo = opts.repo
    cfg = opts.config
    sets = repo.eval_sets()
    migrated = _migrate(opts, sets) if opts.migrate else None
    catalog = build_catalog(cfg.providers)
    # The committed report's models come from the config file, never from the environment
    # (`EVOLVE_MODELS` narrows what runs; it must not add an "Excluded models" table).
    committed = as_committed(cfg)
    active = active_model_keys(catalog, committed.models, committed.harnesses)
    _check_existing_rollup(repo.root)
    notices: list[str] = []
    loaded = _load(opts, sets, active, notices)

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
    built = build_report(
        plugins,
        catalog=catalog,
        active=active,
        single=repo.layout == "single"
        or (len(repo.plugins) == 1 and repo.plugins[0].rel == "."),  # a self-listing marketplace
        results_format=opts.results_format,
        tool_version=opts.tool_version,
        junit=opts.junit is not None,
    )
    written: list[Path] = []
    for rel, text in built.documents if opts.write else ():
        path = repo.root / rel
        _write(path, text)
        if rel == built.rollup_name:
            encoding.remove_siblings(path)
        written.append(path)
    if opts.write and opts.junit is not None and built.junit is not None:
        junit_path = opts.junit if opts.junit.is_absolute() else cwd / opts.junit
        _write(junit_path, built.junit)
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
                    summary=built.summaries.get(name),
                    stale=tuple(stale),
                )
            )
        required, not_required = gate_models(
            catalog, active, cfg.harnesses, runnable=opts.harnesses_here
        )
        if opts.gate.strict and opts.gate.models is None and not_required:
            notices.append(
                f"note: --strict: {len(not_required)} model(s) no allowed harness here can run "
                f"are not required: {', '.join(not_required)}"
            )
        issues = gate_issues(gate_plugins, opts.gate, required)
        if any(i.level == "FAIL" for i in issues):
            exit_code = EXIT_GATE
    return ReportOutcome(
        written=tuple(written),
        plugins=built.plugins,
        issues=tuple(issues),
        exit_code=exit_code,
        results_format=opts.results_format,
        migrated=migrated,
        notices=tuple(notices),
        checked=opts.check,
        repo_plugins=len(repo.plugins),
    )


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
            data = encoding.read_capped(path)
            if ext in ("json", "jsonc") and _schema_at_most_3(data):
                continue  # the committed rollup as we write it: no need to decode megabytes
            doc = encoding.decode_bytes(data, path)
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


# How `encode_json` opens a rollup (after the JSONC comment line), with a schema up to 3.
_OUR_ROLLUP_START = re.compile(rb'(?://[^\n]*\n)?\{\n  "schema": [0-3],\n')
# A JSON escape spelling a lowercase letter (how `schema` could be written without the word).
_LETTER_ESCAPE = re.compile(rb"\\u00[67][0-9A-Fa-f]")


def _schema_at_most_3(data: bytes) -> bool:
    """True when a JSON/JSONC rollup cannot decode to a top-level `schema` above 3.

    It opens with `"schema": n` (n ≤ 3) as the first key of the top-level object, and no other
    key can be `schema`: the word occurs once and no escape spells a letter. So the answer is
    known without decoding the file (a file that does not decode is skipped all the same).
    """
    return (
        _OUR_ROLLUP_START.match(data) is not None
        and data.count(b"schema") == 1
        and _LETTER_ESCAPE.search(data) is None
    )


def _migrate(opts: ReportOptions, sets: Sequence[EvalSet]) -> tuple[Migration, ...]:
    done: list[Migration] = []
    for es in sets:
        n = migrate_in_place(es.results_dir, opts.results_format, plugin=es.plugin, skill=es.skill)
        if n is not None:
            done.append(Migration(plugin=es.plugin, skill=es.skill, from_schema=n))
    return tuple(done)


def _load(
    opts: ReportOptions,
    sets: Sequence[EvalSet],
    active: frozenset[str] | None,
    notices: list[str],
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
                notices.append(
                    f"stale-results: dropped {len(extra)} model(s) outside the configured "
                    f"models: {', '.join(extra)}"
                )
            else:
                foreign.update(dict.fromkeys(extra))
        loaded.setdefault(es.plugin, []).append((es, file))
    _refuse_unusable(unusable, opts.repo.root)
    if foreign:
        keys = sorted(foreign)
        notices.append(
            f"stale-results: kept {len(keys)} model(s) outside the configured models on disk "
            f"(excluded from reports); pass --stale-results=drop to prune: {', '.join(keys)}"
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
            out.append((Tier.TRIGGERS, es.skill))
    if es.evals_path is not None and any(me.evals for me in entries.values()):
        evspec = load_evals(es.evals_path, fixture_bases=es.fixture_bases)
        efresh = {c.id: eval_fingerprint(c) for c in evspec.evals}
        econtent = (
            eval_content_hash(es.skill_dir, skip=es.content_skips) if es.skill_dir.is_dir() else ""
        )
        if stale_tier(
            (me.evals for me in entries.values()),
            fresh_specs=efresh,
            fresh_content_hash=econtent,
        ):
            out.append((Tier.EVALS, es.skill))
    return out


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
