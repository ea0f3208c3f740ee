"""JUnit XML export (junit.py): bytes, escaping, counts."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from evolve_action.report import LoadedFile, LoadedPlugin, build_suites, render_junit, xml_escape
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    GradedAssertion,
    ModelEntry,
    ResultsFile,
    Timing,
    TriggerResult,
    TriggersEntry,
)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("a&b<c>d", "a&amp;b&lt;c&gt;d"),
        ("say \"hi\" 'x'", "say &#34;hi&#34; &#39;x&#39;"),
        ("l1\nl2\tz\r", "l1&#xA;l2&#x9;z&#xD;"),
        ("bell\x07", "bell\ufffd"),
        ("é✓", "é✓"),
    ],
)
def test_xml_escape(text: str, want: str) -> None:
    assert xml_escape(text) == want


def test_xml_escape_is_go_escape_text_character_by_character() -> None:
    # Every character class at its edges, and random text drawn from all of them.
    import random

    esc = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;"}
    esc |= {"\t": "&#x9;", "\n": "&#xA;", "\r": "&#xD;"}

    def ok(o: int) -> bool:
        return o in (9, 10, 13) or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000

    def by_definition(s: str) -> str:
        return "".join(esc.get(c) or (c if ok(ord(c)) else "\ufffd") for c in s)

    edges = [0, 8, 9, 10, 11, 13, 14, 0x1F, 0x20, 0x7F, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFD]
    edges += [0xFFFE, 0xFFFF, 0x10000, 0x10FFFF, *map(ord, "&<>\"'a é")]
    chars = [chr(o) for o in edges]
    rng = random.Random(7)
    for text in [*chars, *("".join(rng.choices(chars, k=rng.randint(0, 12))) for _ in range(2000))]:
        assert xml_escape(text) == by_definition(text), repr(text)


def test_empty() -> None:
    assert render_junit([]) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites tests="0" failures="0" errors="0" skipped="0" time="0.000"></testsuites>\n'
    )


def _plugin() -> LoadedPlugin:
    head = EntryHeader(provider="xai", model="grok-4.6", display="Grok 4.6", executed=True)
    trig = TriggersEntry(
        header=head,
        results=(
            TriggerResult(
                query="a <b>",
                should_trigger=True,
                hits=3,
                runs=3,
                passed=True,
                avg_run_seconds=1.25,
            ),
            TriggerResult(
                query="no", should_trigger=False, hits=2, runs=3, passed=False, avg_run_seconds=2.0
            ),
            TriggerResult(query="later", should_trigger=True),
        ),
    )
    evals = EvalsEntry(
        header=head,
        results=(
            EvalResult(
                id="1",
                name="First",
                passed=False,
                expectations=(
                    GradedAssertion(text="x", passed=True, evidence="ok"),
                    GradedAssertion(
                        text="file a.go exists", passed=False, evidence="missing & gone"
                    ),
                ),
                timing=Timing(executor_duration_seconds=10.0),
            ),
            EvalResult(
                id="2",
                runtime_error='timeout "600s"',
                timing=Timing(executor_duration_seconds=600.0),
            ),
            EvalResult(id="3"),
        ),
    )
    models = {
        "xai/grok-4.6": ModelEntry(triggers=trig, evals=evals),
        "cursor/composer-2.5": ModelEntry(),
    }
    f = LoadedFile(skill="s", results=ResultsFile(plugin="p", skill="s", models=models))
    empty = LoadedFile(skill="t", results=ResultsFile(plugin="p", skill="t"))
    return LoadedPlugin(name="p", rel_dir="plugins/p", files=(f, empty))


def test_bytes() -> None:
    xml = render_junit(build_suites([_plugin()], None))
    cls = "p.s.xai/grok-4.6"
    assert xml == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites tests="6" failures="2" errors="1" skipped="2" time="613.250">\n'
        '  <testsuite name="p/s" tests="6" failures="2" errors="1" skipped="2" time="613.250">\n'
        f'    <testcase name="a &lt;b&gt;" classname="{cls}.triggers" time="1.250"></testcase>\n'
        f'    <testcase name="no" classname="{cls}.triggers" time="2.000">\n'
        '      <failure message="did not trigger as expected">triggered in 2/3 runs (expected: no)</failure>\n'
        "    </testcase>\n"
        f'    <testcase name="later" classname="{cls}.triggers" time="0.000">\n'
        "      <skipped></skipped>\n"
        "    </testcase>\n"
        f'    <testcase name="First" classname="{cls}.evals" time="10.000">\n'
        '      <failure message="assertions failed">failed `file a.go exists`: missing &amp; gone</failure>\n'
        "    </testcase>\n"
        f'    <testcase name="2" classname="{cls}.evals" time="600.000">\n'
        '      <error message="timeout &#34;600s&#34;">timeout &#34;600s&#34;</error>\n'
        "    </testcase>\n"
        f'    <testcase name="3" classname="{cls}.evals" time="0.000">\n'
        "      <skipped></skipped>\n"
        "    </testcase>\n"
        "  </testsuite>\n"
        "</testsuites>\n"
    )
    root = ET.fromstring(xml)
    assert root.get("tests") == str(len(root.findall(".//testcase")))


def test_filter_drops_models_and_empty_suites() -> None:
    assert build_suites([_plugin()], frozenset({"anthropic/claude-sonnet-5"})) == []
