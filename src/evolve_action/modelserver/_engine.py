"""Decide the scripted model's answer to one request: rule matching, steps, routing, judging,
drafting (`_draft`), faults.

Owns: `Engine` (a policy plus the per-rule counters that `times`, `stop_after` and seeded probabilities
need) and the `Decision` it returns. Guarantees: for a given policy, request body and history of earlier
requests with the same conversation key, the decision is the same whatever the thread interleaving
(probabilistic faults hash the seed, rule, conversation key and attempt number; a rule's `when.chance`
hashes the seed, rule, prompt and the session's ordinal among that prompt's sessions, so how many
sessions fire does not depend on interleaving; no global RNG). Never does: I/O or sleeping (the server
applies delays).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evolve_action.modelserver._draft import draft_input
from evolve_action.modelserver._policy import (
    Fault,
    Judge,
    Policy,
    Route,
    Rule,
    Step,
    ToolUse,
    Usage,
)
from evolve_action.modelserver._request import (
    Assertion,
    RequestView,
    Skill,
    parse_assertions,
)
from evolve_action.modelserver._wire import dumps


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """The answer to one request: content blocks and stop reason, or a fault."""

    rule: str
    """Name of the rule that answered (`default` when none matched)."""
    blocks: tuple[Mapping[str, Any], ...] = ()
    """Content blocks: `{"type": "text", "text"}` and `{"type": "tool_use", "id", "name", "input"}`."""
    stop_reason: str = "end_turn"
    fault: Fault | None = None
    delay_ms: int = 0
    model: str | None = None
    usage: Usage | None = None
    note: str = ""
    """Why this answer (route score, judge verdicts…), for the request log."""
    extra: Mapping[str, Any] = field(default_factory=dict)


_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "should",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "use",
        "used",
        "uses",
        "using",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
        "skill",
        "skills",
        "when",
        "user",
        "asks",
        "wants",
    ]
)


def _tokens(text: str) -> set[str]:
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in STOPWORDS or len(w) < 2:
            continue
        out.add(_stem(w))
    return out


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def route_score(prompt: str, skill: Skill) -> float:
    """Token-overlap score in [0, 1]: share of the prompt's content words found in the skill's name+description.

    Words are lower-cased alphanumeric runs, minus stop words, with a light suffix strip
    (`-ing`, `-ed`, `-es`, `-s`); the name's `-`/`_`-separated parts count as words.
    """
    words = _tokens(prompt)
    if not words:
        return 0.0
    target = _tokens(skill.description) | _tokens(skill.name.replace("-", " ").replace("_", " "))
    return len(words & target) / len(words)


def best_skill(prompt: str, skills: tuple[Skill, ...], route: Route) -> tuple[Skill | None, float]:
    """The best-scoring candidate skill (ties: listing order) and its score; None below the threshold."""
    best: Skill | None = None
    score = 0.0
    for skill in skills:
        if (
            route.skills
            and _bare(skill.name) not in route.skills
            and skill.name not in route.skills
        ):
            continue
        s = route_score(prompt, skill)
        if s > score:
            best, score = skill, s
    if best is None or score < route.threshold or score == 0.0:
        return None, score
    return best, score


def _bare(name: str) -> str:
    return name.rsplit(":", 1)[-1]


_CWDS = (
    *(
        re.compile(rf"^\W*{label}:\s*(\S.*?)\s*$", re.MULTILINE)
        for label in ("Primary working directory", "Working directory")
    ),
    re.compile(r"<cwd>\s*(\S.*?)\s*</cwd>"),
)


def working_directory(view: RequestView) -> str:
    """The agent's working directory as the agent states it (Claude Code: `Primary working
    directory: …` in its environment section, older versions `Working directory: …`; Codex:
    `<cwd>…</cwd>` in its `<environment_context>`), else ``."""
    for pattern in _CWDS:
        m = pattern.search(view.system)
        if m:
            return m.group(1)
    return ""


def _fill(value: Any, names: Mapping[str, str]) -> Any:
    """Replace `{name}` placeholders of known names in every string of a JSON value."""
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: names.get(m.group(1), m.group(0)), value)
    if isinstance(value, Mapping):
        return {k: _fill(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    return value


class Engine:
    """A policy plus the counters it needs; `decide` is thread-safe."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._lock = threading.Lock()
        self._answered: dict[str, int] = {}
        self._attempts: dict[tuple[str, str], int] = {}
        self._sessions: dict[str, dict[str, int]] = {}
        self._draws: dict[tuple[str, str], dict[str, bool]] = {}
        self._ids = 0

    def _next_id(self) -> str:
        with self._lock:
            self._ids += 1
            n = self._ids
        return "toolu_" + hashlib.sha256(f"tool-{n}".encode()).hexdigest()[:24]

    def matches(self, rule: Rule, view: RequestView) -> bool:
        """True when every condition of the rule's `match` holds for the request."""
        m = rule.match
        if m.path is not None:
            if not m.path.search(view.path):
                return False
        elif not view.path.endswith(("/v1/messages", "/v1/responses")):
            return False
        checks: list[tuple[re.Pattern[str] | None, str]] = [
            (m.prompt, view.prompt),
            (m.last_user, view.last_user),
            (m.tool_result, view.tool_results),
            (m.any_tool_result, view.all_tool_results),
            (m.model, view.model),
            (m.system, view.system),
        ]
        for pattern, text in checks:
            if pattern is not None and not pattern.search(text):
                return False
        if m.called is not None and not any(
            m.called.search(f"{name} {dumps(dict(args))}") for name, args in view.tool_uses
        ):
            return False
        if m.tool_choice is not None and (
            view.forced_tool is None or not m.tool_choice.search(view.forced_tool)
        ):
            return False
        if m.turn is not None:
            lo, hi = m.turn
            if view.turn < lo or (hi is not None and view.turn > hi):
                return False
        if m.tools and not all(t in view.tools for t in m.tools):
            return False
        if m.no_tools is not None and m.no_tools != (not view.tools):
            return False
        if m.stream is not None and m.stream != view.stream:
            return False
        if m.session:
            with self._lock:
                seen = self._sessions.setdefault(rule.name, {})
                ordinal = seen.setdefault(view.session, len(seen) + 1)
            if ordinal not in m.session:
                return False
        if m.chance is not None:
            return self._chance(rule.name, m.chance, view)
        return True

    def _chance(self, name: str, chance: float, view: RequestView) -> bool:
        """The session's one seeded draw for a rule's `when.chance` (same answer on every turn)."""
        session = view.session or self._key(view)
        with self._lock:
            draws = self._draws.setdefault((name, view.prompt), {})
            if session not in draws:
                k = len(draws) + 1
                digest = hashlib.sha256(
                    f"{self.policy.seed}|chance|{name}|{view.prompt}|{k}".encode()
                ).digest()
                draws[session] = int.from_bytes(digest[:8], "big") / 2**64 < chance
            return draws[session]

    def _key(self, view: RequestView) -> str:
        return f"{view.path}|{view.model}|{view.prompt}|{view.turn}|{len(view.all_tool_results)}"

    def _fault_fires(self, fault: Fault, scope: str, view: RequestView) -> bool:
        key = (scope, self._key(view))
        with self._lock:
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
        if fault.times is not None and attempt >= fault.times:
            return False
        if fault.probability >= 1.0:
            return True
        digest = hashlib.sha256(f"{self.policy.seed}|{scope}|{key[1]}|{attempt}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < fault.probability

    def decide(self, view: RequestView) -> Decision:
        """Pick the rule for a request and build its answer (or fault)."""
        for i, global_fault in enumerate(self.policy.faults):
            if self._fault_fires(global_fault, f"faults[{i}]", view):
                if global_fault.status is not None:
                    return Decision(
                        rule=f"faults[{i}]", fault=global_fault, delay_ms=self.policy.latency_ms
                    )
                decision = self._answer(self.policy.default, view)
                return _with(
                    decision,
                    rule=f"faults[{i}]",
                    fault=global_fault,
                    delay_ms=self.policy.latency_ms,
                )
        rule = self.policy.default
        for candidate in self.policy.rules:
            if not self.matches(candidate, view):
                continue
            if candidate.stop_after is not None:
                with self._lock:
                    used = self._answered.get(candidate.name, 0)
                    if used >= candidate.stop_after:
                        continue
                    self._answered[candidate.name] = used + 1
            rule = candidate
            break
        delay = self.policy.latency_ms + rule.delay_ms
        fault: Fault | None = None
        if rule.fault is not None and self._fault_fires(rule.fault, rule.name, view):
            fault = rule.fault
            if fault.status is not None:
                return Decision(rule=rule.name, fault=fault, delay_ms=delay)
        if rule.action == "fault":
            # A fault-only rule answers like the default rule when its fault does not fire (times
            # exhausted, probability) or when the fault needs content to break (disconnect, malformed).
            decision = self._answer(self.policy.default, view)
            return _with(decision, rule=rule.name, fault=fault, delay_ms=delay)
        decision = self._answer(rule, view)
        return _with(decision, fault=fault, delay_ms=delay)

    def _answer(self, rule: Rule, view: RequestView) -> Decision:
        if rule.action == "route" and rule.route is not None:
            return self._route(rule, rule.route, view)
        if rule.action == "judge" or (
            rule is self.policy.default
            and rule.action in ("text", "steps")
            and verdict_tool(view) is not None
        ):
            return self._judge(rule, rule.judge or Judge(), view)
        if rule.action == "draft":
            return self._draft(rule, view)
        if rule.action == "echo":
            return self._blocks(rule, view, Step(text=view.last_user or view.prompt or "OK"))
        lo = rule.match.turn[0] if rule.match.turn else 1
        index = view.turn - lo
        if 0 <= index < len(rule.steps):
            return self._blocks(rule, view, rule.steps[index])
        last = rule.steps[-1] if rule.steps else Step(text="OK")
        final = last if not last.tools else Step(text="Done.")
        return self._blocks(rule, view, final, note=f"past the last step ({len(rule.steps)})")

    def _names(self, view: RequestView, **more: str) -> dict[str, str]:
        names = {
            "prompt": view.prompt,
            "turn": str(view.turn),
            "cwd": working_directory(view),
            "model": view.model,
        }
        names.update(more)
        return names

    def _blocks(
        self, rule: Rule, view: RequestView, step: Step, *, note: str = "", **names: str
    ) -> Decision:
        filled = self._names(view, **names)
        blocks: list[Mapping[str, Any]] = []
        if step.text is not None:
            blocks.append({"type": "text", "text": _fill(step.text, filled)})
        for tool in step.tools:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": self._next_id(),
                    "name": tool.name,
                    "input": _fill(dict(tool.input), filled),
                }
            )
        stop = "tool_use" if step.tools else "end_turn"
        return Decision(
            rule=rule.name,
            blocks=tuple(blocks),
            stop_reason=stop,
            model=rule.model,
            usage=rule.usage,
            note=note,
        )

    def _route(self, rule: Rule, route: Route, view: RequestView) -> Decision:
        skill, score = best_skill(view.prompt, view.skills, route)
        if skill is None:
            note = f"no skill above {route.threshold} (best score {score:.2f}, {len(view.skills)} listed)"
            return self._blocks(rule, view, Step(text=route.miss), note=note)
        name = skill.name
        if route.namespace and ":" not in name:
            name = f"{route.namespace}:{name}"
        cwd = working_directory(view)
        bare = _bare(skill.name)
        if skill.path:
            skill_md = skill.path
        else:
            skill_md = (
                f"{cwd}/.claude/skills/{bare}/SKILL.md"
                if cwd
                else f".claude/skills/{bare}/SKILL.md"
            )
        note = f"routed to {name} (score {score:.2f})"
        read_done = any(_reads(n, i, f"/{bare}/SKILL.md") for n, i in view.tool_uses)
        skill_done = any(n == "Skill" for n, _ in view.tool_uses)
        # Codex has no `Skill` tool: its agent uses a skill by reading the listed SKILL.md.
        read_only = route.read_only or view.path.endswith("/v1/responses")
        if (route.read_first or read_only) and not read_done and not skill_done:
            step = Step(tools=(ToolUse(name="Read", input={"file_path": skill_md}),))
            return self._blocks(rule, view, step, note=note)
        if read_only or skill_done:
            return self._blocks(rule, view, Step(text=route.answer), note=note, skill=name)
        step = Step(tools=(ToolUse(name="Skill", input={"skill": name}),))
        return self._blocks(rule, view, step, note=note)

    def _draft(self, rule: Rule, view: RequestView) -> Decision:
        """Answer a drafting request (`evolve-action init`) through its forced tool, from the
        request's own text only (`_draft.draft_input`)."""
        target = view.forced_tool or next((t for t in view.tools if "draft" in t.lower()), None)
        if target is None:
            return self._blocks(
                rule, view, Step(text="No draft tool offered."), note="draft: no draft tool"
            )
        tool_input = draft_input(_user_text(view))
        block = {"type": "tool_use", "id": self._next_id(), "name": target, "input": tool_input}
        note = (
            f"draft: {len(tool_input['should_trigger'])} should, "
            f"{len(tool_input['should_not_trigger'])} should not, {len(tool_input['evals'])} evals"
        )
        return Decision(
            rule=rule.name,
            blocks=(block,),
            stop_reason="tool_use",
            model=rule.model,
            usage=rule.usage,
            note=note,
        )

    def _judge(self, rule: Rule, judge: Judge, view: RequestView) -> Decision:
        target = verdict_tool(view)
        if target is None:
            return self._blocks(
                rule,
                view,
                Step(text="No verdict tool offered; nothing to judge."),
                note="judge: no verdict tool",
            )
        assertions = parse_assertions(_user_text(view))
        schema = _tool_schema(view.body, target)
        tool_input = judge_input(assertions, judge, schema)
        block = {"type": "tool_use", "id": self._next_id(), "name": target, "input": tool_input}
        passed = sum(1 for a in assertions if _verdict(a, judge)[0])
        note = f"judge: {passed}/{len(assertions)} passed"
        return Decision(
            rule=rule.name,
            blocks=(block,),
            stop_reason="tool_use",
            model=rule.model,
            usage=rule.usage,
            note=note,
        )


def _user_text(view: RequestView) -> str:
    """The text of every user message of the request, joined by newlines."""
    return "\n".join(
        _all_text(m.get("content"))
        for m in view.body.get("messages", [])
        if isinstance(m, Mapping) and m.get("role") == "user"
    )


def _reads(name: str, tool_input: Mapping[str, Any], tail: str) -> bool:
    """True when an earlier tool use read a file ending in `tail` (`Read`, or a shell command)."""
    if name == "Read":
        return str(tool_input.get("file_path", "")).endswith(tail)
    command = tool_input.get("cmd", tool_input.get("command"))
    return isinstance(command, str) and tail in command


def verdict_tool(view: RequestView) -> str | None:
    """The tool a judge answer calls: the forced tool (`tool_choice: {type: tool}`); else, when
    `tool_choice` is `any` or `tool`, an offered tool named like `*verdict*`, else the first offered tool
    whose input schema has an array of objects with a boolean property. None when nothing fits."""
    if view.forced_tool is not None:
        return view.forced_tool
    if view.tool_choice not in ("any", "tool"):
        return None
    for name in view.tools:
        if "verdict" in name.lower():
            return name
    for name in view.tools:
        props = _tool_schema(view.body, name).get("properties")
        if not isinstance(props, Mapping):
            continue
        for spec in props.values():
            items = (
                spec.get("items")
                if isinstance(spec, Mapping) and spec.get("type") == "array"
                else None
            )
            inner = items.get("properties") if isinstance(items, Mapping) else None
            if isinstance(inner, Mapping) and any(
                isinstance(v, Mapping) and v.get("type") == "boolean" for v in inner.values()
            ):
                return name
    return None


def _with(decision: Decision, **changes: Any) -> Decision:
    import dataclasses

    return dataclasses.replace(decision, **changes)


def _all_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _all_text(b.get("content"))
            if b.get("type") == "tool_result"
            else str(b.get("text", ""))
            for b in content
            if isinstance(b, Mapping)
        )
    return ""


def _tool_schema(body: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    tools = body.get("tools")
    if isinstance(tools, list):
        for t in tools:
            if (
                isinstance(t, Mapping)
                and t.get("name") == name
                and isinstance(t.get("input_schema"), Mapping)
            ):
                schema: Mapping[str, Any] = t["input_schema"]
                return schema
    return {}


def _verdict(assertion: Assertion, judge: Judge) -> tuple[bool, str]:
    if judge.fail_pattern is not None and judge.fail_pattern.search(assertion.text):
        return False, f"matches fail /{judge.fail_pattern.pattern}/"
    if judge.pass_pattern is None:
        return True, "every assertion passes"
    if judge.pass_pattern.search(assertion.text):
        return True, f"matches pass /{judge.pass_pattern.pattern}/"
    return False, f"does not match pass /{judge.pass_pattern.pattern}/"


def _pick(
    props: Mapping[str, Any], kinds: tuple[str, ...], preferred: tuple[str, ...], default: str
) -> str:
    for name in preferred:
        if name in props:
            return name
    for name, spec in props.items():
        if isinstance(spec, Mapping) and spec.get("type") in kinds:
            return name
    return default


def judge_input(
    assertions: tuple[Assertion, ...], judge: Judge, schema: Mapping[str, Any]
) -> dict[str, Any]:
    """The forced tool's input: one verdict object per assertion, shaped after the tool's JSON schema.

    The verdict list goes under the schema's first array property (default `verdicts`); each item uses
    the item schema's id-like key (`id`), boolean key (`passed`) and evidence-like string key
    (`evidence`). Ids are the assertion ids as found in the prompt (strings; integers when the item
    schema types the id as integer).
    """
    props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    assert isinstance(props, Mapping)
    list_key = _pick(props, ("array",), ("verdicts", "results", "assertions"), "verdicts")
    items = (
        props.get(list_key, {}).get("items", {}) if isinstance(props.get(list_key), Mapping) else {}
    )
    item_props = items.get("properties", {}) if isinstance(items, Mapping) else {}
    if not isinstance(item_props, Mapping):
        item_props = {}
    id_key = _pick(item_props, (), ("id", "assertion_id", "assertion"), "id")
    pass_key = _pick(item_props, ("boolean",), ("passed", "pass", "verdict", "ok"), "passed")
    ev_key = _pick(
        {k: v for k, v in item_props.items() if k != id_key},
        ("string",),
        ("evidence", "reason", "explanation", "rationale"),
        "evidence",
    )
    id_type = (
        item_props.get(id_key, {}).get("type")
        if isinstance(item_props.get(id_key), Mapping)
        else None
    )
    verdicts = []
    for a in assertions:
        ok, reason = _verdict(a, judge)
        ident: Any = int(a.id) if id_type == "integer" and a.id.isdigit() else a.id
        evidence = judge.evidence.format_map(
            _Default(verdict="passed" if ok else "failed", reason=reason, id=a.id, text=a.text)
        )
        verdicts.append({id_key: ident, pass_key: ok, ev_key: evidence})
    return {list_key: verdicts}


class _Default(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
