"""A recorded request log replayed through the scripted server's prompt cache agrees, request by
request, with an independent computation of the API's rules (issue 40 item 2).

The data: the README tour's description change (`bench/pr_cost.py --only description --log-dir`),
every answered `/v1/messages` request of the job as the cache sees it (`bench/cache_replay.py
--skeleton`: per block an id standing for its exact content, its tokens, its breakpoint TTL and
whether it is part of the key: the billing line is not). The independent computation below keeps
whole prefixes (tuples of block ids) instead of running hashes, and scans them in its own way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evolve_action.modelserver._cache import Block, PromptCache, min_cacheable_tokens

DATA = Path(__file__).with_name("data") / "pr_description_cache.json"


def independent(requests: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(read, written) of each request, one after the other, no request expiring (the job is
    shorter than five minutes)."""
    stored: set[tuple[str, tuple[int, ...]]] = set()
    out = []
    for r in requests:
        model, blocks = r["model"], r["blocks"]
        minimum = min_cacheable_tokens(model)
        ids: list[int] = []
        prefixes: list[tuple[int, ...]] = []
        sizes: list[int] = []
        size = 0
        for block_id, tokens, _, keyed in blocks:
            if keyed:
                ids.append(block_id)
            size += tokens
            prefixes.append(tuple(ids))
            sizes.append(size)
        marks = [i for i, b in enumerate(blocks) if b[2] is not None and sizes[i] >= minimum]
        found = [
            j
            for bp in marks
            for j in range(max(0, bp - 20), bp + 1)
            if (model, prefixes[j]) in stored
        ]
        read = max((sizes[j] for j in found), default=0)
        later = [bp for bp in marks if sizes[bp] > read]
        written = sizes[later[-1]] - read if later else 0
        stored.update((model, prefixes[bp]) for bp in later)
        out.append((read, written))
    return out


def test_every_request_of_a_recorded_job_splits_as_the_api_rules_say() -> None:
    requests = json.loads(DATA.read_text(encoding="utf-8"))["requests"]
    assert len(requests) > 50
    cache = PromptCache(lambda: 0.0)
    ours = []
    for r in requests:
        blocks = [Block(str(i), int(t), ttl, bool(k)) for i, t, ttl, k in r["blocks"]]
        split, ticket = cache.lookup(r["model"], blocks)
        ticket.started()
        ours.append((split.read, split.written))
    expected = independent(requests)
    assert ours == expected
    # The job shares its prefix: most cacheable tokens are reads.
    read = sum(r for r, _ in ours)
    assert read > 0.5 * (read + sum(w for _, w in ours))
