"""Unit tests of token estimates: payload, cache key and file, and never failing a run."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from evolve_action.harness import TokenCounter, cache_key, default_cache_path, estimate_payload


def test_payload_and_key() -> None:
    assert estimate_payload(b"---\nname: a\n---\nbody\n", "q") == "---\nname: a\n---\nbody\n\n\nq"
    expected = hashlib.sha256(b"anthropic\0claude-sonnet-4-6\0payload").hexdigest()
    assert cache_key("anthropic", "claude-sonnet-4-6", "payload") == expected


def test_default_cache_path() -> None:
    assert default_cache_path({"XDG_CACHE_HOME": "/c"}) == Path("/c/evolve/token-counts.json")
    assert default_cache_path({"HOME": "/h"}) == Path("/h/.cache/evolve/token-counts.json")
    assert default_cache_path({}, "~/x") == Path("~/x/token-counts.json")  # `~` is not expanded


def test_cache_hit_needs_no_credentials_and_miss_warns_once(tmp_path: Path) -> None:
    path = tmp_path / "token-counts.json"
    path.write_text(json.dumps({cache_key("anthropic", "m", "known"): 42}))
    counter = TokenCounter({}, cache_path=path)

    async def go() -> list[int | None]:
        return [
            await counter.count("anthropic", "m", "known"),
            await counter.count("anthropic", "m", "unknown"),
            await counter.count("anthropic", "m", "other"),
            await counter.count("openai", "gpt", "x"),
        ]

    assert asyncio.run(go()) == [42, None, None, None]
    assert counter.requests == 0
    assert counter.warnings == ["[anthropic] no API key or OAuth token set; token counts omitted"]
    counter.save()  # nothing new: the file is untouched
    assert json.loads(path.read_text()) == {cache_key("anthropic", "m", "known"): 42}


def test_corrupt_cache_is_empty_and_save_is_pretty(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "token-counts.json"
    path.parent.mkdir()
    path.write_text("{not json")
    counter = TokenCounter({}, cache_path=path)
    counter._cache = {"b": 2, "a": 1}
    counter._dirty = True
    counter.save()
    assert path.read_text() == '{\n  "a": 1,\n  "b": 2\n}\n'


# Regressions found in review (QA: an unwritable token cache is a warning, never an error that fails (or masks) a run).


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


def test_a_symlinked_cache_file_is_not_written_through(tmp_path: Path) -> None:
    """Issue 29 item 4: a `cache_dir` file a PR linked elsewhere loses the cache, with a warning."""
    victim = tmp_path / "victim.json"
    victim.write_text("{}\n")
    cache_dir = tmp_path / "repo" / ".cache"
    cache_dir.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    path = default_cache_path({}, str(cache_dir))
    path.symlink_to(victim)
    counter = TokenCounter({}, cache_path=path)
    counter._cache = {"a": 1}
    counter._dirty = True
    counter.save()
    assert victim.read_text() == "{}\n"
    assert path.is_symlink()
    assert len(counter.warnings) == 1
    assert counter.warnings[0].startswith(f"token cache not saved: refusing to write {path}")
