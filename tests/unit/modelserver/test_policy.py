"""Unit tests of the scripted model server's pure parts: policy parsing, request views, decisions, wire."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evolve_action.modelserver import (
    Engine,
    Policy,
    PolicyError,
    parse_assertions,
    parse_skill_listing,
    view,
)
from evolve_action.modelserver._engine import judge_input, route_score
from evolve_action.modelserver._policy import Judge
from evolve_action.modelserver._request import Skill, count_tokens
from evolve_action.modelserver._wire import error_body, message_json, sse_events, usage_for

LISTING = (
    "# Environment\n - Primary working directory: /work/ws\n\n"
    "The following skills are available for use with the Skill tool:\n\n"
    "- csv-cleaner: Clean CSV files - remove duplicate rows, normalise headers.\n"
    "- pdf-tools: Extract text and tables from PDF files.\n"
    "- claude-api: Build apps with the Claude API.\n"
    "SKIP when another provider is named.\n"
    "- init: Initialize a new CLAUDE.md file\n"
    "\nWhile bypass permissions mode is active:\n- not-a-skill: nope\n"
)


def cc_body(
    prompt: str,
    *,
    assistant_turns: int = 0,
    tools: tuple[str, ...] = ("Bash", "Read", "Skill", "Write"),
    tool_result: str = "",
    listing: str = LISTING,
    **extra: Any,
) -> dict[str, Any]:
    """A request shaped like Claude Code 2.1's: reminders before the prompt, a system-role message."""
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "<system-reminder>\nAs you answer… skills: - x: y\n</system-reminder>",
                },
                {"type": "text", "text": prompt},
            ],
        },
        {"role": "system", "content": [{"type": "text", "text": listing}]},
    ]
    for i in range(assistant_turns):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}}
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{i}", "content": tool_result}
                ],
            }
        )
    body: dict[str, Any] = {
        "model": "claude-opus-5-5",
        "system": [{"type": "text", "text": "You are a Claude agent."}],
        "tools": [
            {"name": t, "description": f"the {t} tool", "input_schema": {"type": "object"}}
            for t in tools
        ],
        "messages": messages,
        "stream": True,
        "max_tokens": 1000,
    }
    body.update(extra)
    return body


def decide(policy: str | dict[str, Any], body: dict[str, Any]) -> Any:
    return Engine(Policy.coerce(policy)).decide(view(body))


# -- policy parsing ------------------------------------------------------------------------------

BAD_POLICIES = [
    ("rules: [", "invalid YAML"),
    ("rules: {a: 1}", "expected a list of rules"),
    ("rules: [{name: a, text: hi, bogus: 1}]", "unknown key 'bogus'"),
    ("rules: [{name: a}]", "a rule needs an action"),
    ("rules: [{name: a, text: hi, route: {}}]", "one action"),
    ("rules: [{name: a, when: {prompt: '('}, text: x}]", "invalid regex"),
    ("rules: [{name: a, status: 418}]", "unsupported status 418"),
    ("rules: [{name: a, fault: {probability: 0.5}}]", "exactly one of"),
    ("rules: [{name: a, text: x, when: {turn: 'soon'}}]", "bad turn"),
    ("rules: [{name: a, text: x}, {name: a, text: y}]", "duplicate rule name"),
    ("rules: [{name: a, steps: []}]", "non-empty list"),
    ("rules: [{name: a, route: {threshold: 2}}]", "[0.0, 1.0]"),
    ("unknown_top: 1", "unknown key 'unknown_top'"),
    ("rules: [{name: a, steps: [{input: {}}]}]", "'input' needs a 'tool'"),
]


@pytest.mark.parametrize(("text", "message"), BAD_POLICIES, ids=[m for _, m in BAD_POLICIES])
def test_bad_policies_raise_policy_error(text: str, message: str) -> None:
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(text)
    assert message in str(info.value)


def test_yaml_error_has_line_and_file(tmp_path: Any) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("rules:\n  - name: a\n    text: [unclosed\n", encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        Policy.from_file(path)
    assert info.value.path == path
    assert info.value.line is not None


def test_missing_file_is_policy_error(tmp_path: Any) -> None:
    with pytest.raises(PolicyError, match="cannot read policy"):
        Policy.from_file(tmp_path / "absent.yaml")


TURNS = [
    (2, (2, 2)),
    (">=2", (2, None)),
    (">2", (3, None)),
    ("<3", (1, 2)),
    ("<=3", (1, 3)),
    ("1-3", (1, 3)),
    ([2, None], (2, None)),
]


@pytest.mark.parametrize(("value", "expected"), TURNS, ids=[str(v) for v, _ in TURNS])
def test_turn_forms(value: Any, expected: tuple[int, int | None]) -> None:
    policy = Policy.from_dict({"rules": [{"name": "r", "when": {"turn": value}, "text": "x"}]})
    assert policy.rules[0].match.turn == expected


def test_shorthands() -> None:
    policy = Policy.from_yaml(
        """
default: fallback text
rules:
  - {name: s, when: "hello", text: hi}
  - {name: t, tool: Bash, input: '{"command": "ls"}'}
  - {name: f, status: 529, times: 2}
"""
    )
    assert policy.default.steps[0].text == "fallback text"
    assert policy.rules[0].match.prompt is not None
    assert policy.rules[1].steps[0].tools[0].input == {"command": "ls"}
    fault = policy.rules[2].fault
    assert fault is not None and fault.status == 529 and fault.times == 2
    assert policy.rules[2].action == "fault"


# -- request views -------------------------------------------------------------------------------


def test_view_strips_reminders_and_counts_turns() -> None:
    v = view(cc_body("dedupe my csv", assistant_turns=2, tool_result="total 3"))
    assert v.prompt == "dedupe my csv"
    assert v.last_user == ""
    assert v.turn == 3
    assert v.tool_results == "total 3"
    assert v.tools == ("Bash", "Read", "Skill", "Write")
    assert "Primary working directory: /work/ws" in v.system
    assert v.tool_uses == (("Bash", {"command": "ls"}), ("Bash", {"command": "ls"}))


def test_skill_listing_from_system_message() -> None:
    skills = view(cc_body("x")).skills
    assert [s.name for s in skills] == ["csv-cleaner", "pdf-tools", "claude-api", "init"]
    assert (
        skills[2].description
        == "Build apps with the Claude API. SKIP when another provider is named."
    )


LISTINGS = [
    (
        "<available_skills><skill><name>a-b</name><description>Does A</description></skill></available_skills>",
        ["a-b"],
    ),
    ("Available skills:\n- plug:one: first\n- two: second\n\nafter", ["plug:one", "two"]),
    ("no listing here\n- x: y", []),
    (
        "The following skills are available for use with the Skill tool:\n\n- a: first\n- b\n"
        "- plug:c\n- d: last\n\nafter",
        ["a", "b", "plug:c", "d"],
    ),
]


@pytest.mark.parametrize(
    ("text", "names"), LISTINGS, ids=["xml", "namespaced", "none", "name-only"]
)
def test_parse_skill_listing(text: str, names: list[str]) -> None:
    assert [s.name for s in parse_skill_listing(text)] == names


def test_name_only_entries_are_read_as_such() -> None:
    """Claude Code lists a skill whose description did not fit its budget as `- name` (no colon):
    it is an entry of its own, never a continuation of the previous description."""
    text = (
        "The following skills are available for use with the Skill tool:\n\n"
        "- skill-068: Use when the user asks about topic 68\n"
        "- skill-069\n"
        "- plug:skill-070\n"
        "- plug:skill-071: Namespaced: with a colon inside\n"
        "- empty:\n\n"
        "- not-part: of the listing"
    )
    skills = parse_skill_listing(text)
    assert [(s.name, s.description, s.name_only) for s in skills] == [
        ("skill-068", "Use when the user asks about topic 68", False),
        ("skill-069", "", True),
        ("plug:skill-070", "", True),
        ("plug:skill-071", "Namespaced: with a colon inside", False),
        ("empty", "", False),
    ]


def test_continuation_lines_join_the_previous_description() -> None:
    text = "Available skills:\n- a: first line\n  second line\n- b\n  stray\n"
    skills = parse_skill_listing(text)
    assert [(s.name, s.description, s.name_only) for s in skills] == [
        ("a", "first line second line", False),
        ("b", "", True),
    ]


ASSERTION_PROMPTS = [
    (
        "Assertions:\n<assertions>\n1. The file exists\n2. It says hi\n</assertions>\nThe agent said:\n3. not this",
        [("1", "The file exists"), ("2", "It says hi")],
    ),
    (
        'Grade these: [{"id": "a1", "text": "first"}, {"id": "a2", "text": "second"}]',
        [("a1", "first"), ("a2", "second")],
    ),
    ('{"assertions": [{"id": 7, "text": "seven"}]}', [("7", "seven")]),
    ("- A1: alpha\n- [B2] beta\nnot numbered: no", [("A1", "alpha"), ("B2", "beta")]),
    ("[3] third\n4) fourth", [("3", "third"), ("4", "fourth")]),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    ASSERTION_PROMPTS,
    ids=["tagged", "json-list", "json-object", "dash", "brackets"],
)
def test_parse_assertions(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(a.id, a.text) for a in parse_assertions(text)] == expected


# -- decisions -----------------------------------------------------------------------------------

STEPS = """
rules:
  - name: wrc
    when: {prompt: "make the greeting"}
    steps:
      - {text: "Writing.", tool: Write, input: {file_path: "{cwd}/hello.txt", content: "hi"}}
      - {tool: Bash, input: {command: "cat hello.txt"}}
      - "Done at turn {turn}."
"""


@pytest.mark.parametrize(
    ("turns", "kinds", "stop"),
    [
        (0, ["text", "tool_use:Write"], "tool_use"),
        (1, ["tool_use:Bash"], "tool_use"),
        (2, ["text"], "end_turn"),
        (5, ["text"], "end_turn"),
    ],
)
def test_steps_follow_turns(turns: int, kinds: list[str], stop: str) -> None:
    d = decide(STEPS, cc_body("please make the greeting file", assistant_turns=turns))
    assert [
        b["type"] + (":" + b["name"] if b["type"] == "tool_use" else "") for b in d.blocks
    ] == kinds
    assert d.stop_reason == stop
    assert d.rule == "wrc"
    if turns == 0:
        assert d.blocks[1]["input"] == {"file_path": "/work/ws/hello.txt", "content": "hi"}
    if turns == 2:
        assert d.blocks[0]["text"] == "Done at turn 3."


MATCHES = [
    ({"prompt": "csv"}, {}, True),
    ({"prompt": "pdf"}, {}, False),
    ({"turn": 1}, {}, True),
    ({"turn": ">=2"}, {}, False),
    ({"tools": ["Skill", "Bash"]}, {}, True),
    ({"tools": ["WebFetch"]}, {}, False),
    ({"no_tools": True}, {}, False),
    ({"no_tools": True}, {"tools": []}, True),
    ({"model": "opus"}, {}, True),
    ({"model": "haiku"}, {}, False),
    ({"system": "working directory: /work/ws"}, {}, True),
    ({"stream": False}, {}, False),
    (
        {"tool_choice": "verdict"},
        {"tool_choice": {"type": "tool", "name": "submit_verdicts"}},
        True,
    ),
    ({"tool_choice": "verdict"}, {}, False),
    ({"path": "count_tokens"}, {}, False),
    ({"called": "^Bash .*ls"}, {}, False),
]


@pytest.mark.parametrize(
    ("when", "extra", "hit"), MATCHES, ids=[json.dumps(w) + json.dumps(e) for w, e, _ in MATCHES]
)
def test_match_conditions(when: dict[str, Any], extra: dict[str, Any], hit: bool) -> None:
    body = cc_body("dedupe my csv")
    body.update(extra)
    d = decide({"rules": [{"name": "r", "when": when, "text": "hit"}]}, body)
    assert (d.rule == "r") is hit


def test_called_match() -> None:
    policy = {
        "rules": [{"name": "r", "when": {"called": '^Bash \\{"command":"ls"'}, "text": "after ls"}]
    }
    assert decide(policy, cc_body("x", assistant_turns=1)).rule == "r"
    assert decide(policy, cc_body("x")).rule == "default"


def test_tool_result_match() -> None:
    policy = {"rules": [{"name": "r", "when": {"tool_result": "exit code 1"}, "text": "failed"}]}
    assert decide(policy, cc_body("x", assistant_turns=1, tool_result="exit code 1")).rule == "r"
    assert decide(policy, cc_body("x", assistant_turns=1, tool_result="ok")).rule == "default"


ROUTES = [
    ("dedupe the rows of my CSV file", {}, ["Skill:csv-cleaner"]),
    ("extract tables from this PDF", {}, ["Skill:pdf-tools"]),
    ("what is the weather like", {}, ["text"]),
    ("extract tables from this PDF", {"namespace": "docs"}, ["Skill:docs:pdf-tools"]),
    (
        "extract tables from this PDF",
        {"read_first": True},
        ["Read:/work/ws/.claude/skills/pdf-tools/SKILL.md"],
    ),
    ("extract tables from this PDF", {"skills": ["csv-cleaner"]}, ["text"]),
    ("extract tables from this PDF quickly", {"threshold": 0.9}, ["text"]),
]


@pytest.mark.parametrize(
    ("prompt", "route", "expected"), ROUTES, ids=[f"{p}-{r}" for p, r, _ in ROUTES]
)
def test_route(prompt: str, route: dict[str, Any], expected: list[str]) -> None:
    d = decide({"rules": [{"name": "r", "route": route or True}]}, cc_body(prompt))
    got = [
        b["type"]
        if b["type"] == "text"
        else f"{b['name']}:{b['input'].get('skill') or b['input'].get('file_path')}"
        for b in d.blocks
    ]
    assert got == expected


def test_route_read_first_then_skill_then_answer() -> None:
    policy = {"rules": [{"name": "r", "route": {"read_first": True, "answer": "finished"}}]}
    body = cc_body("extract tables from this PDF")
    read = {
        "type": "tool_use",
        "id": "a",
        "name": "Read",
        "input": {"file_path": "/work/ws/.claude/skills/pdf-tools/SKILL.md"},
    }
    body["messages"] += [
        {"role": "assistant", "content": [read]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "a", "content": "..."}],
        },
    ]
    d = decide(policy, body)
    assert d.blocks[0]["name"] == "Skill" and d.blocks[0]["input"] == {"skill": "pdf-tools"}
    skill = {"type": "tool_use", "id": "b", "name": "Skill", "input": {"skill": "pdf-tools"}}
    body["messages"] += [
        {"role": "assistant", "content": [skill]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "b", "content": "Launching"}],
        },
    ]
    d = decide(policy, body)
    assert d.blocks == ({"type": "text", "text": "finished"},)


def test_route_score() -> None:
    skill = Skill(name="pdf-tools", description="Extract text and tables from PDF files.")
    assert route_score("extract the tables from a pdf", skill) == 1.0
    assert route_score("bake a cake", skill) == 0.0
    assert route_score("", skill) == 0.0


JUDGE_PROMPT = "Assertions to verify:\n<assertions>\n1. The file hello.txt exists\n2. The answer is in French\n</assertions>\n"
VERDICT_TOOL = {
    "name": "submit_verdicts",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer"},
                        "passed": {"type": "boolean"},
                        "evidence": {"type": "string"},
                    },
                },
            }
        },
    },
}


@pytest.mark.parametrize(
    "choice", [{"type": "tool", "name": "submit_verdicts"}, {"type": "any"}], ids=["forced", "any"]
)
def test_judge_passes_by_regex(choice: dict[str, Any]) -> None:
    body = {
        "model": "claude-sonnet-5",
        "messages": [{"role": "user", "content": JUDGE_PROMPT}],
        "tools": [VERDICT_TOOL],
        "tool_choice": choice,
    }
    d = decide({"rules": [{"name": "j", "judge": {"pass": "exists"}}]}, body)
    assert d.stop_reason == "tool_use"
    (block,) = d.blocks
    assert block["name"] == "submit_verdicts"
    verdicts = block["input"]["verdicts"]
    assert [(v["id"], v["passed"]) for v in verdicts] == [(1, True), (2, False)]
    assert all(isinstance(v["evidence"], str) and v["evidence"] for v in verdicts)


def test_default_rule_judges_forced_tool_and_passes_all() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": JUDGE_PROMPT}],
        "tools": [VERDICT_TOOL],
        "tool_choice": {"type": "tool", "name": "submit_verdicts"},
    }
    d = decide({}, body)
    assert [v["passed"] for v in d.blocks[0]["input"]["verdicts"]] == [True, True]


def test_judge_input_follows_schema_keys() -> None:
    schema = {
        "properties": {
            "results": {
                "type": "array",
                "items": {
                    "properties": {
                        "assertion_id": {"type": "string"},
                        "ok": {"type": "boolean"},
                        "reason": {"type": "string"},
                    }
                },
            }
        }
    }
    out = judge_input(
        parse_assertions("1. a\n2. b"), Judge(fail_pattern=__import__("re").compile("b")), schema
    )
    assert [(r["assertion_id"], r["ok"]) for r in out["results"]] == [("1", True), ("2", False)]
    assert set(out["results"][0]) == {"assertion_id", "ok", "reason"}


def test_fault_times_then_recovers() -> None:
    engine = Engine(
        Policy.from_yaml("rules: [{name: f, when: flaky, text: ok, status: 529, times: 2}]")
    )
    body = cc_body("a flaky one")
    statuses = [engine.decide(view(body)).fault for _ in range(3)]
    assert [f.status if f else None for f in statuses] == [529, 529, None]


def test_probability_faults_are_seeded_and_deterministic() -> None:
    text = "seed: 7\nfaults: [{status: 500, probability: 0.5}]"
    runs = []
    for _ in range(2):
        engine = Engine(Policy.from_yaml(text))
        runs.append([engine.decide(view(cc_body(f"q{i}"))).fault is not None for i in range(40)])
    assert runs[0] == runs[1]
    assert 5 < sum(runs[0]) < 35
    other = Engine(Policy.from_yaml(text.replace("seed: 7", "seed: 8")))
    assert [other.decide(view(cc_body(f"q{i}"))).fault is not None for i in range(40)] != runs[0]


def test_stop_after_falls_through() -> None:
    engine = Engine(
        Policy.from_yaml(
            "rules: [{name: once, text: first, stop_after: 1}, {name: then, text: second}]"
        )
    )
    assert [engine.decide(view(cc_body("x"))).rule for _ in range(3)] == ["once", "then", "then"]


def test_disconnect_rule_keeps_content() -> None:
    d = decide("rules: [{name: d, text: hello, disconnect: true}]", cc_body("x"))
    assert d.fault is not None and d.fault.disconnect
    assert d.blocks == ({"type": "text", "text": "hello"},)


# -- wire ----------------------------------------------------------------------------------------


def test_sse_sequence_and_json_agree() -> None:
    blocks = (
        {"type": "text", "text": "x" * 50},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls -la"}},
    )
    usage = {
        "input_tokens": 3,
        "output_tokens": 9,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 5,
    }
    events = sse_events(
        msg_id="msg_1", model="m", blocks=blocks, stop_reason="tool_use", usage=usage
    )
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1:3] == ["content_block_start", "ping"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    text = "".join(
        d["delta"]["text"] for n, d in events if n == "content_block_delta" and d["index"] == 0
    )
    partial = "".join(
        d["delta"]["partial_json"]
        for n, d in events
        if n == "content_block_delta" and d["index"] == 1
    )
    assert text == "x" * 50 and json.loads(partial) == {"command": "ls -la"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[-2][1]["usage"]["output_tokens"] == 9
    msg = message_json(
        msg_id="msg_1", model="m", blocks=blocks, stop_reason="tool_use", usage=usage
    )
    assert msg["content"][1]["input"] == {"command": "ls -la"}
    assert msg["usage"]["cache_creation_input_tokens"] == 5


def test_usage_is_deterministic_and_caches_prefix() -> None:
    body1 = cc_body("hello there")
    body2 = cc_body("hello there", assistant_turns=1)
    blocks = ({"type": "text", "text": "abcdefgh"},)
    u1 = usage_for(body1, blocks, turn=1, cache=True)
    u2 = usage_for(body2, blocks, turn=2, cache=True)
    assert u1 == usage_for(body1, blocks, turn=1, cache=True)
    assert u1["cache_creation_input_tokens"] == u2["cache_read_input_tokens"] > 0
    assert u1["cache_read_input_tokens"] == u2["cache_creation_input_tokens"] == 0
    assert u1["output_tokens"] == 2
    flat = usage_for(body1, blocks, turn=1, cache=False)
    assert flat["input_tokens"] == count_tokens(body1)


def test_count_tokens_is_chars_over_four() -> None:
    assert count_tokens({"messages": [{"role": "user", "content": "x" * 40}]}) == 10
    assert count_tokens({"messages": [{"role": "user", "content": "x" * 41}]}) == 11
    assert count_tokens({}) == 1


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit_error"), (500, "api_error"), (529, "overloaded_error")]
)
def test_error_body(status: int, kind: str) -> None:
    assert error_body(status, "boom") == {
        "type": "error",
        "error": {"type": kind, "message": "boom"},
    }


def test_session_ordinal_selects_one_run() -> None:
    engine = Engine(
        Policy.from_yaml("rules: [{name: flaky, when: {prompt: q, session: 2}, status: 400}]")
    )
    rules = [
        engine.decide(view(cc_body("q"), session=s)).rule for s in ["a", "a", "b", "b", "c", "a"]
    ]
    assert rules == ["default", "default", "flaky", "flaky", "default", "default"]


def test_session_falls_back_to_metadata() -> None:
    body = cc_body("q", metadata={"user_id": json.dumps({"device_id": "d", "session_id": "s-1"})})
    assert view(body).session == "s-1"
    assert view(body, session="hdr").session == "hdr"


def test_working_directory_and_skills_found_in_a_user_reminder() -> None:
    """Some models get the environment section and skill listing in a user-message reminder."""
    from evolve_action.modelserver._engine import working_directory
    from evolve_action.modelserver._request import view

    reminder = (
        "<system-reminder>\nPrimary working directory: /tmp/ws-123\n"
        "The following skills are available for use with the Skill tool:\n\n"
        "- csv-report: Use when summarising CSV files.\n</system-reminder>"
    )
    body = {
        "model": "claude-haiku-4-5",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": reminder},
                    {"type": "text", "text": "summarise sales.csv"},
                ],
            }
        ],
    }
    request = view(body)
    assert working_directory(request) == "/tmp/ws-123"
    assert "csv-report" in request.system
    assert request.prompt == "summarise sales.csv"


def _chance_rules(seed: int, sessions: list[str], prompt: str = "q") -> list[str]:
    engine = Engine(
        Policy.from_yaml(
            f"seed: {seed}\nrules: [{{name: half, when: {{prompt: q, chance: 0.5}}, text: hit}}]"
        )
    )
    return [engine.decide(view(cc_body(prompt), session=s)).rule for s in sessions]


def test_chance_is_one_draw_per_session_and_seeded() -> None:
    sessions = [f"s{i}" for i in range(200)]
    rules = _chance_rules(7, [s for s in sessions for _ in range(2)])  # two turns each
    assert rules[0::2] == rules[1::2]  # every turn of a session sees the same draw
    fired = sum(r == "half" for r in rules[0::2])
    assert 70 < fired < 130  # about half of 200 (binomial sd ≈ 7)
    assert _chance_rules(7, sessions) == rules[0::2]  # same seed, same draws
    assert _chance_rules(8, sessions) != rules[0::2]  # another seed, other draws


def test_chance_count_does_not_depend_on_arrival_order() -> None:
    a = _chance_rules(3, [f"s{i}" for i in range(50)])
    b = _chance_rules(3, [f"s{i}" for i in reversed(range(50))])
    assert a == b  # the k-th arriving session draws k's value, whoever it is


@pytest.mark.parametrize(("p", "want"), [(0.0, "default"), (1.0, "half")])
def test_chance_bounds(p: float, want: str) -> None:
    engine = Engine(Policy.from_yaml(f"rules: [{{name: half, when: {{chance: {p}}}, text: x}}]"))
    assert {engine.decide(view(cc_body("q"), session=str(i))).rule for i in range(20)} == {want}


def test_chance_out_of_range_is_refused() -> None:
    with pytest.raises(PolicyError, match=r"chance.*\[0.0, 1.0\]"):
        Policy.from_yaml("rules: [{name: r, when: {chance: 1.5}, text: x}]")
