"""The model catalog: providers, models, display names, pricing, harness support, and selection.

Owns: evolve's built-in catalog (report spec §6, in its order), `providers.<id>.models` config
overrides (engine spec §12.1), turning `--model` / config `models` tokens into an ordered list of
models bound to a harness (`resolve_models`), the eval-set `models` restriction matcher
(`model_matches`), and USD pricing helpers (`estimate_cost_usd`, `measured_cost_usd`).

Guarantees: pure functions over frozen values; the catalog order is provider order then authored
order; error texts are evolve's. Never does: read the environment or look for CLIs on PATH (the
caller passes which harnesses are available), or network calls (token counting lives elsewhere).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evolve_action.encoding import go_str_list, round6
from evolve_action.errors import ConfigError, UsageError, did_you_mean
from evolve_action.specs import model_allowed

__all__ = [
    "BUILTIN_CATALOG",
    "DEFAULT_JUDGE_MODEL",
    "EVAL_HARNESSES",
    "HARNESSES",
    "NATIVE_HARNESS",
    "PROVIDERS",
    "PR_DEFAULT_MODEL",
    "USAGE_HARNESSES",
    "BoundModel",
    "Catalog",
    "Model",
    "ModelSelection",
    "Pricing",
    "Provider",
    "build_catalog",
    "check_config_harnesses",
    "estimate_cost_usd",
    "measured_cost_usd",
    "model_matches",
    "resolve_models",
    "split_tokens",
]

DEFAULT_JUDGE_MODEL = "anthropic/claude-sonnet-5"
"""The LLM judge when neither `--judge-model` nor config `judge_model` names one."""

PR_DEFAULT_MODEL = "anthropic/claude-sonnet-5"
"""The one model a pull request evaluates (the action's PR mode, `pr --local`) when neither an
input, a flag nor config `models` names any: a cheap default instead of every catalog model."""

HARNESSES: tuple[str, ...] = (
    "claude",
    "codex",
    "gemini",
    "cursor",
    "copilot",
    "antigravity",
    "grok",
)
"""Every built-in harness id, in evolve's fallback preference order."""

EVAL_HARNESSES: frozenset[str] = frozenset(
    {"claude", "codex", "grok", "copilot", "cursor", "antigravity"}
)
"""Harnesses that can run Tier 2 evals (gemini runs triggers only)."""

RUNNABLE_HARNESSES: frozenset[str] = frozenset({"claude", "codex"})
"""Harnesses evolve-action can start sessions with; evidence from the others is read, never made."""

USAGE_HARNESSES: frozenset[str] = frozenset({"claude", "codex", "grok"})
"""Harnesses that report token usage."""

NATIVE_HARNESS: Mapping[str, str] = {
    "anthropic": "claude",
    "openai": "codex",
    "google": "gemini",
    "cursor": "cursor",
    "xai": "grok",
}
"""The vendor's own CLI harness per provider (default `supported`/`preferred` of overrides)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pricing:
    """USD per million tokens (standard, cache-miss input rate)."""

    input_per_mtok: float
    """Input rate, USD per 1M tokens."""
    output_per_mtok: float
    """Output rate, USD per 1M tokens."""

    def to_json(self) -> dict[str, float]:
        """The results-header `pricing` object, in field order."""
        return {"input_per_mtok": self.input_per_mtok, "output_per_mtok": self.output_per_mtok}


@dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
    """A model vendor."""

    id: str
    """Provider id, e.g. `anthropic`."""
    display: str
    """Display name, e.g. `Anthropic`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Model:
    """One catalog model."""

    provider: str
    """Provider id (results header `provider`)."""
    id: str
    """Bare model id (results header `model`), e.g. `claude-sonnet-4-6`."""
    display: str
    """Display name (results header `display`)."""
    pricing: Pricing | None
    """Published price, or None (written as `pricing: null`)."""
    supported: tuple[tuple[str, str], ...]
    """Harness id → the model id that harness's CLI expects, in declaration order."""
    preferred: str
    """Harness used when eligible."""
    key: str = ""
    """Canonical id and results key (`provider/model`); derived when left empty."""

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", f"{self.provider}/{self.id}")

    def supports(self, harness: str) -> bool:
        """Whether `harness` can run this model."""
        return any(h == harness for h, _ in self.supported)

    def cli_id(self, harness: str) -> str | None:
        """The model id to pass to `harness`'s CLI, or None when unsupported."""
        for h, cli in self.supported:
            if h == harness:
                return cli
        return None

    def matched_by(self, token: str) -> bool:
        """evolve's `MatchedBy`: `all`, the provider id, the canonical id or the bare id."""
        t = token.strip()
        return t in ("all", self.provider, self.key, self.id)


PROVIDERS: tuple[Provider, ...] = (
    Provider(id="anthropic", display="Anthropic"),
    Provider(id="openai", display="OpenAI"),
    Provider(id="google", display="Google"),
    Provider(id="cursor", display="Cursor"),
    Provider(id="xai", display="xAI"),
)
"""Built-in providers in display order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """An ordered set of models (built-ins, possibly with provider overrides)."""

    models: tuple[Model, ...]
    """Models in catalog order."""
    providers: tuple[Provider, ...] = PROVIDERS
    """Known providers in display order."""
    _by_key: dict[str, Model] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for m in self.models:
            self._by_key.setdefault(m.key, m)

    def get(self, key: str) -> Model | None:
        """The model with canonical id `key`, or None."""
        return self._by_key.get(key)

    def lookup(self, ident: str) -> Model | None:
        """The first model whose canonical or bare id is `ident` (e.g. a `judge_model` value)."""
        ident = ident.strip()
        m = self._by_key.get(ident)
        if m is not None:
            return m
        return next((m for m in self.models if m.id == ident), None)

    def match(self, tokens: Iterable[str]) -> list[Model]:
        """Models matched by any token, in token order then catalog order, de-duplicated.

        Empty tokens are ignored; no tokens (or any `all`) means every model.
        """
        toks = [t.strip() for t in tokens if t.strip()]
        if not toks or "all" in toks:
            return list(self.models)
        out: list[Model] = []
        seen: set[str] = set()
        for t in toks:
            for m in self.models:
                if m.matched_by(t) and m.key not in seen:
                    seen.add(m.key)
                    out.append(m)
        return out

    def provider_display(self, provider_id: str) -> str:
        """The provider's display name, or the raw id when unknown."""
        return next((p.display for p in self.providers if p.id == provider_id), provider_id)


def _m(
    key: str,
    display: str,
    price: tuple[float, float] | None,
    supported: Sequence[tuple[str, str]],
    preferred: str,
) -> Model:
    provider, _, bare = key.partition("/")
    return Model(
        provider=provider,
        id=bare,
        display=display,
        pricing=Pricing(input_per_mtok=float(price[0]), output_per_mtok=float(price[1]))
        if price
        else None,
        supported=tuple(supported),
        preferred=preferred,
    )


def _same(bare: str, *harnesses: str) -> list[tuple[str, str]]:
    return [(h, bare) for h in harnesses]


BUILTIN_CATALOG = Catalog(
    models=(
        _m(
            "anthropic/claude-haiku-4-5",
            "Claude Haiku 4.5",
            (1, 5),
            [("claude", "claude-haiku-4-5"), ("copilot", "claude-haiku-4.5")],
            "claude",
        ),
        _m(
            "anthropic/claude-sonnet-4-6",
            "Claude Sonnet 4.6",
            (3, 15),
            [("claude", "claude-sonnet-4-6"), ("copilot", "claude-sonnet-4.6")],
            "claude",
        ),
        _m(
            "anthropic/claude-sonnet-5",
            "Claude Sonnet 5",
            (3, 15),
            _same("claude-sonnet-5", "claude", "copilot"),
            "claude",
        ),
        _m(
            "anthropic/claude-opus-4-8",
            "Claude Opus 4.8",
            (5, 25),
            [("claude", "claude-opus-4-8"), ("copilot", "claude-opus-4.8")],
            "claude",
        ),
        _m(
            "anthropic/claude-opus-5",
            "Claude Opus 5",
            (5, 25),
            _same("claude-opus-5", "claude", "copilot"),
            "claude",
        ),
        _m(
            "anthropic/claude-fable-5",
            "Claude Fable 5",
            (10, 50),
            _same("claude-fable-5", "claude", "copilot"),
            "claude",
        ),
        _m(
            "openai/gpt-5.6-sol",
            "GPT-5.6 Sol",
            (5, 30),
            _same("gpt-5.6-sol", "codex", "copilot"),
            "codex",
        ),
        _m(
            "openai/gpt-5.6-terra",
            "GPT-5.6 Terra",
            (2.5, 15),
            _same("gpt-5.6-terra", "codex", "copilot"),
            "codex",
        ),
        _m(
            "openai/gpt-5.6-luna",
            "GPT-5.6 Luna",
            (1, 6),
            _same("gpt-5.6-luna", "codex", "copilot"),
            "codex",
        ),
        _m(
            "openai/gpt-5.3-codex-spark",
            "GPT-5.3 Codex Spark",
            None,
            _same("gpt-5.3-codex-spark", "codex"),
            "codex",
        ),
        _m(
            "openai/gpt-5.4-mini",
            "GPT-5.4 Mini",
            (0.75, 4.5),
            _same("gpt-5.4-mini", "codex", "copilot"),
            "codex",
        ),
        _m("openai/gpt-5.4", "GPT-5.4", (2.5, 15), _same("gpt-5.4", "codex", "copilot"), "codex"),
        _m("openai/gpt-5.5", "GPT-5.5", (5, 30), _same("gpt-5.5", "codex", "copilot"), "codex"),
        _m(
            "openai/gpt-5.3-codex",
            "GPT-5.3 Codex",
            None,
            _same("gpt-5.3-codex", "copilot"),
            "copilot",
        ),
        _m(
            "google/gemini-3.1-flash-lite",
            "Gemini 3.1 Flash-Lite",
            (0.25, 1.5),
            _same("gemini-3.1-flash-lite", "gemini"),
            "gemini",
        ),
        _m(
            "google/gemini-3-flash-preview",
            "Gemini 3 Flash (preview)",
            (0.5, 3),
            _same("gemini-3-flash-preview", "gemini"),
            "gemini",
        ),
        _m(
            "google/gemini-3.5-flash",
            "Gemini 3.5 Flash",
            (1.5, 9),
            _same("gemini-3.5-flash", "gemini", "antigravity", "copilot"),
            "gemini",
        ),
        _m(
            "google/gemini-3.1-pro-preview",
            "Gemini 3.1 Pro (preview)",
            (2, 12),
            _same("gemini-3.1-pro-preview", "gemini"),
            "gemini",
        ),
        _m(
            "google/gemini-3.1-pro",
            "Gemini 3.1 Pro",
            None,
            _same("gemini-3.1-pro", "antigravity", "copilot"),
            "antigravity",
        ),
        _m(
            "cursor/composer-2.5",
            "Cursor Composer 2.5",
            None,
            [("cursor", "composer-2.5"), ("grok", "grok-composer-2.5-fast")],
            "cursor",
        ),
        _m("xai/grok-4.5", "Grok 4.5", (2, 6), _same("grok-4.5", "grok"), "grok"),
        _m("xai/grok-4.6", "Grok 4.6", (2, 6), _same("grok-4.6", "grok"), "grok"),
    )
)
"""evolve 0.7.0's built-in catalog (report spec §6.2), in catalog order."""


# ---------------------------------------------------------------------------------------------
# Provider overrides (config `providers.<id>.models`)


def build_catalog(providers: Mapping[str, Any] | None = None) -> Catalog:
    """The built-in catalog with config `providers.<id>.models` overrides applied.

    A known provider's override list replaces its built-in models, and overridden providers move
    after the remaining built-ins (in provider order). Unknown provider ids are ignored, as in
    evolve; a provider entry without `models` changes nothing. Raises `ConfigError` with evolve's
    messages for malformed entries.
    """
    if not providers:
        return BUILTIN_CATALOG
    if not isinstance(providers, Mapping):
        raise ConfigError("config providers: expected an object")
    overridden: dict[str, list[Model]] = {}
    for p in PROVIDERS:
        if p.id not in providers:
            continue
        raw = providers[p.id]
        prefix = f"config providers.{p.id}"
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{prefix}: expected an object")
        if "models" not in raw or raw["models"] is None:
            continue
        models = raw["models"]
        if not isinstance(models, list):
            raise ConfigError(f"{prefix}.models: expected an array")
        overridden[p.id] = [
            _override_model(p.id, item, f"{prefix}.models[{i}]") for i, item in enumerate(models)
        ]
    if not overridden:
        return BUILTIN_CATALOG
    kept = [m for m in BUILTIN_CATALOG.models if m.provider not in overridden]
    for p in PROVIDERS:
        kept.extend(overridden.get(p.id, ()))
    return Catalog(models=tuple(kept))


def _override_model(provider: str, item: Any, where: str) -> Model:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: expected an object")
    ident = item.get("id")
    if ident is None or (isinstance(ident, str) and not ident.strip()):
        raise ConfigError(f"{where}: missing id")
    if not isinstance(ident, str):
        raise ConfigError(f"{where}.id: expected a string")
    ident = ident.strip()
    key = ident if "/" in ident else f"{provider}/{ident}"
    bare = key.split("/", 1)[1]
    display = _opt_str(item, "name", where) or _opt_str(item, "display", where) or bare
    pin = _opt_num(item, "input_per_mtok", where)
    pout = _opt_num(item, "output_per_mtok", where)
    pricing = (
        None
        if pin is None and pout is None
        else Pricing(input_per_mtok=pin or 0, output_per_mtok=pout or 0)
    )
    native = NATIVE_HARNESS[provider]
    sup_raw = item.get("supported")
    supported: list[tuple[str, str]]
    if sup_raw is None or (isinstance(sup_raw, Mapping) and not sup_raw):
        supported = [(native, bare)]
    elif isinstance(sup_raw, Mapping):
        supported = []
        for h, cli in sup_raw.items():
            if not isinstance(cli, str):
                raise ConfigError(f"{where}.supported.{h}: expected a string")
            supported.append((str(h), cli.strip() or bare))
        # A map has no order of its own; keep the harness preference order for determinism.
        rank = {h: i for i, h in enumerate(HARNESSES)}
        supported.sort(key=lambda hc: (rank.get(hc[0], len(rank)), hc[0]))
    else:
        raise ConfigError(f"{where}.supported: expected an object")
    preferred = _opt_str(item, "preferred", where)
    if not preferred:
        hs = [h for h, _ in supported]
        preferred = native if native in hs else hs[0]
    return Model(
        provider=provider,
        id=bare,
        key=key,
        display=display,
        pricing=pricing,
        supported=tuple(supported),
        preferred=preferred,
    )


def _opt_str(item: Mapping[str, Any], name: str, where: str) -> str:
    v = item.get(name)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise ConfigError(f"{where}.{name}: expected a string")
    return v.strip()


def _opt_num(item: Mapping[str, Any], name: str, where: str) -> float | None:
    v = item.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ConfigError(f"{where}.{name}: expected a number")
    return v


# ---------------------------------------------------------------------------------------------
# Selection


def split_tokens(values: str | Iterable[str] | None) -> list[str]:
    """Split comma-separated token values (one string or several), trim them, drop empties."""
    if values is None:
        return []
    items = [values] if isinstance(values, str) else list(values)
    return [t.strip() for v in items for t in v.split(",") if t.strip()]


def model_matches(model: Model, tokens: Iterable[str]) -> bool:
    """The eval-set `models` restriction (engine spec §4.4) for a catalog model.

    No tokens means unrestricted, else any trimmed token matches (`specs.model_allowed`).
    """
    return model_allowed(tuple(tokens), provider=model.provider, model=model.id)


def check_config_harnesses(harnesses: Iterable[str]) -> list[str]:
    """Validate config `harnesses`; `ConfigError('config harnesses: unknown harness "<id>"')`."""
    out = split_tokens(harnesses)
    for h in out:
        if h not in HARNESSES:
            raise ConfigError(f'config harnesses: unknown harness "{h}"')
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundModel:
    """A selected model bound to the harness that will run it."""

    model: Model
    """The catalog model."""
    harness: str
    """Harness id chosen for it."""
    cli_model: str
    """The model id passed to that harness's CLI."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSelection:
    """The outcome of model selection (which models run, on which harness)."""

    models: tuple[BoundModel, ...]
    """Models that will run, in selection order."""
    dropped: tuple[Model, ...] = ()
    """Selected models without an eligible harness (they do not run)."""
    warnings: tuple[str, ...] = ()
    """User-facing warnings (without a `WARN:` prefix), e.g. for dropped models."""
    universe: tuple[Model, ...] = ()
    """The catalog restricted to config `models` (what reports may show)."""


def resolve_models(
    catalog: Catalog,
    *,
    model_flags: Iterable[str] = (),
    config_models: Iterable[str] | None = None,
    config_harnesses: Iterable[str] | None = None,
    harness_flags: Iterable[str] = (),
    available: Collection[str] = HARNESSES,
    tier: Literal["triggers", "evals"] | None = None,
) -> ModelSelection:
    """Select and bind models as evolve does (engine spec §12.1, report spec §6.3).

    Args:
        catalog: the catalog (after `build_catalog`).
        model_flags: `--model` values (each may hold comma-separated tokens).
        config_models: config `models` tokens, or None when unset.
        config_harnesses: config `harnesses`, or None when unset (= all built-ins).
        harness_flags: `--harness` values (comma-separated tokens allowed).
        available: harness ids usable on this machine (e.g. CLIs found on PATH).
        tier: when `"evals"`, only harnesses that can run evals are eligible.

    Raises:
        UsageError: an unknown `--model` token or `--harness` value, or one outside the config.
        ConfigError: an unknown harness in config `harnesses`.
    """
    cfg_models = split_tokens(config_models) if config_models is not None else []
    configured = bool(cfg_models)
    universe = catalog.match(cfg_models)

    cfg_h = check_config_harnesses(config_harnesses) if config_harnesses is not None else []
    allowed = [h for h in HARNESSES if not cfg_h or h in cfg_h]
    flag_h = split_tokens(harness_flags)
    for h in flag_h:
        if h not in HARNESSES:
            raise UsageError(f'--harness "{h}" is not a known harness')
        if cfg_h and h not in cfg_h:
            raise UsageError(f'--harness "{h}" is not in configured harnesses {go_str_list(cfg_h)}')
    eligible = [
        h
        for h in allowed
        if h in available
        and (not flag_h or h in flag_h)
        and (tier != "evals" or h in EVAL_HARNESSES)
    ]

    flag_tokens = split_tokens(model_flags)
    for t in flag_tokens:
        if t == "all":
            continue
        if not any(m.matched_by(t) for m in catalog.models):
            names = [n for m in catalog.models for n in (m.key, m.id, m.key.split("/", 1)[0])]
            raise UsageError(
                f'unknown provider or model in --model: "{t}"',
                hint=did_you_mean(t, names)
                or f"models: {', '.join(m.key for m in catalog.models)}",
            )
        if configured and not any(m.matched_by(t) for m in universe):
            raise UsageError(f'--model "{t}" is not in configured models {go_str_list(cfg_models)}')
    tokens = flag_tokens or cfg_models or ["all"]
    selected = [m for m in Catalog(models=tuple(universe)).match(tokens)]

    bound: list[BoundModel] = []
    dropped: list[Model] = []
    warnings: list[str] = []
    for m in selected:
        harness = _bind(m, eligible)
        if harness is None:
            dropped.append(m)
            if configured:
                by = ", ".join(h for h, _ in m.supported)
                warnings.append(
                    f"model {m.key} has no available harness (supported by {by}); it will not run"
                )
            continue
        bound.append(BoundModel(model=m, harness=harness, cli_model=m.cli_id(harness) or m.id))
    return ModelSelection(
        models=tuple(bound),
        dropped=tuple(dropped),
        warnings=tuple(warnings),
        universe=tuple(universe),
    )


def _bind(model: Model, eligible: Sequence[str]) -> str | None:
    if model.preferred in eligible and model.supports(model.preferred):
        return model.preferred
    return next((h for h in eligible if model.supports(h)), None)


# ---------------------------------------------------------------------------------------------
# Pricing


def estimate_cost_usd(pricing: Pricing | None, input_tokens: int) -> float | None:
    """Estimate `input_cost_usd` = Round6(tokens/1e6 × input rate); None when unpriced."""
    if pricing is None:
        return None
    return round6(input_tokens / 1e6 * pricing.input_per_mtok)


def measured_cost_usd(
    pricing: Pricing | None,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    reported_usd: float | None = None,
) -> float | None:
    """`measured.cost_usd`: the harness-reported cost, else priced from usage; Round6; None if neither."""
    if reported_usd is not None:
        return round6(reported_usd)
    if pricing is None:
        return None
    prompt = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
    return round6(
        prompt / 1e6 * pricing.input_per_mtok + output_tokens / 1e6 * pricing.output_per_mtok
    )
