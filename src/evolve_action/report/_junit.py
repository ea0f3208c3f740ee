"""JUnit XML export of stored results (report spec §5.5).

Owns: `render_junit`: one `<testsuite>` per loaded results file (plugin/skill) with ≥1 case after the
active filter, one `<testcase>` per trigger query × model and per eval × model, failures carrying
their evidence as element text.

Guarantees: deterministic, well-formed XML in Go `xml.MarshalIndent` style (2-space indent, open/close
pairs for empty elements, Go's escaping of `& < > " '`, tab, newline and carriage return; characters
XML cannot hold become U+FFFD). Never does: I/O, printing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from evolve_action.report._rollup import LoadedPlugin, filter_file
from evolve_action.results import EvalResult, TriggerResult

__all__ = ["JUnitCase", "JUnitSuite", "build_suites", "render_junit", "xml_escape"]

_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&#34;",
    "'": "&#39;",
    "\t": "&#x9;",
    "\n": "&#xA;",
    "\r": "&#xD;",
}


# A character `xml_escape` changes: one it escapes, or one XML cannot hold (XML 1.0 `Char`: tab,
# line feed, carriage return, U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF).
_CHANGED = re.compile("[&<>\"'\t\n\r]|[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _replacement(m: re.Match[str]) -> str:
    return _ESCAPES.get(m.group(), "\ufffd")


def xml_escape(s: str) -> str:
    """Go `xml.EscapeText` semantics (used for both attributes and character data): each
    character of `_ESCAPES` escaped, one XML cannot hold replaced by U+FFFD."""
    return _CHANGED.sub(_replacement, s)


@dataclass(frozen=True, slots=True, kw_only=True)
class JUnitCase:
    """One `<testcase>`."""

    name: str
    classname: str
    time: float
    outcome: str | None = None
    """`failure`, `error`, `skipped`, or None for a pass."""
    message: str = ""
    """The `message` attribute of the outcome element (not for `skipped`)."""
    text: str = ""
    """Evidence written as the outcome element's text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JUnitSuite:
    """One `<testsuite>` (one results file)."""

    name: str
    cases: tuple[JUnitCase, ...]

    def count(self, outcome: str) -> int:
        """Cases whose outcome element is `outcome`."""
        return sum(1 for c in self.cases if c.outcome == outcome)

    @property
    def time(self) -> float:
        """Sum of the cases' times."""
        return sum(c.time for c in self.cases)


def _trigger_case(cls: str, r: TriggerResult) -> JUnitCase:
    time = r.avg_run_seconds or 0.0
    if r.passed is None:
        return JUnitCase(name=r.query, classname=cls, time=time, outcome="skipped")
    if r.passed is False:
        expected = "yes" if r.should_trigger else "no"
        rate = f"{r.hits}/{r.runs}" if r.hits is not None and r.runs is not None else "?"
        return JUnitCase(
            name=r.query,
            classname=cls,
            time=time,
            outcome="failure",
            message="did not trigger as expected",
            text=f"triggered in {rate} runs (expected: {expected})",
        )
    return JUnitCase(name=r.query, classname=cls, time=time)


def _eval_case(cls: str, r: EvalResult) -> JUnitCase:
    name = r.name or r.id
    time = (r.timing.executor_duration_seconds if r.timing is not None else None) or 0.0
    if r.passed is False:
        lines = [
            f"failed `{x.text}`: {x.evidence}" for x in r.expectations or () if x.passed is False
        ]
        return JUnitCase(
            name=name,
            classname=cls,
            time=time,
            outcome="failure",
            message="assertions failed",
            text="\n".join(lines),
        )
    if r.runtime_error:
        return JUnitCase(
            name=name,
            classname=cls,
            time=time,
            outcome="error",
            message=r.runtime_error,
            text=r.runtime_error,
        )
    if r.passed is None:
        return JUnitCase(name=name, classname=cls, time=time, outcome="skipped")
    return JUnitCase(name=name, classname=cls, time=time)


def build_suites(
    plugins: Sequence[LoadedPlugin], active: Collection[str] | None
) -> list[JUnitSuite]:
    """One suite per loaded file with ≥1 case after the filter, in plugin and skill order.

    Cases go in sorted model-key order; within a model, trigger results then eval results.
    """
    suites: list[JUnitSuite] = []
    for p in plugins:
        for f in p.files:
            cases: list[JUnitCase] = []
            for key, me in filter_file(f.results, active).items():
                base = f"{p.name}.{f.skill}.{key}"
                if me.triggers is not None:
                    cases.extend(_trigger_case(f"{base}.triggers", r) for r in me.triggers.results)
                if me.evals is not None:
                    cases.extend(_eval_case(f"{base}.evals", r) for r in me.evals.results)
            if cases:
                suites.append(JUnitSuite(name=f"{p.name}/{f.skill}", cases=tuple(cases)))
    return suites


def _attrs(pairs: Sequence[tuple[str, str]], memo: dict[str, str]) -> str:
    """` k="v"…`; `memo` holds each distinct value escaped once (names, class names and times
    repeat for every model and query)."""
    out = []
    for k, v in pairs:
        e = memo.get(v)
        if e is None:
            e = memo[v] = xml_escape(v)
        out.append(f' {k}="{e}"')
    return "".join(out)


def _counts(suites: Sequence[JUnitSuite]) -> tuple[int, int, int, int]:
    tests = sum(len(s.cases) for s in suites)
    return (
        tests,
        sum(s.count("failure") for s in suites),
        sum(s.count("error") for s in suites),
        sum(s.count("skipped") for s in suites),
    )


def render_junit(suites: Sequence[JUnitSuite]) -> str:
    """The JUnit XML document (with the XML header and a trailing newline)."""
    tests, failures, errors, skipped = _counts(suites)
    total_time = sum(s.time for s in suites)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    memo: dict[str, str] = {}
    root_attrs = _attrs(
        [
            ("tests", str(tests)),
            ("failures", str(failures)),
            ("errors", str(errors)),
            ("skipped", str(skipped)),
            ("time", f"{total_time:.3f}"),
        ],
        memo,
    )
    if not suites:
        lines.append(f"<testsuites{root_attrs}></testsuites>")
        return "\n".join(lines) + "\n"
    lines.append(f"<testsuites{root_attrs}>")
    for s in suites:
        attrs = _attrs(
            [
                ("name", s.name),
                ("tests", str(len(s.cases))),
                ("failures", str(s.count("failure"))),
                ("errors", str(s.count("error"))),
                ("skipped", str(s.count("skipped"))),
                ("time", f"{s.time:.3f}"),
            ],
            memo,
        )
        lines.append(f"  <testsuite{attrs}>")
        for c in s.cases:
            cattrs = _attrs(
                [("name", c.name), ("classname", c.classname), ("time", f"{c.time:.3f}")], memo
            )
            if c.outcome is None:
                lines.append(f"    <testcase{cattrs}></testcase>")
                continue
            lines.append(f"    <testcase{cattrs}>")
            oattrs = "" if c.outcome == "skipped" else _attrs([("message", c.message)], memo)
            lines.append(f"      <{c.outcome}{oattrs}>{xml_escape(c.text)}</{c.outcome}>")
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"
