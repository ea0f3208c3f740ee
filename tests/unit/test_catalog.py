"""The model catalog, provider overrides, model selection and pricing (report spec §6, engine §12.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evolve_action.catalog import (
    BUILTIN_CATALOG,
    HARNESSES,
    PROVIDERS,
    Catalog,
    Model,
    Pricing,
    build_catalog,
    check_config_harnesses,
    estimate_cost_usd,
    measured_cost_usd,
    model_matches,
    resolve_models,
    split_tokens,
)
from evolve_action.errors import ConfigError, UsageError

ANTHROPIC = [
    "anthropic/claude-haiku-4-5",
    "anthropic/claude-sonnet-4-6",
    "anthropic/claude-sonnet-5",
    "anthropic/claude-opus-4-8",
    "anthropic/claude-opus-5",
    "anthropic/claude-fable-5",
]


def keys(models: Any) -> list[str]:
    return [getattr(m, "model", m).key for m in models]


# ------------------------------------------------------------------------------------------
# Built-in catalog


def test_providers_in_display_order() -> None:
    assert [(p.id, p.display) for p in PROVIDERS] == [
        ("anthropic", "Anthropic"),
        ("openai", "OpenAI"),
        ("google", "Google"),
        ("cursor", "Cursor"),
        ("xai", "xAI"),
    ]
    assert BUILTIN_CATALOG.provider_display("xai") == "xAI"
    assert BUILTIN_CATALOG.provider_display("acme") == "acme"


def test_catalog_order_and_size() -> None:
    assert len(BUILTIN_CATALOG.models) == 22
    assert keys(BUILTIN_CATALOG.models)[:6] == ANTHROPIC
    assert keys(BUILTIN_CATALOG.models)[-2:] == ["xai/grok-4.5", "xai/grok-4.6"]
    providers = [m.provider for m in BUILTIN_CATALOG.models]
    assert providers == sorted(providers, key=[p.id for p in PROVIDERS].index)


@pytest.mark.parametrize(
    ("key", "display", "pricing", "supported", "preferred"),
    [
        (
            "anthropic/claude-haiku-4-5",
            "Claude Haiku 4.5",
            (1, 5),
            {"claude": "claude-haiku-4-5", "copilot": "claude-haiku-4.5"},
            "claude",
        ),
        (
            "anthropic/claude-sonnet-4-6",
            "Claude Sonnet 4.6",
            (3, 15),
            {"claude": "claude-sonnet-4-6", "copilot": "claude-sonnet-4.6"},
            "claude",
        ),
        (
            "anthropic/claude-sonnet-5",
            "Claude Sonnet 5",
            (3, 15),
            {"claude": "claude-sonnet-5", "copilot": "claude-sonnet-5"},
            "claude",
        ),
        (
            "anthropic/claude-opus-4-8",
            "Claude Opus 4.8",
            (5, 25),
            {"claude": "claude-opus-4-8", "copilot": "claude-opus-4.8"},
            "claude",
        ),
        (
            "anthropic/claude-fable-5",
            "Claude Fable 5",
            (10, 50),
            {"claude": "claude-fable-5", "copilot": "claude-fable-5"},
            "claude",
        ),
        (
            "openai/gpt-5.6-terra",
            "GPT-5.6 Terra",
            (2.5, 15),
            {"codex": "gpt-5.6-terra", "copilot": "gpt-5.6-terra"},
            "codex",
        ),
        (
            "openai/gpt-5.3-codex-spark",
            "GPT-5.3 Codex Spark",
            None,
            {"codex": "gpt-5.3-codex-spark"},
            "codex",
        ),
        ("openai/gpt-5.4-mini", "GPT-5.4 Mini", (0.75, 4.5), None, "codex"),
        ("openai/gpt-5.3-codex", "GPT-5.3 Codex", None, {"copilot": "gpt-5.3-codex"}, "copilot"),
        ("google/gemini-3.1-flash-lite", "Gemini 3.1 Flash-Lite", (0.25, 1.5), None, "gemini"),
        ("google/gemini-3-flash-preview", "Gemini 3 Flash (preview)", (0.5, 3), None, "gemini"),
        (
            "google/gemini-3.5-flash",
            "Gemini 3.5 Flash",
            (1.5, 9),
            {
                "gemini": "gemini-3.5-flash",
                "antigravity": "gemini-3.5-flash",
                "copilot": "gemini-3.5-flash",
            },
            "gemini",
        ),
        ("google/gemini-3.1-pro-preview", "Gemini 3.1 Pro (preview)", (2, 12), None, "gemini"),
        ("google/gemini-3.1-pro", "Gemini 3.1 Pro", None, None, "antigravity"),
        (
            "cursor/composer-2.5",
            "Cursor Composer 2.5",
            None,
            {"cursor": "composer-2.5", "grok": "grok-composer-2.5-fast"},
            "cursor",
        ),
        ("xai/grok-4.6", "Grok 4.6", (2, 6), {"grok": "grok-4.6"}, "grok"),
    ],
)
def test_builtin_models(
    key: str,
    display: str,
    pricing: tuple[float, float] | None,
    supported: dict[str, str] | None,
    preferred: str,
) -> None:
    m = BUILTIN_CATALOG.get(key)
    assert m is not None
    assert m.display == display
    assert m.key == key == f"{m.provider}/{m.id}"
    if pricing is None:
        assert m.pricing is None
    else:
        assert m.pricing == Pricing(input_per_mtok=pricing[0], output_per_mtok=pricing[1])
    if supported is not None:
        assert dict(m.supported) == supported
    assert m.preferred == preferred
    assert m.supports(preferred)


def test_pricing_json_is_struct_ordered() -> None:
    p = BUILTIN_CATALOG.get("openai/gpt-5.4-mini")
    assert p is not None and p.pricing is not None
    assert p.pricing.to_json() == {"input_per_mtok": 0.75, "output_per_mtok": 4.5}
    assert list(p.pricing.to_json()) == ["input_per_mtok", "output_per_mtok"]


def test_lookup_by_canonical_or_bare_id() -> None:
    assert BUILTIN_CATALOG.lookup("claude-sonnet-5") is BUILTIN_CATALOG.get(
        "anthropic/claude-sonnet-5"
    )
    assert BUILTIN_CATALOG.lookup(" anthropic/claude-sonnet-5 ") is not None
    assert BUILTIN_CATALOG.lookup("nope") is None
    m = BUILTIN_CATALOG.get("anthropic/claude-haiku-4-5")
    assert m is not None
    assert m.cli_id("copilot") == "claude-haiku-4.5"
    assert m.cli_id("codex") is None


# ------------------------------------------------------------------------------------------
# Token matching


@pytest.mark.parametrize(
    ("tokens", "want"),
    [
        ([], "ALL"),
        (["all"], "ALL"),
        (["", "  "], "ALL"),
        (["anthropic", "all"], "ALL"),
        (["xai"], ["xai/grok-4.5", "xai/grok-4.6"]),
        (["gpt-5.4"], ["openai/gpt-5.4"]),
        (["openai/gpt-5.4"], ["openai/gpt-5.4"]),
        ([" grok-4.6 ", "xai"], ["xai/grok-4.6", "xai/grok-4.5"]),  # token order, then catalog
        (["claude-opus-5", "anthropic"], ["anthropic/claude-opus-5", *ANTHROPIC[:4], ANTHROPIC[5]]),
        (["nope"], []),
    ],
)
def test_catalog_match(tokens: list[str], want: Any) -> None:
    got = keys(BUILTIN_CATALOG.match(tokens))
    assert got == (keys(BUILTIN_CATALOG.models) if want == "ALL" else want)


@pytest.mark.parametrize(
    ("tokens", "want"),
    [
        ([], True),
        (["all"], True),
        (["anthropic"], True),
        (["claude-sonnet-5"], True),
        (["anthropic/claude-sonnet-5"], True),
        ([" claude-sonnet-5 "], True),
        (["openai"], False),
        (["claude-sonnet"], False),
    ],
)
def test_model_matches(tokens: list[str], want: bool) -> None:
    m = BUILTIN_CATALOG.get("anthropic/claude-sonnet-5")
    assert m is not None
    assert model_matches(m, tokens) is want


@pytest.mark.parametrize(
    ("values", "want"),
    [
        (None, []),
        ("a, b,,c ", ["a", "b", "c"]),
        (["a,b", " c "], ["a", "b", "c"]),
        ((), []),
    ],
)
def test_split_tokens(values: Any, want: list[str]) -> None:
    assert split_tokens(values) == want


# ------------------------------------------------------------------------------------------
# Selection and harness binding


def test_default_selection_binds_claude_models_only() -> None:
    sel = resolve_models(BUILTIN_CATALOG, available={"claude"})
    assert keys(sel.models) == ANTHROPIC
    assert {b.harness for b in sel.models} == {"claude"}
    assert sel.models[0].cli_model == "claude-haiku-4-5"
    assert len(sel.dropped) == 16
    assert sel.warnings == ()  # no `models` configured: dropped silently


def test_config_models_warn_for_models_without_harness() -> None:
    sel = resolve_models(
        BUILTIN_CATALOG,
        config_models=["claude-sonnet-4-6", "openai/gpt-5.3-codex"],
        available={"claude"},
    )
    assert keys(sel.models) == ["anthropic/claude-sonnet-4-6"]
    assert keys(sel.universe) == ["anthropic/claude-sonnet-4-6", "openai/gpt-5.3-codex"]
    assert sel.warnings == (
        "model openai/gpt-5.3-codex has no available harness (supported by copilot); it will not run",
    )


def test_model_flags_override_config_models() -> None:
    sel = resolve_models(
        BUILTIN_CATALOG,
        model_flags=["claude-opus-5,claude-haiku-4-5"],
        config_models=["anthropic"],
        available={"claude"},
    )
    assert keys(sel.models) == ["anthropic/claude-opus-5", "anthropic/claude-haiku-4-5"]


def test_model_flag_all_means_the_configured_universe() -> None:
    sel = resolve_models(
        BUILTIN_CATALOG, model_flags=["all"], config_models=["claude-sonnet-5"], available=HARNESSES
    )
    assert keys(sel.models) == ["anthropic/claude-sonnet-5"]


def test_falls_back_to_first_eligible_supporting_harness() -> None:
    sel = resolve_models(BUILTIN_CATALOG, model_flags=["claude-haiku-4-5"], available={"copilot"})
    assert [(b.harness, b.cli_model) for b in sel.models] == [("copilot", "claude-haiku-4.5")]
    sel = resolve_models(
        BUILTIN_CATALOG,
        model_flags=["composer-2.5"],
        available={"grok", "cursor"},
        harness_flags=["grok"],
    )
    assert [(b.harness, b.cli_model) for b in sel.models] == [("grok", "grok-composer-2.5-fast")]


def test_evals_tier_excludes_gemini() -> None:
    sel = resolve_models(BUILTIN_CATALOG, model_flags=["google"], available=HARNESSES, tier="evals")
    assert [(b.model.id, b.harness) for b in sel.models] == [
        ("gemini-3.5-flash", "copilot"),  # fixed order: ... cursor, copilot, antigravity
        ("gemini-3.1-pro", "antigravity"),  # preferred and eligible
    ]
    trig = resolve_models(
        BUILTIN_CATALOG, model_flags=["google"], available=HARNESSES, tier="triggers"
    )
    assert len(trig.models) == 5


def test_config_harnesses_restrict_eligibility() -> None:
    sel = resolve_models(
        BUILTIN_CATALOG,
        model_flags=["anthropic"],
        config_harnesses=["copilot"],
        available=HARNESSES,
    )
    assert {b.harness for b in sel.models} == {"copilot"}


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        ({"model_flags": ["nope"]}, UsageError, 'unknown provider or model in --model: "nope"'),
        (
            {"model_flags": ["anthropic,gpt-9"]},
            UsageError,
            'unknown provider or model in --model: "gpt-9"',
        ),
        (
            {"model_flags": ["openai"], "config_models": ["anthropic", "xai/grok-4.6"]},
            UsageError,
            '--model "openai" is not in configured models [anthropic xai/grok-4.6]',
        ),
        ({"harness_flags": ["vim"]}, UsageError, '--harness "vim" is not a known harness'),
        (
            {"harness_flags": ["codex"], "config_harnesses": ["claude", "copilot"]},
            UsageError,
            '--harness "codex" is not in configured harnesses [claude copilot]',
        ),
        ({"config_harnesses": ["emacs"]}, ConfigError, 'config harnesses: unknown harness "emacs"'),
    ],
)
def test_selection_errors(kwargs: dict[str, Any], exc: type[Exception], message: str) -> None:
    with pytest.raises(exc) as info:
        resolve_models(BUILTIN_CATALOG, available=HARNESSES, **kwargs)
    assert getattr(info.value, "message", str(info.value)) == message


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("claude-sonet-5", 'did you mean "claude-sonnet-5"?'),
        ("anthropc", 'did you mean "anthropic"?'),
        ("nope", "models: anthropic/"),
    ],
)
def test_unknown_model_suggests_the_closest(typed: str, hint: str) -> None:
    with pytest.raises(UsageError) as info:
        resolve_models(BUILTIN_CATALOG, available=HARNESSES, model_flags=[typed])
    assert (info.value.hint or "").startswith(hint)


def test_check_config_harnesses() -> None:
    assert check_config_harnesses(["claude", " codex "]) == ["claude", "codex"]


# ------------------------------------------------------------------------------------------
# Provider overrides


def test_override_replaces_provider_and_moves_it_last() -> None:
    cat = build_catalog(
        {
            "anthropic": {
                "models": [
                    {"id": "my-model", "input_per_mtok": 2, "output_per_mtok": 8.5},
                    {"id": "acme/other", "name": "Other", "supported": {"copilot": "other-1"}},
                    {"id": "x", "display": "Shown X", "supported": {"copilot": "", "claude": "cx"}},
                ]
            },
            "mistral": {"models": [{"id": "ignored"}]},  # unknown provider ids are ignored
            "google": {"other": 1},  # no models key: nothing changes
        }
    )
    ks = keys(cat.models)
    assert "anthropic/claude-sonnet-5" not in ks
    assert ks[-3:] == ["anthropic/my-model", "acme/other", "anthropic/x"]
    assert ks[:2] == ["openai/gpt-5.6-sol", "openai/gpt-5.6-terra"]
    mine = cat.get("anthropic/my-model")
    assert mine == Model(
        provider="anthropic",
        id="my-model",
        display="my-model",
        pricing=Pricing(input_per_mtok=2, output_per_mtok=8.5),
        supported=(("claude", "my-model"),),
        preferred="claude",
    )
    other = cat.get("acme/other")
    assert other is not None
    assert (other.provider, other.id, other.display, other.pricing) == (
        "anthropic",
        "other",
        "Other",
        None,
    )
    assert other.supported == (("copilot", "other-1"),)
    assert other.preferred == "copilot"  # native harness unsupported: first supported
    x = cat.get("anthropic/x")
    assert x is not None
    assert x.display == "Shown X"
    assert x.supported == (("claude", "cx"), ("copilot", "x"))
    assert x.preferred == "claude"


def test_override_order_follows_provider_order() -> None:
    cat = build_catalog({"xai": {"models": [{"id": "g"}]}, "openai": {"models": [{"id": "o"}]}})
    assert keys(cat.models)[-2:] == ["openai/o", "xai/g"]
    assert cat.get("xai/g") is not None
    assert dict(cat.get("xai/g").supported) == {"grok": "g"}  # type: ignore[union-attr]


def test_no_overrides_is_the_builtin_catalog() -> None:
    assert build_catalog(None) is BUILTIN_CATALOG
    assert build_catalog({}) is BUILTIN_CATALOG
    assert build_catalog({"acme": {"models": []}}) is BUILTIN_CATALOG


def test_override_selected_through_resolution() -> None:
    cat = build_catalog({"anthropic": {"models": [{"id": "local-model"}]}})
    sel = resolve_models(cat, model_flags=["local-model"], available={"claude"})
    assert [(b.model.key, b.harness, b.cli_model) for b in sel.models] == [
        ("anthropic/local-model", "claude", "local-model")
    ]


@pytest.mark.parametrize(
    ("providers", "message"),
    [
        ({"anthropic": []}, "config providers.anthropic: expected an object"),
        ({"openai": {"models": {"id": "x"}}}, "config providers.openai.models: expected an array"),
        ({"google": {"models": ["x"]}}, "config providers.google.models[0]: expected an object"),
        (
            {"xai": {"models": [{"id": "a"}, {"name": "n"}]}},
            "config providers.xai.models[1]: missing id",
        ),
        ({"xai": {"models": [{"id": ""}]}}, "config providers.xai.models[0]: missing id"),
        ({"xai": {"models": [{"id": 3}]}}, "config providers.xai.models[0].id: expected a string"),
        (
            {"cursor": {"models": [{"id": "c", "input_per_mtok": "3"}]}},
            "config providers.cursor.models[0].input_per_mtok: expected a number",
        ),
        (
            {"cursor": {"models": [{"id": "c", "supported": ["cursor"]}]}},
            "config providers.cursor.models[0].supported: expected an object",
        ),
    ],
)
def test_override_errors(providers: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_catalog(providers)
    assert info.value.message == message


def test_catalog_is_immutable() -> None:
    with pytest.raises(AttributeError):
        BUILTIN_CATALOG.models[0].display = "x"  # type: ignore[misc]
    assert isinstance(Catalog(models=()).match([]), list)


# ------------------------------------------------------------------------------------------
# Pricing


@pytest.mark.parametrize(
    ("pricing", "tokens", "want"),
    [
        ((3, 15), 1234, 0.003702),
        ((1, 5), 1, 0.000001),
        ((0.25, 1.5), 1, 0.0),  # 2.5e-7 rounds to 0 at 6 places
        ((0.75, 4.5), 2, 0.000002),  # 1.5e-6 rounds half away from zero
        ((2.5, 15), 1000000, 2.5),
        (None, 1234, None),
    ],
)
def test_estimate_cost_usd(
    pricing: tuple[float, float] | None, tokens: int, want: float | None
) -> None:
    p = Pricing(input_per_mtok=pricing[0], output_per_mtok=pricing[1]) if pricing else None
    assert estimate_cost_usd(p, tokens) == want


def test_measured_cost_usd() -> None:
    p = Pricing(input_per_mtok=3, output_per_mtok=15)
    assert measured_cost_usd(p, reported_usd=0.12345649) == 0.123456
    assert measured_cost_usd(None, reported_usd=0.5) == 0.5
    assert measured_cost_usd(None, input_tokens=10) is None
    got = measured_cost_usd(
        p,
        input_tokens=1000,
        cache_read_input_tokens=2000,
        cache_creation_input_tokens=500,
        output_tokens=300,
    )
    assert got == 0.015  # (3500 × 3 + 300 × 15) / 1e6


def test_corpus_estimates_reproduce(corpus: Path) -> None:
    """Every stored `estimate.input_cost_usd` equals our formula on the stored header pricing."""
    from evolve_action.encoding import decode_path

    checked = 0
    for path in sorted(corpus.glob("plugins/*/evals/*/results.json")):
        doc = decode_path(path)
        for key, tiers in doc["models"].items():
            for entry in tiers.values():
                stored = entry.get("pricing")
                pricing = Pricing(**stored) if stored else None
                builtin = BUILTIN_CATALOG.get(key)
                if builtin is not None:
                    assert builtin.display == entry["display"]
                    assert (builtin.pricing.to_json() if builtin.pricing else None) == stored
                for r in entry.get("results", []):
                    est = r.get("estimate") or {}
                    if "input_cost_usd" in est:
                        assert (
                            estimate_cost_usd(pricing, est["input_tokens"]) == est["input_cost_usd"]
                        )
                        checked += 1
    assert checked > 100
