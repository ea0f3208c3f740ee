"""Unit tests of token estimates: payload, cache key and file, and never failing a run."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

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
