"""`evolve-action demo`: the example repository, evaluated end to end, offline by default.

Owns: copying the example plugin repository into a fresh directory (`copy_examples`, so the user's
tree is never modified), deciding between the scripted model server and the real API
(`choose_backend`: scripted unless credentials are present, and the real API only when the user
confirmed it), the bundled demo policy (`demo_policy`, package data
`modelserver/policies/demo.yaml`), the environment that points a run at the scripted server
(`scripted_environ`), and reading the figures back from the written results files for the closing
summary (`summarise`, `render_summary`).

Guarantees: never writes outside the output directory it is given or creates; the scripted
environment never carries the caller's real Anthropic credentials (a dummy key and a loopback
`ANTHROPIC_BASE_URL` replace them) and routes the token-count cache into the output directory, so the
fake counts never pollute the user's real cache. Never does: print (the command module renders),
read `os.environ` (callers pass the environment), start agent processes (the engines do).
"""

from __future__ import annotations

import enum
import io
import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from evolve_action.catalog import PR_DEFAULT_MODEL, build_catalog, resolve_models
from evolve_action.config import find_config, resolve_repository
from evolve_action.encoding import atomic_write_text, decode_bytes, decode_path, round_half_away
from evolve_action.errors import SpecError, UsageError
from evolve_action.evals import EvalsOptions
from evolve_action.events import Reporter
from evolve_action.flows._action import run_pr
from evolve_action.flows._pr_job import ActionOutcome, PrOptions
from evolve_action.flows._run_all import RunAllOptions, RunAllOutcome, RunAllStep, run_all
from evolve_action.harness import OPENAI_CREDENTIAL_VARS, available_harnesses, openai_credential
from evolve_action.modelserver import ModelServer, Policy
from evolve_action.repo import Repository
from evolve_action.results import EvalResult, EvalsEntry, load_results

__all__ = [
    "CODEX_MODEL",
    "CREDENTIAL_VARS",
    "DEFAULT_MODEL",
    "DEFAULT_RUNS",
    "DUMMY_KEY",
    "POLICY_RESOURCE",
    "Backend",
    "BackendChoice",
    "DemoBackendReady",
    "DemoCopied",
    "DemoOptions",
    "DemoOutcome",
    "DemoSummary",
    "SkillFigures",
    "TierFigures",
    "add_trigger_query",
    "bundled_examples",
    "choose_backend",
    "copy_examples",
    "demo_models",
    "demo_policy",
    "demo_policy_text",
    "render_summary",
    "run_demo",
    "scripted_environ",
    "summarise",
]

CREDENTIAL_VARS: tuple[str, ...] = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "EVOLVE_ANTHROPIC_API_KEY",
    "EVOLVE_CLAUDE_CODE_OAUTH_TOKEN",
)
"""Variables that would make the run spend real money; all are replaced in scripted mode."""

DUMMY_KEY = "sk-evolve-demo-scripted"
"""The API key the agent and the judge send to the scripted server (any string works)."""

POLICY_RESOURCE = ("modelserver", "policies", "demo.yaml")
"""Where the demo policy lives inside the `evolve_action` package."""

# Names stripped from the environment handed to a scripted run: credentials and every way of
# pointing the Anthropic clients elsewhere.
_SCRUB = (
    *CREDENTIAL_VARS,
    *OPENAI_CREDENTIAL_VARS,
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)

# Names copied when seeding the output directory: version-control metadata, caches and stale
# outputs of earlier runs are left behind so the demo starts from the authored files only.
_IGNORE = shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", ".venv", "*.pyc")


class Backend(enum.StrEnum):
    """Which model answers the demo's agent sessions and judge calls."""

    SCRIPTED = "scripted"
    """The in-process scripted model server with the bundled demo policy."""
    REAL = "real"
    """The real Anthropic API with the caller's credentials (costs money)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BackendChoice:
    """The backend to use, or why the demo must stop and ask."""

    backend: Backend | None
    """None: credentials are present and neither `--yes` nor `--scripted` was given."""
    credential: str | None = None
    """The credential variable found in the environment, if any."""


def choose_backend(environ: Mapping[str, str], *, scripted: bool, yes: bool) -> BackendChoice:
    """Scripted unless a credential is present; with one, the real API only after `--yes`."""
    found = next((name for name in CREDENTIAL_VARS if environ.get(name)), None)
    if scripted or found is None:
        return BackendChoice(backend=Backend.SCRIPTED, credential=found)
    if yes:
        return BackendChoice(backend=Backend.REAL, credential=found)
    return BackendChoice(backend=None, credential=found)


def bundled_examples() -> Path:
    """The example marketplace shipped inside the package (`evolve_action/examples`; in a checkout
    the repository's `examples/` is a link to it), so `evolve-action demo` works from an install."""
    return Path(str(resources.files("evolve_action") / "examples"))


def copy_examples(
    source: Path, out: Path | None, *, tmp_parent: Path | None = None, label: str | None = None
) -> Path:
    """Copy the example repository `source` into `out` (or a fresh temp dir) and return the copy.

    `out` must not exist or be an empty directory, so a previous run is never overwritten. Without
    `out`, the copy is `<fresh temp dir>/<source name>` (under `tmp_parent` when given). Raises
    `UsageError` when `source` is missing, `out` is unusable, or `out` lies inside `source`.
    `label` is how the user wrote `source` (for messages; default: the path).
    """
    shown = label or str(source)
    src = source.resolve()
    if not src.is_dir():
        raise UsageError(
            f"example repository not found: {shown} (looked for {src})",
            hint="pass --root DIR pointing at a plugin repository, "
            "or leave --root out to use the bundled examples",
        )
    if out is None:
        parent = tempfile.mkdtemp(prefix="evolve-demo-", dir=tmp_parent)
        dest = Path(parent) / (src.name or "repo")
    else:
        dest = out.resolve()
        if dest == src or dest.is_relative_to(src):
            raise UsageError(
                f"--out {out}: inside the example repository {shown}",
                hint="pick a directory outside it; the demo never writes into the source tree",
            )
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise UsageError(
                f"--out {out}: exists and is not an empty directory",
                hint="pass a new path (the demo never overwrites an earlier run)",
            )
    try:
        shutil.copytree(src, dest, symlinks=True, ignore=_IGNORE, dirs_exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"copying {shown} to {dest}: {exc.strerror or exc}", hint="check --out"
        ) from None
    return dest


def demo_policy_text() -> str:
    """The bundled demo policy (YAML), read from the installed package."""
    ref = resources.files("evolve_action")
    for part in POLICY_RESOURCE:
        ref = ref / part
    return ref.read_text(encoding="utf-8")


def demo_policy() -> Policy:
    """The bundled demo policy, parsed."""
    return Policy.from_yaml(demo_policy_text())


def scripted_environ(
    environ: Mapping[str, str], *, base_url: str, cache_dir: Path
) -> dict[str, str]:
    """`environ` with the real credentials removed and the run pointed at the scripted server.

    The token-count cache goes to `cache_dir` (`EVOLVE_CACHE_DIR`), so the scripted counts never
    land in the user's real cache.
    """
    env = {k: v for k, v in environ.items() if k not in _SCRUB}
    env["ANTHROPIC_BASE_URL"] = base_url
    env["ANTHROPIC_API_KEY"] = DUMMY_KEY
    env["OPENAI_BASE_URL"] = f"{base_url}/v1"  # Codex, when it is installed
    env["OPENAI_API_KEY"] = DUMMY_KEY
    env["EVOLVE_CACHE_DIR"] = str(cache_dir)
    return env


@dataclass(frozen=True, slots=True)
class ScriptedServer:
    """The scripted model server of a `--scripted` run: its address and the run's environment."""

    base_url: str
    environ: dict[str, str]
    """`scripted_environ` over the caller's environment, pointed at `base_url`."""


@contextmanager
def scripted_server(environ: Mapping[str, str], *, prefix: str) -> Iterator[ScriptedServer]:
    """`--scripted` of `run all` and `pr --local`: the scripted model server with the demo's policy
    on a free loopback port, and a throwaway token-count cache (a temporary directory named
    `prefix…`), for the duration of the block."""
    with (
        ModelServer(demo_policy(), port=0, keep_requests=False) as server,
        tempfile.TemporaryDirectory(prefix=prefix) as cache,
    ):
        yield ScriptedServer(
            base_url=server.base_url,
            environ=scripted_environ(environ, base_url=server.base_url, cache_dir=Path(cache)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillFigures:
    """One skill × model's latest figures, read back from its results file."""

    plugin: str
    skill: str
    model: str
    triggers_passed: int = 0
    triggers_total: int = 0
    """Queries with a verdict (passed + failed)."""
    evals_passed: int = 0
    evals_total: int = 0
    """Graded cases (passed + failed; errored cases are counted apart)."""
    evals_errored: int = 0
    baseline_passed: int = 0
    baseline_total: int = 0
    paired_total: int = 0
    """Evals graded both with and without the skill (the lift's case set)."""
    paired_passed: int = 0
    """Of `paired_total`, those passed with the skill."""
    paired_baseline_passed: int = 0
    """Of `paired_total`, those passed without it."""
    results_path: Path | None = None


class TierFigures(NamedTuple):
    """Passed and graded counts of one tier over every skill."""

    passed: int
    total: int

    @property
    def rate(self) -> float | None:
        """passed / total, None when nothing was graded."""
        return self.passed / self.total if self.total else None


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoSummary:
    """What the demo prints at the end: per-skill figures and the per-tier totals."""

    root: Path
    skills: tuple[SkillFigures, ...]
    report_path: Path | None
    evals_errored: int = 0

    def tier(self, name: str) -> TierFigures:
        """Totals of `triggers`, `evals` or `baseline` over every skill × model."""
        if name not in ("triggers", "evals", "baseline"):
            raise ValueError(f"unknown tier {name!r}")
        passed = sum(getattr(s, f"{name}_passed") for s in self.skills)
        total = sum(getattr(s, f"{name}_total") for s in self.skills)
        return TierFigures(passed, total)

    @property
    def paired(self) -> tuple[int, int, int]:
        """(cases graded both ways, passed with the skill, passed without) over every skill."""
        return (
            sum(s.paired_total for s in self.skills),
            sum(s.paired_passed for s in self.skills),
            sum(s.paired_baseline_passed for s in self.skills),
        )

    @property
    def lift(self) -> float | None:
        """With-skill minus without-skill pass rate, in [-1, 1], over the evals graded both ways.

        Both rates come from the same cases, so an eval whose with-skill run or baseline errored
        (or has no verdict) is left out of both. None when no eval was graded both ways.
        """
        n, with_skill, baseline = self.paired
        return (with_skill - baseline) / n if n else None

    @property
    def lift_points(self) -> int | None:
        """The lift in percentage points as printed: the difference of the two rounded rates."""
        n, with_skill, baseline = self.paired
        if not n:
            return None
        return _percent(with_skill / n) - _percent(baseline / n)


def _percent(rate: float) -> int:
    """`rate` as a whole percentage, halves away from zero (7/8 → 88, 1/8 → 13)."""
    return int(round_half_away(rate * 100))


def _verdict(r: EvalResult) -> bool | None:
    return None if r.runtime_error else r.passed


def _pairs(entry: EvalsEntry) -> tuple[int, int, int]:
    """(graded both ways, passed with the skill, passed without) over an entry's evals."""
    if entry.baseline is None:
        return 0, 0, 0
    base = {r.id: _verdict(r) for r in entry.baseline.results}
    n = with_skill = without = 0
    for r in entry.results:
        v, b = _verdict(r), base.get(r.id)
        if v is None or b is None:
            continue
        n += 1
        with_skill += v
        without += b
    return n, with_skill, without


def _graded(passed: int | None, failed: int | None) -> tuple[int, int]:
    p, f = passed or 0, failed or 0
    return p, p + f


def summarise(repository: Repository) -> DemoSummary:
    """Read every eval set's results file and the report location of the evaluated copy."""
    figures: list[SkillFigures] = []
    for es in repository.eval_sets():
        loaded = load_results(es.results_dir, plugin=es.plugin, skill=es.skill)
        if loaded.file is None:
            continue
        for key, entry in sorted(loaded.file.models.items()):
            tp = tt = ep = et = err = bp = bt = 0
            pairs = (0, 0, 0)
            if entry.triggers is not None:
                tp, tt = _graded(entry.triggers.summary.passed, entry.triggers.summary.failed)
            if entry.evals is not None:
                ep, et = _graded(entry.evals.summary.passed, entry.evals.summary.failed)
                err = entry.evals.summary.errored or 0
                if entry.evals.baseline is not None:
                    b = entry.evals.baseline.summary
                    bp, bt = _graded(b.passed, b.failed)
                pairs = _pairs(entry.evals)
            figures.append(
                SkillFigures(
                    plugin=es.plugin,
                    skill=es.skill,
                    model=key,
                    triggers_passed=tp,
                    triggers_total=tt,
                    evals_passed=ep,
                    evals_total=et,
                    evals_errored=err,
                    baseline_passed=bp,
                    baseline_total=bt,
                    paired_total=pairs[0],
                    paired_passed=pairs[1],
                    paired_baseline_passed=pairs[2],
                    results_path=loaded.path,
                )
            )
    report = repository.root / "EVALUATION.md"
    return DemoSummary(
        root=repository.root,
        skills=tuple(figures),
        report_path=report if report.is_file() else None,
        evals_errored=sum(s.evals_errored for s in figures),
    )


def _rate(t: TierFigures) -> str:
    return "n/a" if t.rate is None else f"{t.passed}/{t.total} ({_percent(t.rate)}%)"


def render_summary(summary: DemoSummary) -> str:
    """The short closing summary: pass rates per tier, the lift, and where EVALUATION.md is."""
    lines = ["", "demo summary"]
    # One row per skill; with several models (Claude and Codex) one per skill × model.
    several = len({s.model for s in summary.skills}) > 1
    header = ("SKILL", *(("MODEL",) if several else ()), "TRIGGERS", "EVALS", "WITHOUT SKILL")
    rows: list[tuple[str, ...]] = [header]
    for s in summary.skills:
        rows.append(
            (
                f"{s.plugin}/{s.skill}",
                *((s.model,) if several else ()),
                f"{s.triggers_passed}/{s.triggers_total}" if s.triggers_total else "-",
                f"{s.evals_passed}/{s.evals_total}" if s.evals_total else "-",
                f"{s.baseline_passed}/{s.baseline_total}" if s.baseline_total else "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for row in rows:
        lines.append("  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
    lines.append(f"  triggers:           {_rate(summary.tier('triggers'))} of queries pass")
    lines.append(f"  evals (with skill): {_rate(summary.tier('evals'))} of cases pass")
    lines.append(f"  evals (baseline):   {_rate(summary.tier('baseline'))} of cases pass")
    points = summary.lift_points
    if points is not None:
        line = f"  lift:               {points:+d} points from the skills"
        n = summary.paired[0]
        if n != summary.tier("evals").total or n != summary.tier("baseline").total:
            line += f" (over the {n} {'case' if n == 1 else 'cases'} graded both ways)"
        lines.append(line)
    if summary.evals_errored:
        lines.append(f"  errored evals:      {summary.evals_errored}")
    if summary.report_path is not None:
        lines.append(f"  report:             {summary.report_path}")
    lines.append(f"  evaluated copy:     {summary.root}")
    return "\n".join(lines) + "\n"


# =============================================================================================
# The demo as one function


DEFAULT_RUNS = 1
"""Trigger sessions per query in the demo (`run all` defaults to 3; one keeps the demo quick)."""
DEFAULT_MODEL = PR_DEFAULT_MODEL
"""The model the demo evaluates: the one a pull request evaluates by default (`run all` would
evaluate every configured model)."""
CODEX_MODEL = "openai/gpt-5.4"
"""Evaluated beside `DEFAULT_MODEL` when OpenAI Codex is installed (docs/codex.md)."""


def demo_models(environ: Mapping[str, str], backend: Backend) -> tuple[str, ...]:
    """The demo's models without `--model`: Claude, plus one OpenAI model through Codex when
    Codex is installed and can answer (the scripted server, or an OpenAI key for the real API)."""
    if "codex" not in available_harnesses(environ):
        return (DEFAULT_MODEL,)
    if backend is Backend.SCRIPTED or openai_credential(environ) is not None:
        return (DEFAULT_MODEL, CODEX_MODEL)
    return (DEFAULT_MODEL,)


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoOptions:
    """What `run_demo` evaluates and how."""

    source: Path
    """The plugin repository to copy (absolute)."""
    label: str
    """How the user named `source` (shown in messages)."""
    target: Path | None = None
    """Where to put the copy: a new or empty directory (None: a fresh temp dir)."""
    environ: Mapping[str, str]
    jobs: int = 2
    runs: int = DEFAULT_RUNS
    models: tuple[str, ...] | None = None
    """None: `demo_models` (Claude, and one OpenAI model when Codex is installed)."""
    keep_workspaces: bool = False
    scripted: bool = False
    """Use the scripted model server even when Anthropic credentials are set."""
    yes: bool = False
    """With Anthropic credentials set: use the real API (this costs money)."""
    log_path: Path | None = None
    """Append the scripted model server's request log (JSON lines) here."""
    preview: bool = True
    """End with a `pr --local` preview of a one-query change to `PREVIEW_SKILL`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoCopied:
    """The example repository was copied to `copy`."""

    copy: Path
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoBackendReady:
    """The model backend is up; the pipeline runs next."""

    backend: Backend
    credential: str | None
    """The Anthropic credential variable that is set, if any."""
    base_url: str | None = None
    """The scripted model server's address (scripted backend only)."""
    config_warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoOutcome:
    """What the demo did: the copy, the `run all` outcome and the closing figures."""

    copy: Path
    run: RunAllOutcome
    summary: DemoSummary
    preview: ActionOutcome | None = None
    """The PR preview (`pr --local`) of a one-query change, when the repository allows it."""


def run_demo(
    options: DemoOptions,
    *,
    reporter: Reporter,
    on_step: Callable[[DemoCopied | DemoBackendReady | RunAllStep], None] | None = None,
    cwd: Path,
) -> DemoOutcome:
    """Copy the examples, pick the backend, run checks → triggers → evals → report on the copy."""

    def step(event: DemoCopied | DemoBackendReady | RunAllStep) -> None:
        if on_step is not None:
            on_step(event)

    choice = choose_backend(options.environ, scripted=options.scripted, yes=options.yes)
    if choice.backend is None:
        raise UsageError(
            f"{choice.credential} is set: the demo would run the agent and the judge on the real "
            "Anthropic API, which costs money",
            hint="pass --yes to use the real API, or --scripted to run offline against the "
            "scripted model server",
        )
    models = options.models or demo_models(options.environ, choice.backend)
    _preflight(options, models, cwd=cwd)
    copy = copy_examples(options.source, options.target, label=options.label)
    pin_models(copy, models)
    step(DemoCopied(copy=copy, label=options.label))
    with ExitStack() as stack:
        base_url: str | None = None
        if choice.backend is Backend.SCRIPTED:
            server = stack.enter_context(
                ModelServer(
                    demo_policy(),
                    port=0,
                    log_path=options.log_path,
                    log_bodies=False,
                    keep_requests=False,
                )
            )
            base_url = server.base_url
            cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evolve-demo-")))
            environ = scripted_environ(options.environ, base_url=base_url, cache_dir=cache)
        else:
            environ = dict(options.environ)
        repository, config = resolve_repository(copy, cwd, None, environ)
        step(
            DemoBackendReady(
                backend=choice.backend,
                credential=choice.credential,
                base_url=base_url,
                config_warnings=tuple(config.warnings),
            )
        )
        run = run_all(
            RunAllOptions(
                repository=repository,
                config=config,
                environ=environ,
                evals=EvalsOptions(
                    models=models,
                    jobs=options.jobs,
                    keep_workspaces=options.keep_workspaces,
                ),
                runs=options.runs,
            ),
            reporter=reporter,
            on_step=step,
            cwd=cwd,
        )
        summary = summarise(repository)  # results are read from disk: the run's files
        preview = _preview_pr(copy, environ, options, models, reporter) if options.preview else None
    return DemoOutcome(copy=copy, run=run, summary=summary, preview=preview)


PREVIEW_SKILL = ("project-tools", "csv-report")
PREVIEW_QUERY = "Give me per-region totals from q3.csv as a markdown table"


def _preview_pr(
    copy: Path,
    environ: Mapping[str, str],
    options: DemoOptions,
    models: tuple[str, ...],
    reporter: Reporter,
) -> ActionOutcome | None:
    """What reviewers would see on a PR adding one trigger query: commit the evaluated copy, add
    the query, run `pr --local` against that commit (only the new query runs). None when the
    copy has no such skill or git is missing."""
    plugin, skill = PREVIEW_SKILL
    found = [
        p
        for p in sorted((copy / "plugins" / plugin / "evals" / skill).glob("triggers.*"))
        if p.suffix in (".json", ".jsonc")
    ]
    if not found or shutil.which("git") is None:
        return None
    git = ["git", "-C", str(copy), "-c", "user.name=demo", "-c", "user.email=demo@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "evaluated examples"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    path = found[0]
    atomic_write_text(path, add_trigger_query(path, PREVIEW_QUERY))
    return run_pr(
        PrOptions(
            environ=environ,
            cwd=copy,
            local=True,
            base="HEAD",
            out_dir=copy / ".evolve-action",
            models=models,
            runs=options.runs,
            jobs=options.jobs,
            base_mode="stored",  # the preview shows one look: no base reruns in the demo
            max_runs=options.runs,
            write=True,  # the demo's copy is a scratch directory: update it in place
        ),
        reporter=reporter,
        commands=io.StringIO(),
    )


def add_trigger_query(path: Path, query: str) -> str:
    """The text of a JSON/JSONC triggers file with one should-trigger `query` appended to its
    `triggers` array, edited as text so the author's comments, order and layout stay as they are.
    Only when that edit would not decode to the same document plus the query (an unusual layout)
    is the file re-encoded from its decoded form (comments are then lost)."""
    text = path.read_text(encoding="utf-8")
    doc = decode_path(path)
    entry = json.dumps({"query": query, "should_trigger": True}, ensure_ascii=False)
    want = {**doc, "triggers": [*doc["triggers"], json.loads(entry)]}
    close = text.rfind("]")
    if close > 0:
        head = text[:close].rstrip()
        line_start = text.rfind("\n", 0, close) + 1
        indent = text[line_start:close] if not text[line_start:close].strip() else ""
        item = indent + "  "
        if head.endswith(","):
            edited = f"{head}\n{item}{entry},\n{indent}{text[close:]}"
        else:
            edited = f"{head},\n{item}{entry}\n{indent}{text[close:]}"
        try:
            if decode_bytes(edited.encode("utf-8"), path) == want:
                return edited
        except SpecError:
            pass
    return json.dumps(want, indent=2, ensure_ascii=False) + "\n"


def pin_models(copy: Path, models: tuple[str, ...]) -> None:
    """Record the demo's models as the copy's configured `models` (YAML config appended to, or a
    new `.evolve.yaml`), so `report --check` and `gate` on the copy check exactly what the demo
    evaluated. A copy whose config already names models, or is not YAML, is left as it is."""
    found = find_config(copy)  # the one config file, as every command finds it
    if found is not None and (
        found.suffix not in (".yaml", ".yml") or "models" in (decode_path(found) or {})
    ):
        return
    path = found if found is not None else copy / ".evolve.yaml"
    text = path.read_text(encoding="utf-8") if found is not None else ""
    if text and not text.endswith("\n"):
        text += "\n"
    text += "# Added by `evolve-action demo`: the models this copy was evaluated with.\nmodels:\n"
    text += "".join(f"  - {json.dumps(m)}\n" for m in models)
    atomic_write_text(path, text)


def _preflight(options: DemoOptions, models: tuple[str, ...], *, cwd: Path) -> None:
    """Reject a bad model or log path before anything is copied or started.

    Without this a typo in `--model` surfaced only after the copy and the checks step, leaving
    a half-made demo directory behind. A missing source is left to `copy_examples`, which
    explains where it looked.
    """
    log_path = options.log_path
    if log_path is not None:
        try:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            with log_path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise UsageError(
                f"--log {log_path}: cannot open the request log: {exc.strerror or exc}",
                hint="pass a writable --log path",
            ) from None
    if not options.source.is_dir():
        return
    _, config = resolve_repository(options.source, cwd, None, options.environ)
    resolve_models(
        build_catalog(config.providers),
        model_flags=models,
        config_models=config.models,
        config_harnesses=config.harnesses,
        harness_flags=(),
        available={"claude", "codex"},
        tier="triggers",
    )
