"""Issue 24 item 5: a results file is decoded once per version per process, and decoded fast.

`load_results` keeps what it decoded by path and the file's stamp (device, inode, size, mtime,
ctime), plus a content digest while the file is too fresh for its stamp to be trusted; planning,
the report, the gate and the writer then share one decode. The codec's generated fast decoder
gives the same `ResultsFile` as the general (`_Obj`) decoder for every input: anything it does
not handle (keys Go's folding would change, wrong kinds, numbers out of range) goes down the
general path, whose answer or error stands.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from evolve_action import encoding
from evolve_action import results as R
from evolve_action.errors import SpecError
from evolve_action.results import _codec, _store

MODEL = "anthropic/claude-sonnet-4-6"


def _doc(
    *, passed: bool = True, cost: object = 0.25, extra: dict[str, object] | None = None
) -> dict[str, object]:
    result: dict[str, object] = {
        "id": "case-1",
        "passed": passed,
        "measured": {"input_tokens": 10, "output_tokens": 5, "cost_usd": cost},
        "expectations": [
            {
                "type": "llm",
                "text": "says hi",
                "passed": passed,
                "evidence": "yes",
                "source": "expectation",
            }
        ],
        "execution_metrics": {"tool_calls": {"Bash": 2, "Read": None}, "total_tool_calls": 2},
        "timing": {"executor_duration_seconds": 3},
        "spec_hash": "ab" * 32,
    }
    entry: dict[str, object] = {
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "display": "Claude Sonnet 4.6",
        "harness": "claude",
        "tool_version": "1",
        "ran_at": "2026-11-01T00:00:00Z",
        "executed": True,
        "content_hash": "cd" * 32,
        "timeout_seconds": 600,
        "pricing": {"input_per_mtok": 3, "output_per_mtok": 15},
        "results": [result, None],
        "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1},
        "previous": {
            "ran_at": "2026-10-01T00:00:00Z",
            "summary": {"total": 1},
            "results": [{"id": 7}],
        },
    }
    triggers: dict[str, object] = {
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "executed": False,
        "results": [{"query": "hi", "should_trigger": True, "estimate": {"input_tokens": 3}}],
        "summary": {"total": 1},
    }
    doc: dict[str, object] = {
        "schema": 5,
        "plugin": "p",
        "skill": "s",
        "models": {MODEL: {"triggers": triggers, "evals": entry}, "x/y": None},
    }
    if extra:
        doc.update(extra)
    return doc  # fmt: skip


def _general(doc: object) -> R.ResultsFile:
    return _codec._d_results_file(_codec._Obj(doc, "results"))


def test_fast_decoder_agrees_with_the_general_one_and_round_trips() -> None:
    doc = _doc()
    file = R.from_document(doc)
    assert file == _general(doc)
    assert file.models[MODEL].evals is not None
    assert file.models[MODEL].evals.previous is not None
    assert (
        file.models[MODEL].evals.previous.results[0].id == "7"
    )  # an integer id, as the spec loader
    assert file.models[MODEL].evals.results[1] == R.EvalResult()  # null element → zero struct
    assert file.models["x/y"] == R.ModelEntry()
    m = file.models[MODEL].evals.results[0].execution_metrics
    assert m is not None and m.tool_calls == {"Bash": 2, "Read": 0}
    again = R.to_document(file)
    assert R.from_document(again) == file


@pytest.mark.parametrize(
    "change",
    [
        {"Schema": 5},  # a key Go's folding maps onto a field: the general path decides
        {"unknown": {"deep": [1, 2, 3]}},  # an unknown key: dropped, as evolve drops it
        {"PLUGIN": "other"},
    ],
    ids=["folded-key", "unknown-key", "folded-later-key"],
)
def test_documents_the_fast_decoder_passes_on_decode_like_the_general_one(
    change: dict[str, object],
) -> None:
    doc = _doc(extra=change)
    assert R.from_document(doc) == _general(doc)


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        ("0.25", "results.models.anthropic/claude-sonnet-4-6.evals.results[0].measured.cost_usd: expected a number"),
        (True, "expected a number"),
        (float("inf"), "cost_usd: number out of range"),
        (10**400, "cost_usd: number out of range"),
    ],
    ids=["string", "bool", "inf", "huge-int"],
)  # fmt: skip
def test_wrong_kinds_and_out_of_range_numbers_get_the_general_decoders_error(
    cost: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        R.from_document(_doc(cost=cost))


def _write(d: Path, doc: dict[str, object]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    path = d / "results.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def test_a_results_file_is_decoded_once_per_version(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    path = _write(d, _doc())
    first = R.load_results(d)
    assert first.file is not None
    assert R.load_results(d) is first  # the same decode, not an equal one

    # An atomic rewrite (a new inode), as every write of ours is: decoded again.
    written = R.write_results(d, first.file, "json")
    assert written == path
    second = R.load_results(d)
    assert second is not first and second.file == first.file

    # An in-place rewrite of the same size, in the same clock tick: the stamp may not change,
    # so the digest of a file this fresh is compared too.
    text = path.read_text()
    flipped = text.replace('"passed": true', '"passed": fals')  # same length, invalid
    assert len(flipped) == len(text)
    st = path.stat()
    path.write_text(flipped)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(SpecError, match="stored results do not parse"):
        R.load_results(d)
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    third = R.load_results(d)
    assert third.file == first.file

    # Other names for the same file are their own decode.
    named = R.load_results(d, plugin="q", skill="t")
    assert named.file is not None and (named.file.plugin, named.file.skill) == ("q", "t")
    assert R.load_results(d).file is third.file


def test_the_racy_window_follows_the_precision_of_the_stamp() -> None:
    second = 1_000_000_000
    fine = (1, 2, 3, 5 * second + 123_456_789, 5 * second + 123_456_789)
    coarse = (1, 2, 3, 6 * second, 6 * second)
    assert _store._racy_window_ns(fine) == 100_000_000
    assert _store._racy_window_ns(coarse) == 2 * second
    # One time with a sub-second part is enough to show fine times.
    assert _store._racy_window_ns((1, 2, 3, 6 * second, 6 * second + 1)) == 100_000_000


def test_a_file_older_than_its_racy_window_is_trusted_by_its_stamp(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    path = _write(d, _doc())
    st = path.stat()
    fresh = R.load_results(d)
    cached = _store._CACHE[(path, "p", "s")]
    if time.time_ns() - st.st_ctime_ns < _store._racy_window_ns(cached.stamp):
        assert cached.digest is not None  # read within the window: the digest is kept
    # Past the window (sub-second times here: 100 ms), a new read keeps no digest.
    _store.forget_loaded()
    time.sleep(0.2 if st.st_ctime_ns % 1_000_000_000 else 2.1)
    again = R.load_results(d)
    assert again.file == fresh.file
    assert _store._CACHE[(path, "p", "s")].digest is None


def test_a_changed_file_is_decoded_again(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    path = _write(d, _doc())
    loaded = R.load_results(d)
    assert R.load_results(d) is loaded
    path.write_text(json.dumps(_doc(passed=False), indent=2) + "\n")  # in place: new size, times
    changed = R.load_results(d)
    assert changed.file is not None and changed.file != loaded.file
    path.unlink()
    assert R.load_results(d) == R.LoadedResults(None, None, None, None)


def test_typed_json_decoding_keeps_negative_zero_and_reports_syntax_errors(tmp_path: Path) -> None:
    p = tmp_path / "results.json"
    p.write_text('{"a": -0, "b": [1, -0.0], "c": "tools-0"}\n')
    value = encoding.decode_path(p, typed=True)
    assert str(value["a"]) == "-0.0" and str(value["b"][1]) == "-0.0"
    assert value == encoding.decode_path(p)
    p.write_text('{"a": 1,\n "b": }\n')
    with pytest.raises(SpecError) as typed:
        encoding.decode_path(p, typed=True)
    with pytest.raises(SpecError) as general:
        encoding.decode_path(p)
    assert (typed.value.message, typed.value.line) == (general.value.message, general.value.line)
    p.write_text('{"a": 1e999}')
    assert encoding.decode_path(p, typed=True) == {"a": float("inf")}  # the codec refuses it
    with pytest.raises(SpecError, match="out of range"):
        encoding.decode_path(p)
