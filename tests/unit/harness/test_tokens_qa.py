"""QA: an unwritable token cache is a warning, never an error that fails (or masks) a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.harness import TokenCounter


@pytest.mark.parametrize("case", ["parent-is-file", "target-is-dir"])
def test_unwritable_cache_warns_and_keeps_going(tmp_path: Path, case: str) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "token-counts.json"
    if case == "target-is-dir":
        path = tmp_path / "dir"
        path.mkdir()
        (path / "keep").write_text("k")
    counter = TokenCounter({}, cache_path=path)
    counter._cache = {"a": 1}
    counter._dirty = True
    counter.save()
    counter.save()
    assert len(counter.warnings) == 1
    assert counter.warnings[0].startswith(f"token cache {path} not saved: ")
    assert (tmp_path / "file").read_text() == "x"
    if case == "target-is-dir":
        assert (path / "keep").read_text() == "k"


class _Fake:
    def __init__(self, tokens: int | None) -> None:
        self.tokens = tokens
        self.seen: list[tuple[str, str, str]] = []

    async def count(self, provider: str, model: str, payload: str) -> int | None:
        self.seen.append((provider, model, payload))
        return self.tokens


@pytest.mark.parametrize("tokens", [1000, None])
def test_estimate_is_shared_by_both_tiers(tokens: int | None) -> None:
    import asyncio

    from evolve_action.catalog import build_catalog, estimate_cost_usd, resolve_models
    from evolve_action.harness import estimate

    model = resolve_models(
        build_catalog(), model_flags=["claude-sonnet-4-6"], available={"claude"}
    ).models[0]
    fake = _Fake(tokens)
    got = asyncio.run(estimate(fake, model, b"---\nname: a\n---\n", "q"))
    assert fake.seen == [("anthropic", "claude-sonnet-4-6", "---\nname: a\n---\n\n\nq")]
    if tokens is None:
        assert got is None
    else:
        assert got is not None and got.input_tokens == tokens
        assert got.input_cost_usd == estimate_cost_usd(model.model.pricing, tokens)
