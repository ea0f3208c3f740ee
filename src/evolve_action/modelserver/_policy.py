"""The policy language of the scripted model server: parsing and validation into frozen rules.

Owns: `Policy`, `Rule`, `Match`, `Step`, `ToolUse`, `Fault`, `Route`, `Judge`, `Usage`, the `draft`
action's flag and the loaders
(`Policy.from_yaml`, `Policy.from_file`, `Policy.from_dict`). Guarantees: a loaded policy is fully
validated (regexes compiled, unknown keys rejected) and immutable, so it can be shared between server
threads; every problem is a `PolicyError` naming the policy file, the key path and what to do. Never
does: I/O beyond reading the one policy file, matching requests (see `_engine`).

The language is documented with examples in `docs/model-server.md`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evolve_action.encoding import MAX_FILE_BYTES, decode_yaml
from evolve_action.errors import SpecError


class PolicyError(SpecError):
    """A model-server policy that cannot be used (bad YAML, unknown key, bad regex, bad value)."""


ERROR_STATUSES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}
"""HTTP statuses a fault may return, with the Anthropic error `type` sent in the body."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUse:
    """One `tool_use` block the scripted model emits."""

    name: str
    """Tool name as offered by the client (`Write`, `Bash`, `Skill`, `mcp__x__y`…)."""
    input: Mapping[str, Any] = field(default_factory=dict)
    """Tool input. String values may use `{placeholders}` (see `docs/model-server.md`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One assistant turn: optional text, then zero or more tool uses (sent in one message)."""

    text: str | None = None
    tools: tuple[ToolUse, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """Built-in routing: call `Skill` for the listed skill whose description best matches the prompt."""

    threshold: float = 0.2
    """Minimum token-overlap score (0..1, share of the prompt's content words found in name+description)."""
    read_first: bool = False
    """Emit a `Read` of the chosen skill's `SKILL.md` one turn before the `Skill` call."""
    read_only: bool = False
    """Only `Read` the chosen skill's `SKILL.md` (no `Skill` call)."""
    namespace: str | None = None
    """Call `Skill` with `<namespace>:<name>` instead of the bare listed name."""
    answer: str = "Done."
    """Text of the final answer after the skill was called (or read, with `read_only`)."""
    miss: str = "Done."
    """Text of the answer when no listed skill scores above the threshold."""
    skills: tuple[str, ...] = ()
    """When non-empty, only these listed skills are candidates."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Judge:
    """Built-in judge: answer a forced tool with verdicts for the numbered assertions in the prompt."""

    pass_pattern: re.Pattern[str] | None = None
    """Assertions whose text matches pass; the rest fail. None: every assertion passes."""
    fail_pattern: re.Pattern[str] | None = None
    """Assertions whose text matches fail (checked before `pass`)."""
    evidence: str = "scripted judge: {verdict} ({reason})"
    """Evidence template; `{verdict}` is `passed`/`failed`, `{reason}` names the regex, `{id}`, `{text}`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """A failure injected instead of (or in the middle of) a normal reply."""

    status: int | None = None
    """Return this HTTP status with an Anthropic error body (429, 500, 529…)."""
    message: str = "scripted fault"
    disconnect: bool = False
    """Stream: close the connection mid-stream (after the first content delta). JSON: close without reply."""
    malformed: bool = False
    """Stream: send an event whose data is not JSON. JSON: send an invalid JSON body with status 200."""
    probability: float = 1.0
    """Chance the fault fires on a matching request (seeded, deterministic per request; see docs)."""
    times: int | None = None
    """Fire only on the first N matching requests (per rule, per conversation key), then reply normally."""
    retry_after: float | None = None
    """Send a `retry-after` header (seconds) with status faults."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Usage numbers that replace the deterministic estimate (any field left None is estimated)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Match:
    """Conditions on a request; all given conditions must hold. Regexes use Python `re.search`, case-insensitive."""

    prompt: re.Pattern[str] | None = None
    """The real user prompt: the first user text of the conversation, system reminders removed."""
    last_user: re.Pattern[str] | None = None
    """The latest user text (system reminders removed); empty when the last user turn only has tool results."""
    turn: tuple[int, int | None] | None = None
    """Inclusive turn range (1 = no assistant message yet); upper None = unbounded."""
    tools: tuple[str, ...] = ()
    """Every named tool must be offered in `tools`."""
    no_tools: bool | None = None
    """True: the request offers no tools; False: it offers at least one."""
    tool_result: re.Pattern[str] | None = None
    """Text of the tool results in the latest user message."""
    any_tool_result: re.Pattern[str] | None = None
    """Text of any tool result in the conversation."""
    model: re.Pattern[str] | None = None
    system: re.Pattern[str] | None = None
    """The system prompt text."""
    tool_choice: re.Pattern[str] | None = None
    """Name of the forced tool (`tool_choice: {type: tool, name}`); matches only forced requests."""
    stream: bool | None = None
    path: re.Pattern[str] | None = None
    """Request path (e.g. `count_tokens`); rules match `/v1/messages` unless this is set."""
    called: re.Pattern[str] | None = None
    """Some earlier assistant tool use, written `Name {compact JSON input}`, matches (e.g. `^Skill`)."""
    session: tuple[int, ...] = ()
    """Only the Nth distinct client sessions (1-based, in order of first arrival) that reach this rule
    with every other condition true. Lets one run of a repeated query fail (a flaky query)."""
    chance: float | None = None
    """The rule applies to a client session with this probability (seeded by the policy's `seed`,
    decided once per session: every turn of a session sees the same draw). Sessions with the same
    prompt get independent draws; the k-th such session (by first arrival) draws from
    hash(seed, rule, prompt, k), so the number of sessions that fire is the same whatever the
    thread interleaving. Models a skill that triggers with probability p."""


Action = Literal["text", "steps", "route", "judge", "draft", "echo", "fault"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One ordered rule: when its `match` holds, it answers with its action (and optional fault/delay)."""

    name: str
    match: Match = field(default_factory=Match)
    action: Action = "text"
    steps: tuple[Step, ...] = ()
    """For `text` and `steps` actions: the turns, by position since the rule's first turn."""
    route: Route | None = None
    judge: Judge | None = None
    fault: Fault | None = None
    delay_ms: int = 0
    usage: Usage | None = None
    stop_after: int | None = None
    """Stop matching after this many requests answered by the rule (then later rules apply)."""
    model: str | None = None
    """Model id reported in responses (default: the requested model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """An ordered list of rules plus a default and global settings. Immutable and thread-safe."""

    rules: tuple[Rule, ...] = ()
    default: Rule = field(default_factory=lambda: Rule(name="default", steps=(Step(text="OK"),)))
    """Answers when no rule matches (and auxiliary requests such as titles)."""
    seed: int = 0
    """Seed of probabilistic faults and of rules' `when.chance`."""
    latency_ms: int = 0
    """Delay before every response."""
    faults: tuple[Fault, ...] = ()
    """Global faults, tried on every `/v1/messages` request before the rules."""
    cache: bool = True
    """Estimate cache creation/read tokens for the system prompt and tools (see docs)."""
    auth_error: int | None = None
    """401 or 403: every POST (messages and count_tokens) is refused with it, like a revoked key."""
    source: str = "<policy>"
    """Where the policy came from (for messages)."""

    @classmethod
    def from_yaml(cls, text: str, *, source: str = "<policy>") -> Policy:
        """Parse a YAML (or JSON) policy document."""
        return cls.from_dict(_load_yaml(text, source), source=source)

    @classmethod
    def from_file(cls, path: Path | str) -> Policy:
        """Read and parse a policy file (`.yaml`, `.yml` or `.json`)."""
        p = Path(path)
        try:
            size = p.stat().st_size
            if size > MAX_FILE_BYTES:
                raise PolicyError(
                    f"policy file is too large ({size} bytes; the limit is {MAX_FILE_BYTES})",
                    path=p,
                )
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise PolicyError(
                f"cannot read policy: {exc.strerror or exc}",
                path=p,
                hint="pass an existing YAML file",
            ) from exc
        return cls.from_yaml(text, source=str(p))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, source: str = "<policy>") -> Policy:
        """Build a policy from plain data (the decoded YAML)."""
        return _Parser(source).policy(data or {})

    @classmethod
    def coerce(cls, value: Policy | Mapping[str, Any] | str | Path) -> Policy:
        """Accept a `Policy`, a dict, YAML text, or a `Path` to a policy file."""
        if isinstance(value, Policy):
            return value
        if isinstance(value, Path):
            return cls.from_file(value)
        if isinstance(value, str):
            return cls.from_yaml(value)
        return cls.from_dict(value)


def _load_yaml(text: str, source: str) -> Any:
    """Decode a policy with the tool's bounded YAML decoder (aliases counted, depth capped)."""
    if not text.strip() or all(
        not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()
    ):
        return None
    try:
        return decode_yaml(text, Path(source)).value
    except SpecError as exc:
        raise PolicyError(
            f"invalid YAML: {exc.message}",
            path=_path(source),
            line=exc.line,
            hint=exc.hint or "fix the YAML syntax",
        ) from None
    except RecursionError:
        raise PolicyError(
            "invalid YAML: document is nested too deeply", path=_path(source)
        ) from None


def _path(source: str) -> Path | None:
    return None if source.startswith("<") else Path(source)


_ACTION_KEYS = ("text", "tool", "tools", "steps", "route", "judge", "draft", "echo")
_RULE_KEYS = frozenset(
    {"name", "when", "delay_ms", "usage", "fault", "stop_after", "model", "input", *_ACTION_KEYS}
    | {"status", "disconnect", "malformed", "probability", "times", "retry_after", "message"}
)
_FAULT_KEYS = frozenset(
    {"status", "message", "disconnect", "malformed", "probability", "times", "retry_after"}
)
_MATCH_KEYS = frozenset(
    {
        "prompt",
        "last_user",
        "turn",
        "tools",
        "no_tools",
        "tool_result",
        "any_tool_result",
        "model",
        "system",
        "tool_choice",
        "stream",
        "path",
        "session",
        "called",
        "chance",
    }
)
_POLICY_KEYS = frozenset(
    {"rules", "default", "seed", "latency_ms", "faults", "cache", "auth_error"}
)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str, hint: str | None = None) -> PolicyError:
        return PolicyError(f"{where}: {message}", path=_path(self.source), hint=hint)

    def mapping(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(where, f"keys must be strings, got {key!r}")
        return value

    def keys(self, value: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(
                where,
                f"unknown key {unknown[0]!r}",
                hint=f"accepted keys: {', '.join(sorted(allowed))}",
            )

    def integer(self, value: Any, where: str, *, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(where, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def number(self, value: Any, where: str, lo: float, hi: float) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
            raise self.fail(where, f"expected a number in [{lo}, {hi}], got {value!r}")
        return float(value)

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {value!r}")
        return value

    def string(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {value!r}")
        return value

    def regex(self, value: Any, where: str) -> re.Pattern[str]:
        text = self.string(value, where)
        try:
            return re.compile(text, re.IGNORECASE | re.DOTALL)
        except re.error as exc:
            raise self.fail(where, f"invalid regex {text!r}: {exc}") from exc

    def policy(self, data: Mapping[str, Any]) -> Policy:
        data = self.mapping(data, "policy")
        self.keys(data, _POLICY_KEYS, "policy")
        rules_raw = data.get("rules", [])
        if not isinstance(rules_raw, list):
            raise self.fail("rules", "expected a list of rules")
        rules = tuple(self.rule(r, f"rules[{i}]", f"rule-{i + 1}") for i, r in enumerate(rules_raw))
        names = [r.name for r in rules]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise self.fail(
                "rules", f"duplicate rule name {dupes[0]!r}", hint="give every rule a unique name"
            )
        kwargs: dict[str, Any] = {"rules": rules, "source": self.source}
        if "default" in data:
            default = data["default"]
            if isinstance(default, str):
                default = {"text": default}
            kwargs["default"] = self.rule(default, "default", "default")
        if "seed" in data:
            kwargs["seed"] = self.integer(data["seed"], "seed")
        if "latency_ms" in data:
            kwargs["latency_ms"] = self.integer(data["latency_ms"], "latency_ms")
        if "cache" in data:
            kwargs["cache"] = self.boolean(data["cache"], "cache")
        if "auth_error" in data:
            status = self.integer(data["auth_error"], "auth_error")
            if status not in (401, 403):
                raise self.fail("auth_error", f"unsupported status {status}", hint="use 401 or 403")
            kwargs["auth_error"] = status
        if "faults" in data:
            faults = data["faults"]
            if not isinstance(faults, list):
                raise self.fail("faults", "expected a list of faults")
            kwargs["faults"] = tuple(self.fault(f, f"faults[{i}]") for i, f in enumerate(faults))
        return Policy(**kwargs)

    def rule(self, raw: Any, where: str, fallback_name: str) -> Rule:
        data = self.mapping(raw, where)
        self.keys(data, _RULE_KEYS, where)
        name = self.string(data.get("name", fallback_name), f"{where}.name")
        where = f"{where} ({name})" if "name" in data else where
        kwargs: dict[str, Any] = {"name": name}
        if "when" in data:
            kwargs["match"] = self.match(data["when"], f"{where}.when")
        actions = [k for k in _ACTION_KEYS if k in data]
        if "tool" in data and "tools" in data:
            raise self.fail(where, "use either 'tool' or 'tools', not both")
        if "text" in data and ("tool" in data or "tools" in data):
            actions = ["text+tool"]
        if len(actions) > 1:
            raise self.fail(
                where,
                f"a rule has one action, found {', '.join(actions)}",
                hint="put several turns under 'steps'",
            )
        action = actions[0] if actions else None
        if action in ("text", "tool", "tools", "text+tool"):
            kwargs["action"] = "text"
            kwargs["steps"] = (self.step(data, where, top=True),)
        elif action == "steps":
            steps = data["steps"]
            if not isinstance(steps, list) or not steps:
                raise self.fail(f"{where}.steps", "expected a non-empty list of steps")
            kwargs["action"] = "steps"
            kwargs["steps"] = tuple(
                self.step(s, f"{where}.steps[{i}]") for i, s in enumerate(steps)
            )
        elif action == "route":
            kwargs["action"] = "route"
            kwargs["route"] = self.route(data["route"], f"{where}.route")
        elif action == "judge":
            kwargs["action"] = "judge"
            kwargs["judge"] = self.judge(data["judge"], f"{where}.judge")
        elif action == "draft":
            if not self.boolean(data["draft"], f"{where}.draft"):
                raise self.fail(f"{where}.draft", "expected true", hint="drop the rule instead")
            kwargs["action"] = "draft"
        elif action == "echo":
            self.boolean(data["echo"], f"{where}.echo")
            kwargs["action"] = "echo"
        fault_keys = _FAULT_KEYS & set(data)
        if "fault" in data and fault_keys:
            raise self.fail(
                where, "put fault settings either under 'fault' or on the rule, not both"
            )
        if "fault" in data:
            kwargs["fault"] = self.fault(data["fault"], f"{where}.fault")
        elif fault_keys:
            kwargs["fault"] = self.fault({k: data[k] for k in fault_keys}, where)
        if action is None:
            if "fault" not in kwargs:
                raise self.fail(
                    where,
                    "a rule needs an action",
                    hint="add one of: text, tool, tools, steps, route, judge, draft, echo, or a fault (status/disconnect/malformed)",
                )
            kwargs["action"] = "fault"
        if "delay_ms" in data:
            kwargs["delay_ms"] = self.integer(data["delay_ms"], f"{where}.delay_ms")
        if "stop_after" in data:
            kwargs["stop_after"] = self.integer(
                data["stop_after"], f"{where}.stop_after", minimum=1
            )
        if "model" in data:
            kwargs["model"] = self.string(data["model"], f"{where}.model")
        if "usage" in data:
            kwargs["usage"] = self.usage(data["usage"], f"{where}.usage")
        return Rule(**kwargs)

    def step(self, raw: Any, where: str, *, top: bool = False) -> Step:
        if isinstance(raw, str):
            return Step(text=raw)
        data = self.mapping(raw, where)
        if not top:
            self.keys(data, frozenset({"text", "tool", "tools", "input"}), where)
        text = self.string(data["text"], f"{where}.text") if "text" in data else None
        tools: list[ToolUse] = []
        if "tool" in data:
            tools.append(self.tool_use(data, where))
        elif "tools" in data:
            items = data["tools"]
            if not isinstance(items, list) or not items:
                raise self.fail(f"{where}.tools", "expected a non-empty list of {tool, input}")
            tools.extend(self.tool_use(t, f"{where}.tools[{i}]") for i, t in enumerate(items))
        elif "input" in data:
            raise self.fail(where, "'input' needs a 'tool' name")
        if text is None and not tools:
            raise self.fail(where, "a step needs 'text', 'tool' or 'tools'")
        return Step(text=text, tools=tuple(tools))

    def tool_use(self, raw: Any, where: str) -> ToolUse:
        data = self.mapping(raw, where)
        name = self.string(data.get("tool"), f"{where}.tool")
        if not name:
            raise self.fail(f"{where}.tool", "tool name is empty")
        tool_input = data.get("input", {})
        if isinstance(tool_input, str):
            try:
                tool_input = json.loads(tool_input)
            except ValueError as exc:
                raise self.fail(f"{where}.input", f"not a JSON object: {exc}") from exc
        tool_input = self.mapping(tool_input, f"{where}.input")
        return ToolUse(name=name, input=dict(tool_input))

    def match(self, raw: Any, where: str) -> Match:
        if isinstance(raw, str):
            raw = {"prompt": raw}
        data = self.mapping(raw, where)
        self.keys(data, _MATCH_KEYS, where)
        kwargs: dict[str, Any] = {}
        for key in (
            "prompt",
            "last_user",
            "tool_result",
            "any_tool_result",
            "model",
            "system",
            "tool_choice",
            "path",
            "called",
        ):
            if key in data:
                kwargs[key] = self.regex(data[key], f"{where}.{key}")
        if "turn" in data:
            kwargs["turn"] = self.turn(data["turn"], f"{where}.turn")
        if "tools" in data:
            tools = data["tools"]
            if isinstance(tools, str):
                tools = [tools]
            if not isinstance(tools, list):
                raise self.fail(f"{where}.tools", "expected a list of tool names")
            kwargs["tools"] = tuple(self.string(t, f"{where}.tools") for t in tools)
        for key in ("no_tools", "stream"):
            if key in data:
                kwargs[key] = self.boolean(data[key], f"{where}.{key}")
        if "session" in data:
            sessions = data["session"]
            items = sessions if isinstance(sessions, list) else [sessions]
            kwargs["session"] = tuple(self.integer(n, f"{where}.session", minimum=1) for n in items)
        if "chance" in data:
            kwargs["chance"] = self.number(data["chance"], f"{where}.chance", 0.0, 1.0)
        return Match(**kwargs)

    def turn(self, value: Any, where: str) -> tuple[int, int | None]:
        if isinstance(value, int) and not isinstance(value, bool):
            return (self.integer(value, where, minimum=1), value)
        if isinstance(value, str):
            m = re.fullmatch(r"\s*(>=|<=|>|<)?\s*(\d+)\s*(?:-\s*(\d+)\s*)?", value)
            if m:
                op, a, b = m.group(1), int(m.group(2)), m.group(3)
                if b is not None and op is None:
                    return (a, int(b))
                if b is None:
                    if op == ">=":
                        return (a, None)
                    if op == ">":
                        return (a + 1, None)
                    if op == "<=":
                        return (1, a)
                    if op == "<":
                        return (1, a - 1)
                    return (a, a)
        if isinstance(value, list) and len(value) == 2:
            lo = self.integer(value[0], where, minimum=1)
            hi = None if value[1] is None else self.integer(value[1], where, minimum=1)
            return (lo, hi)
        raise self.fail(where, f"bad turn {value!r}", hint="use 2, '>=2', '<3', '1-3' or [1, 3]")

    def route(self, raw: Any, where: str) -> Route:
        if raw is True or raw is None:
            return Route()
        data = self.mapping(raw, where)
        self.keys(
            data,
            frozenset(
                {"threshold", "read_first", "read_only", "namespace", "answer", "miss", "skills"}
            ),
            where,
        )
        kwargs: dict[str, Any] = {}
        if "threshold" in data:
            kwargs["threshold"] = self.number(data["threshold"], f"{where}.threshold", 0.0, 1.0)
        for key in ("read_first", "read_only"):
            if key in data:
                kwargs[key] = self.boolean(data[key], f"{where}.{key}")
        if "namespace" in data:
            kwargs["namespace"] = self.string(data["namespace"], f"{where}.namespace")
        for key in ("answer", "miss"):
            if key in data:
                kwargs[key] = self.string(data[key], f"{where}.{key}")
        if "skills" in data:
            skills = data["skills"]
            if not isinstance(skills, list):
                raise self.fail(f"{where}.skills", "expected a list of skill names")
            kwargs["skills"] = tuple(self.string(s, f"{where}.skills") for s in skills)
        return Route(**kwargs)

    def judge(self, raw: Any, where: str) -> Judge:
        if raw is True or raw is None:
            return Judge()
        data = self.mapping(raw, where)
        self.keys(data, frozenset({"pass", "fail", "evidence"}), where)
        kwargs: dict[str, Any] = {}
        if "pass" in data:
            kwargs["pass_pattern"] = self.regex(data["pass"], f"{where}.pass")
        if "fail" in data:
            kwargs["fail_pattern"] = self.regex(data["fail"], f"{where}.fail")
        if "evidence" in data:
            kwargs["evidence"] = self.string(data["evidence"], f"{where}.evidence")
        return Judge(**kwargs)

    def fault(self, raw: Any, where: str) -> Fault:
        data = self.mapping(raw, where)
        self.keys(data, _FAULT_KEYS, where)
        kwargs: dict[str, Any] = {}
        if "status" in data:
            status = self.integer(data["status"], f"{where}.status", minimum=400)
            if status not in ERROR_STATUSES:
                raise self.fail(
                    f"{where}.status",
                    f"unsupported status {status}",
                    hint=f"use one of {', '.join(map(str, ERROR_STATUSES))}",
                )
            kwargs["status"] = status
        if "message" in data:
            kwargs["message"] = self.string(data["message"], f"{where}.message")
        for key in ("disconnect", "malformed"):
            if key in data:
                kwargs[key] = self.boolean(data[key], f"{where}.{key}")
        if "probability" in data:
            kwargs["probability"] = self.number(
                data["probability"], f"{where}.probability", 0.0, 1.0
            )
        if "times" in data:
            kwargs["times"] = self.integer(data["times"], f"{where}.times", minimum=1)
        if "retry_after" in data:
            kwargs["retry_after"] = self.number(
                data["retry_after"], f"{where}.retry_after", 0.0, 3600.0
            )
        chosen = [k for k in ("status", "disconnect", "malformed") if kwargs.get(k)]
        if len(chosen) != 1:
            raise self.fail(
                where, "a fault needs exactly one of: status, disconnect: true, malformed: true"
            )
        return Fault(**kwargs)

    def usage(self, raw: Any, where: str) -> Usage:
        data = self.mapping(raw, where)
        names = (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
        self.keys(data, frozenset(names), where)
        return Usage(**{k: self.integer(data[k], f"{where}.{k}") for k in names if k in data})
