"""Replay a scripted server's request log under the API's prompt-cache rules.

Reads a JSONL request log (`ModelServer(log_path=…)`, bodies included, e.g. from
`bench/pr_cost.py --log-dir DIR`) and:

- prints what the server reported (cache reads, writes, plain input, dollars at Claude Sonnet 5
  list prices) next to a sequential replay of the same requests through a fresh
  `modelserver._cache.PromptCache` (each answer starts before the next request arrives), and the
  distinct system prompts (billing line aside);
- with `--skeleton OUT`, writes the log as the cache sees it (per request: the model and its blocks
  as `[block id, tokens, ttl or null, keyed]`, block ids numbering the distinct block keys), small
  enough to keep as test data (tests/unit/modelserver/test_cache_replay.py).

    .venv/bin/python bench/cache_replay.py LOG.jsonl [--skeleton OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evolve_action.harness import metered_cost_usd
from evolve_action.harness._meter import pricing_for
from evolve_action.modelserver._cache import BILLING_PREFIX, Block, PromptCache, cache_blocks

PRICED_AS = "claude-sonnet-5"


def load(path: Path) -> list[dict[str, Any]]:
    """The `/v1/messages` entries that were answered (status 200), in arrival order."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("path") == "/v1/messages" and entry.get("status") == 200 and entry.get("body"):
            out.append(entry)
    return out


def skeleton(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The log as the cache sees it (see the module docstring)."""
    ids: dict[str, int] = {}
    requests = []
    for e in entries:
        blocks = cache_blocks(e["body"])
        requests.append(
            {
                "model": str(e.get("model") or e["body"].get("model") or ""),
                "blocks": [
                    [ids.setdefault(b.key, len(ids)), b.tokens, b.ttl, b.keyed] for b in blocks
                ],
                "reported": {
                    k: int((e.get("usage") or {}).get(k) or 0)
                    for k in ("cache_read_input_tokens", "cache_creation_input_tokens")
                },
            }
        )
    return {"requests": requests}


def replay(requests: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """Each request's (read, written, plain) through a fresh cache, one after the other."""
    cache = PromptCache(lambda: 0.0)
    out = []
    for r in requests:
        blocks = [Block(str(i), int(t), ttl, bool(k)) for i, t, ttl, k in r["blocks"]]
        split, ticket = cache.lookup(r["model"], blocks)
        ticket.started()
        out.append((split.read, split.written, split.plain))
    return out


def _systems(entries: list[dict[str, Any]]) -> int:
    seen = set()
    for e in entries:
        system = e["body"].get("system")
        blocks = system if isinstance(system, list) else [{"text": system}]
        kept = [b for b in blocks if not str(b.get("text", "")).startswith(BILLING_PREFIX)]
        seen.add(json.dumps(kept, sort_keys=True))
    return len(seen)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("log", type=Path)
    ap.add_argument("--skeleton", type=Path)
    args = ap.parse_args(argv)
    entries = load(args.log)
    skel = skeleton(entries)
    if args.skeleton:
        args.skeleton.write_text(json.dumps(skel, separators=(",", ":")) + "\n", encoding="utf-8")
    pricing = pricing_for(PRICED_AS)
    assert pricing is not None
    out_tokens = sum(int((e.get("usage") or {}).get("output_tokens") or 0) for e in entries)
    served = {
        "read": sum(int(e["usage"]["cache_read_input_tokens"]) for e in entries),
        "written": sum(int(e["usage"]["cache_creation_input_tokens"]) for e in entries),
        "plain": sum(int(e["usage"]["input_tokens"]) for e in entries),
    }
    rows = replay(skel["requests"])
    replayed = {
        "read": sum(r[0] for r in rows),
        "written": sum(r[1] for r in rows),
        "plain": sum(max(1, r[2]) for r in rows),
    }
    for name, t in (("server", served), ("replay", replayed)):
        usd = metered_cost_usd(
            pricing,
            input_tokens=t["plain"],
            output_tokens=out_tokens,
            cache_read_input_tokens=t["read"],
            cache_creation_input_tokens=t["written"],
        )
        rate = t["read"] / max(1, t["read"] + t["written"])
        print(
            f"{name}: {len(entries)} requests, read {t['read']:,}, written {t['written']:,}, "
            f"plain {t['plain']:,}, hit rate {rate:.1%}, ${usd:.2f}"
        )
    print(f"distinct system prompts (billing line aside): {_systems(entries)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
