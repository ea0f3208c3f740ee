"""The `report --check` gate: plugin maturity, thresholds and the issue algorithm.

Owns: `Maturity` and `classify_maturity` (hashicorp/go-version's lenient parse, report spec §5.3),
`parse_maturity` (the gated levels), `GateOptions` (thresholds, pinned models, strict), the
`GatePlugin` input and `gate_issues` (§5.4) with its `Issue` values.

Guarantees: pure and deterministic: issues come out in plugin-name order and, within a plugin,
triggers before evals, keys sorted, then staleness. Never does: I/O, printing, exit codes (the
CLI (`cli/_report.py`) prints the issues and maps them to exit code 1).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from evolve_action.plan import Tier

if TYPE_CHECKING:
    from evolve_action.report._rollup import PluginSummary

__all__ = [
    "GATEABLE",
    "GateOptions",
    "GatePlugin",
    "Issue",
    "Maturity",
    "classify_maturity",
    "gate_issues",
    "parse_maturity",
]


# ---------------------------------------------------------------------------------------------
# Maturity (report spec §5.3)


class Maturity(enum.StrEnum):
    """A plugin's release maturity, from its manifest version."""

    STABLE = "stable"
    UNSTABLE = "unstable"
    PRERELEASE = "prerelease"
    UNKNOWN = "unknown"


GATEABLE = (Maturity.STABLE, Maturity.UNSTABLE, Maturity.PRERELEASE)

# hashicorp/go-version's lenient pattern: optional `v`, 1..n numeric parts, optional prerelease
# (with or without `-`), optional `+metadata`.
_VERSION_RE = re.compile(
    r"^v?([0-9]+(?:\.[0-9]+)*)"
    r"(?:-?([0-9A-Za-z\-~]+(?:\.[0-9A-Za-z\-~]+)*))?"
    r"(?:\+([0-9A-Za-z\-~]+(?:\.[0-9A-Za-z\-~]+)*))?$"
)


def classify_maturity(version: str | None) -> Maturity:
    """`prerelease` with a prerelease tag, else `unstable` below 1.0.0, else `stable`.

    A missing or unparseable version is `unknown` (never gated).
    """
    if not version:
        return Maturity.UNKNOWN
    m = _VERSION_RE.match(version.strip())
    if m is None:
        return Maturity.UNKNOWN
    if m.group(2):
        return Maturity.PRERELEASE
    parts = [int(p) for p in m.group(1).split(".")]
    return Maturity.UNSTABLE if parts[0] < 1 else Maturity.STABLE


def parse_maturity(tokens: Iterable[str]) -> frozenset[Maturity]:
    """Parse gated maturity levels (`stable,unstable`); ValueError on unknown or empty."""
    out: set[Maturity] = set()
    for raw in tokens:
        for tok in raw.split(","):
            t = tok.strip()
            if not t:
                continue
            if t not in {m.value for m in GATEABLE}:
                raise ValueError(
                    f'unknown maturity level "{t}" (want stable, unstable, or prerelease)'
                )
            out.add(Maturity(t))
    if not out:
        raise ValueError("no maturity levels given (want stable, unstable, or prerelease)")
    return frozenset(out)


# ---------------------------------------------------------------------------------------------
# The gate (report spec §5.4)


@dataclass(frozen=True, slots=True, kw_only=True)
class GateOptions:
    """Thresholds and scope of `report --check`."""

    triggers_min_pass_rate: float = 0.5
    """Minimum trigger gate rate."""
    evals_min_pass_rate: float = 0.66
    """Minimum eval gate rate."""
    models: tuple[str, ...] | None = None
    """Pinned model keys (`report.thresholds.models`), or None."""
    maturity: frozenset[Maturity] = frozenset(GATEABLE)
    """Gated maturity levels."""
    strict: bool = False
    """Strict mode: Defined model set and staleness issues."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Issue:
    """One gate finding: FAIL for a gated plugin, WARN otherwise."""

    level: Literal["WARN", "FAIL"]
    """Severity."""
    plugin: str
    """Plugin the issue belongs to."""
    text: str
    """Issue text as printed after `WARN: ` / `FAIL: `."""

    def line(self) -> str:
        """`WARN: <text>` or `FAIL: <text>`."""
        return f"{self.level}: {self.text}"


@dataclass(frozen=True, slots=True, kw_only=True)
class GatePlugin:
    """What the gate needs per plugin with authored eval sets."""

    name: str
    """Plugin name."""
    version: str | None
    """Manifest version (maturity)."""
    authored_triggers: bool
    """Some eval set defines triggers."""
    authored_evals: bool
    """Some eval set defines evals."""
    summary: PluginSummary | None
    """Active-filtered rollups, or None when the plugin has no loaded results."""
    stale: tuple[tuple[Tier, str], ...] = ()
    """Stale `(tier, skill)` pairs in skill order (only consulted under strict)."""


def gate_issues(
    plugins: Sequence[GatePlugin], opts: GateOptions, defined: Sequence[str]
) -> list[Issue]:
    """The issues of `report --check`, in printing order within each plugin.

    `defined` is the Defined model set (catalog models matching config `models`) used under strict
    when no pinned `models` are configured.
    """
    issues: list[Issue] = []
    for p in sorted(plugins, key=lambda p: p.name):
        level: Literal["WARN", "FAIL"] = (
            "FAIL" if classify_maturity(p.version) in opts.maturity else "WARN"
        )
        texts: list[str] = []
        for tier, authored, minimum in (
            (Tier.TRIGGERS, p.authored_triggers, opts.triggers_min_pass_rate),
            (Tier.EVALS, p.authored_evals, opts.evals_min_pass_rate),
        ):
            if not authored:
                continue
            rollups = (
                {}
                if p.summary is None
                else (p.summary.triggers if tier == "triggers" else p.summary.evals)
            )
            if opts.models is not None:
                keys = sorted(set(opts.models))
            elif opts.strict:
                keys = sorted(set(defined))
            else:
                keys = [k for k in sorted(rollups) if rollups[k].stats.executed > 0]
            for key in keys:
                r = rollups.get(key)
                if r is None or r.stats.passed is None or r.stats.executed == 0:
                    texts.append(f"{p.name}: {tier}: no stored results for {key}")
                    continue
                rate = r.stats.passed / r.stats.executed
                if rate < minimum:
                    texts.append(
                        f"{p.name}: {tier}: {key} pass rate {rate * 100:.1f}% "
                        f"below threshold {minimum * 100:.1f}%"
                    )
        if opts.strict:
            texts.extend(
                f"{tier}: {skill} stored results are stale (authored content changed)"
                for tier, skill in p.stale
            )
        issues.extend(Issue(level=level, plugin=p.name, text=t) for t in texts)
    return issues
