"""The untrusted-text gate: control characters stripped, no printed line starts a workflow command."""

from __future__ import annotations

import io

import pytest

from evolve_action import cli
from evolve_action.catalog import BUILTIN_CATALOG
from evolve_action.events import ItemDone, LineReporter, UnitStarted
from evolve_action.github import annotate, mask
from evolve_action.report import LoadedFile, LoadedPlugin, provider_caps, render_plugin_page
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    EvalSummary,
    GradedAssertion,
    GradeSummary,
    ModelEntry,
    ResultsFile,
    Timing,
    TriggerResult,
    TriggersEntry,
    TriggerSummary,
)
from evolve_action.sanitise import (
    clean_line,
    clean_text,
    gate,
    neutralise_line,
    neutralise_markdown,
)

INJECTIONS = [
    "tidy my csv\n::error file=x,line=1::pwned",
    "::add-mask::hunter2",
    "  ::set-output name=x::y",
    "##[error]legacy command",
    "\x1b[41mred\x1b[0m evidence\x1b]0;title\x07",
    "ok\r::warning::carriage return",
    "\u202eevil\u202c bidi",
    "\x9b31m C1 CSI \x85 NEL",
]


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith(("::", "##["))]


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("plain text\twith tab\n", "plain text\twith tab\n"),
        ("\x1b[41mred\x1b[0m", "red"),
        ("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),
        ("bell\x07 nul\x00 del\x7f", "bell nul del"),
        ("\u202eabc\u2066d\u2069", "abcd"),
        ("\x9b1mC1", "C1"),
        ("ünïcödé ✓", "ünïcödé ✓"),
    ],
)
def test_clean_text(raw: str, want: str) -> None:
    assert clean_text(raw) == want


def test_clean_line_and_neutralise_line() -> None:
    assert clean_line("a\nb\tc\x1b[2K") == "a b c"
    assert neutralise_line("::error::x") == ": :error::x"
    assert neutralise_line("   ##[warning]x") == "   # #[warning]x"
    assert neutralise_line("a ::error::x") == "a ::error::x"


@pytest.mark.parametrize("text", INJECTIONS)
def test_gate_under_actions_prints_no_command_line_and_no_escape(text: str) -> None:
    buf = io.StringIO()
    out = gate(buf, actions=True)
    out.write(f"  PASSED  {text}\n")
    out.write(text)
    out.write("\n")
    for ch in text:  # one character at a time: a split `:` + `:` is still caught
        out.write(ch)
    out.write("\n")
    printed = buf.getvalue()
    assert _commands(printed) == []
    assert "\x1b" not in printed and "\x9b" not in printed and "\u202e" not in printed


def test_gate_lets_our_own_workflow_commands_through() -> None:
    buf = io.StringIO()
    out = gate(buf, actions=True)
    out.write("::error::not ours\n")
    annotate(out, "error", "bad \x1b[31mthing\n::error::injected", file="a,b.json", line=3)
    mask(out, "s3cret")
    assert _commands(buf.getvalue()) == [
        "::error file=a%2Cb.json,line=3::bad thing%0A::error::injected",
        "::add-mask::s3cret",
    ]


def test_gate_outside_actions_strips_escapes_but_keeps_lines() -> None:
    buf = io.StringIO()
    gate(buf, actions=False).write("::notice::x \x1b[1mbold\x1b[0m\n")
    assert buf.getvalue() == "::notice::x bold\n"


@pytest.mark.parametrize("text", INJECTIONS)
def test_reporter_lines_through_the_cli_gate(text: str) -> None:
    buf = io.StringIO()
    rep = LineReporter(gate(buf, actions=True), live=True)
    rep.emit(UnitStarted(plugin="p", skill=text, model="m", tier="triggers", items=1))
    rep.emit(
        ItemDone(skill=text, model="m", tier="triggers", label=text, status="failed", detail=text)
    )
    assert _commands(buf.getvalue()) == []
    assert "\x1b" not in buf.getvalue().replace("\r\x1b[2K", "")  # only our own progress control


def test_cli_error_message_with_injection_under_actions(tmp_path: object) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        ["run", "checks", "--root", "/nonexistent/\n::error::x\x1b[31m"],
        {"GITHUB_ACTIONS": "true", "PATH": "/usr/bin:/bin"},
        stdout=out,
        stderr=err,
    )
    assert code != 0
    for text in (out.getvalue(), err.getvalue()):
        assert all(
            line.startswith("::error") is False or "%0A" in line for line in text.splitlines()
        )
        assert "\x1b" not in text
    assert _commands(err.getvalue()) == []


def test_markdown_pages_carry_no_escape_or_control_characters() -> None:
    head = EntryHeader(
        provider="anthropic", model="claude-sonnet-5", display="Sonnet", executed=True
    )
    evil = "\x1b[41mred\x1b[0m\u202e\x00 text"
    trig = TriggersEntry(
        header=head,
        results=(
            TriggerResult(
                query=f"q {evil}",
                should_trigger=True,
                hits=1,
                runs=1,
                passed=True,
                avg_run_seconds=1.0,
            ),
        ),
        summary=TriggerSummary(passed=1, failed=0, total=1, pass_rate=1, avg_run_seconds=1.0),
    )
    fail = GradedAssertion(type="llm", text=f"says {evil}", passed=False, evidence=f"judge {evil}")
    evals = EvalsEntry(
        header=head,
        results=(
            EvalResult(
                id=f"id{evil}",
                name=f"name {evil}",
                passed=False,
                expectations=(fail,),
                summary=GradeSummary(passed=0, failed=1, total=1, pass_rate=0),
                timing=Timing(executor_duration_seconds=2.0),
            ),
        ),
        summary=EvalSummary(passed=0, failed=1, total=1, pass_rate=0, avg_run_seconds=2.0),
    )
    loaded = LoadedFile(
        skill="greet",
        results=ResultsFile(
            plugin="demo",
            skill="greet",
            models={"anthropic/claude-sonnet-5": ModelEntry(triggers=trig, evals=evals)},
        ),
    )
    page = render_plugin_page(
        LoadedPlugin(name="demo", rel_dir="plugins/demo", files=(loaded,)),
        active=None,
        caps=provider_caps(BUILTIN_CATALOG),
    )
    assert "judge red text" in page
    assert clean_text(page) == page
    assert not any(ch in page for ch in "\x1b\x00\u202e")


# ---------------------------------------------------------------------------------------------
# Markdown neutralisation (reports) and redaction on the console

MARKDOWN_CASES = [
    ("hi @octocat, ping @org/team", "hi ＠octocat, ping ＠org/team"),
    ("mail a@b.com, pin actions/checkout@v4", "mail a@b.com, pin actions/checkout@v4"),
    (
        '<img src="https://evil.example/beacon.gif">',
        '&lt;img src="https://evil.example/beacon.gif">',
    ),
    ("<details><summary>x</summary>", "&lt;details>&lt;summary>x&lt;/summary>"),
    ("<!-- evolve-action:comment -->", "&lt;!-- evolve-action:comment -->"),
    ("![x](https://evil.example/b.png)", "!\\[x](https://evil.example/b.png)"),
    ("```\nfenced\n~~~", "\\```\nfenced\n\\~~~"),
    ("zero\u200bwidth @\u200bghost", "zerowidth ＠ghost"),
    (
        "[x](javascript:alert(1)) [y]( &#106;avascript:1)",
        "[x]\\(javascript:alert(1)) [y]\\( &#106;avascript:1)",
    ),
    ("[d](data:text/html,x) [m](mailto:a@b.c)", "[d]\\(data:text/html,x) [m]\\(mailto:a@b.c)"),
    ("[x](< javascript:1>)", "[x]\\(< javascript:1>)"),
    ("[r]: javascript:x\n  [s]:\n vbscript:y", "\\[r]: javascript:x\n  \\[s]:\n vbscript:y"),
    ("x < y and a -> b, [link](https://x), `code`, #12", None),
    ("see [the docs](./docs/a.md#x) and [ref]: https://x", None),
    ("Write tests | with pipes", None),
    ("", None),
]


@pytest.mark.parametrize(("raw", "want"), MARKDOWN_CASES)
def test_neutralise_markdown(raw: str, want: str | None) -> None:
    got = neutralise_markdown(raw)
    assert got == (raw if want is None else want)
    assert neutralise_markdown(got) == got  # idempotent
    if want is None:
        assert got is raw  # ordinary text: the same object, byte for byte


def test_the_console_gate_redacts_secrets_and_tokens() -> None:
    from evolve_action import redact

    secret = "sk-scripted-console-key"
    redact.register(secret)  # forgotten after the test (suite fixture)
    for actions in (True, False):
        buf = io.StringIO()
        out = gate(buf, actions=actions)
        out.write(f"  FAILED  case — exit 1: {secret}\n")
        out.write("token ghs_" + "A1b2" * 9 + "\n")
        assert secret not in buf.getvalue() and "A1b2A1b2" not in buf.getvalue()
        assert "exit 1: ***\n" in buf.getvalue()


def test_annotations_are_redacted_and_masks_registered() -> None:
    from evolve_action import redact

    buf = io.StringIO()
    out = gate(buf, actions=True)
    mask(out, "masked-value-123")  # the mask line itself must carry the value to the runner
    annotate(out, "error", "leaked masked-value-123", file="masked-value-123.json", title="x")
    assert "masked-value-123" in redact.redactor().values
    assert _commands(buf.getvalue()) == [
        "::add-mask::masked-value-123",
        "::error file=***.json,title=x::leaked ***",
    ]
