"""Issue 24 item 5: canonical results files decode straight from their bytes, with the same answer.

`decode_canonical_json` (msgspec into mirror structs, then the model's dataclasses) answers only
when its answer equals the general path's (`encoding.decode_bytes(typed=True)` then
`from_document`); otherwise it declines and `load_results` takes the general path, whose answer
or error stands. The property is checked on a rich file as our own writer writes it and on
thousands of seeded mutations of it: values of every JSON kind at every place, keys Go's folding
would change, unknown keys, duplicate keys, `-0`, lone surrogates, a byte-order mark, trailing
bytes and syntax errors.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from evolve_action import encoding
from evolve_action import results as R
from evolve_action.errors import SpecError
from evolve_action.results._bytes import decode_canonical_json
from evolve_action.results._codec import probe_schema
from evolve_action.results._store import shape_problem

MODEL = "anthropic/claude-sonnet-4-6"
PATH = Path("results.json")


def _rich_file() -> R.ResultsFile:
    """A file with every kind of field set: snapshots, graded expectations, metrics, usage."""
    graded = R.GradedAssertion(
        type="regex",
        pattern="<b>&",
        text="says hi",
        passed=None,
        evidence="é — \u2028",
        source="expectation",
    )
    case = R.EvalResult(
        id="case-1",
        name="first",
        passed=True,
        estimate=R.Estimate(input_tokens=12, input_cost_usd=0.000036),
        measured=R.Measured(input_tokens=10, output_tokens=5, cost_usd=0.25),
        expectations=(graded, graded),
        summary=R.GradeSummary(passed=1, failed=0, total=2, pass_rate=0.5, skipped=1),
        execution_metrics=R.ExecutionMetrics(
            tool_calls={"Bash": 2, "Read": 1}, total_tool_calls=3, files_created=("a.txt", "b/c.md")
        ),
        timing=R.Timing(total_tokens=15, duration_ms=1200, executor_duration_seconds=1.2),
        spec_hash="ab" * 32,
    )
    header = R.EntryHeader(
        provider="anthropic",
        model="claude-sonnet-4-6",
        display="Claude Sonnet 4.6",
        harness="claude",
        tool_version="2.1.0",
        ran_at="2026-11-01T00:00:00Z",
        executed=True,
        content_hash="cd" * 32,
        runs_per_query=3,
        timeout_seconds=600,
        pricing=R.Pricing(input_per_mtok=3.0, output_per_mtok=None),
    )
    evals = R.EvalsEntry(
        header=header,
        results=(case, R.EvalResult(id="case-2", runtime_error="boom")),
        summary=R.EvalSummary(
            passed=1, failed=0, errored=1, total=2, pass_rate=0.5, avg_run_seconds=1.25
        ),
        baseline=R.EvalSnapshot(
            ran_at="2026-10-01T00:00:00Z",
            results=(R.EvalResult(id="case-1", passed=False, fingerprint="ef" * 8),),
        ),
        previous=R.EvalSnapshot(ran_at="2026-09-01T00:00:00Z", summary=R.EvalSummary(total=1)),
    )
    query = R.TriggerResult(
        query="make a csv",
        should_trigger=True,
        hits=2,
        runs=3,
        passed=True,
        avg_run_seconds=4.5,
        spec_hash="12" * 32,
    )
    triggers = R.TriggersEntry(
        header=header,
        results=(
            query,
            R.TriggerResult(
                query="other", should_trigger=False, estimate=R.Estimate(input_tokens=9)
            ),
        ),
        summary=R.TriggerSummary(passed=1, failed=1, total=2, pass_rate=0.5),
        previous=R.TriggerSnapshot(ran_at="2026-09-01T00:00:00Z", results=(query,)),
    )
    return R.ResultsFile(
        plugin="p",
        skill="s",
        models={MODEL: R.ModelEntry(triggers=triggers, evals=evals), "x/y": R.ModelEntry()},
    )  # fmt: skip


def _canonical_bytes() -> bytes:
    return encoding.encode_json(R.to_document(_rich_file())).encode()


def _general(data: bytes) -> R.ResultsFile | None:
    """What `load_results` makes of `data` the general way: the file, or None for an error."""
    try:
        doc = encoding.decode_bytes(data, PATH, typed=True)
    except SpecError:
        return None
    if shape_problem(doc) is not None or probe_schema(doc) != 5:
        return None
    try:
        return R.from_document(doc)
    except ValueError:
        return None


def test_a_file_as_our_writer_writes_it_decodes_quickly_to_the_same_model() -> None:
    data = _canonical_bytes()
    quick = decode_canonical_json(data)
    assert quick is not None
    assert quick == _general(data) == _rich_file()
    assert R.to_document(quick) == json.loads(data)


_VALUES: list[Any] = [
    None,
    0,
    1,
    -1,
    1.5,
    -0.0,
    1e-7,
    10**20,
    10**400,
    "",
    "x",
    "\ud800",
    True,
    False,
    [],
    [None],
    ["a"],
    {},
    {"Bash": None},
]


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _places(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _places(v, (*path, i))
    return out


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        node = node[p]
    return node


def _mutate(doc: Any, rng: random.Random) -> bytes:
    """One seeded mutation of the document, as JSON bytes."""
    doc = json.loads(json.dumps(doc))
    places = [p for p in _places(doc) if p]
    path = rng.choice(places)
    parent, key = _at(doc, path[:-1]), path[-1]
    kind = rng.randrange(6)
    if kind == 0:
        parent[key] = rng.choice(_VALUES)
    elif kind == 1 and isinstance(parent, dict):  # a key Go's case folding maps onto the field
        parent[str(key).upper() if rng.random() < 0.5 else str(key).title()] = parent.pop(key)
    elif kind == 2 and isinstance(parent, dict):
        parent["unknown_" + str(key)] = rng.choice(_VALUES)
    elif kind == 3 and isinstance(parent, dict):
        del parent[key]
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    if kind == 4:  # text-level: -0, a duplicate key, a BOM, trailing bytes, a syntax error
        text = rng.choice(
            [
                text.replace(": 1,", ": -0,", 1),
                text.replace(": 1.5", ": -0", 1),
                text.replace('{"schema": 5,', '{"schema": 5, "schema": 5,', 1),
                text.replace('"plugin": "p"', '"plugin": "q", "plugin": "p"', 1),
                "\ufeff" + text,
                text + " x",
                text[:-1],
                text.replace('"x"', '"\\ud83d\\ude00"', 1),
            ]
        )
    elif kind == 5:
        parent[key] = rng.choice(_VALUES)
        text = json.dumps(doc).replace('"\\ud800"', '"\\udc00"')
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("seed", range(8))
def test_the_quick_decoder_answers_only_when_the_general_path_agrees(seed: int) -> None:
    rng = random.Random(seed)
    doc = json.loads(_canonical_bytes())
    answered = declined = 0
    for _ in range(400):
        data = _mutate(doc, rng)
        quick = decode_canonical_json(data)
        if quick is None:
            declined += 1
            continue
        answered += 1
        assert quick == _general(data), data[:400]
    assert answered and declined  # both sides of the property were exercised


@pytest.mark.parametrize(
    "text",
    [
        '{"schema": 4, "plugin": "p", "skill": "s"}',  # migration lives on the general path
        '{"plugin": "p", "skill": "s"}',  # a missing schema is the general path's error
        '{"schema": 5, "models": {"m/x": {"evals": {"results": [{"id": 7}]}}}}',  # integer id
        '{"schema": 5, "models": {"m/x": {"evals": {"pricing": {"input_per_mtok": -0}}}}}',
    ],
)
def test_files_the_quick_decoder_leaves_to_the_general_path(text: str) -> None:
    assert decode_canonical_json(text.encode()) is None


def test_load_results_gives_the_same_file_whichever_path_decodes_it(tmp_path: Path) -> None:
    data = _canonical_bytes()
    quick_dir, general_dir = tmp_path / "p/evals/s", tmp_path / "q/evals/s"
    for d, body in ((quick_dir, data), (general_dir, data.replace(b'"schema": 5', b'"Schema": 5'))):
        d.mkdir(parents=True)
        (d / "results.json").write_bytes(body)
    quick = R.load_results(quick_dir, plugin="p", skill="s").file
    general = R.load_results(general_dir, plugin="p", skill="s").file
    assert quick is not None and quick == general == _rich_file()
