"""Suite files of the founding formats: AgentEvals `EVAL.yaml` and AgentV v2 eval files.

Owns: recognising a suite file (`is_suite_name`, `sniff_suite`), reading one into a `Suite` of
`SuiteCase`s with every alias of the research's a.4 (`evalcases|eval_cases|cases|tests` or a
`.jsonl` path or a `<stem>.jsonl` beside a `<stem>.yaml` sidecar; `expected_outcome|outcome|
criteria`; `input_messages|input`; `expected_messages|expected_output`; `execution.evaluators|
evaluators|assert|assertions`), AgentV's file resolution (the eval file's directory, then every
parent up to the repository root; a leading `/` is repository-relative), guideline files
(`guideline_patterns` of the nearest `.agentv/config.yaml`; none without one, as AgentV's code
does), the prompt AgentV builds for agent targets (`@[Role]:` markers, `<file: path="…">`
references and the preread block, with workspace-relative paths because the files are staged into
the workspace), the suite's target (`.agentv/targets.yaml`: a `cli`/`mock` provider makes the suite
not applicable) and turning cases into evolve `EvalCase`s (`suite_eval_cases`) whose ids
(`<suite>::<case>`) cannot collide with an evolve-format id (`SUITE_ID_SEPARATOR`).

Guarantees: `read_suite` never raises: decode problems, schema-independent semantic problems
(unique case ids, kebab-case names, referenced files that exist, evaluator fields per type from
`parse_evaluators`) are `SuiteProblem`s naming a JSON pointer and line; `load_suite` raises the
first as a `SpecError`. A file block that is the skill under test (its SKILL.md or any file in its
directory) is dropped with a note, so the with/without comparison stays meaningful. Never does:
run anything, read outside the repository (a reference resolving outside it counts as missing),
print.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evolve_action import encoding
from evolve_action.errors import SpecError
from evolve_action.repo import glob_match, is_suite_name
from evolve_action.specs._evaluators import parse_evaluators
from evolve_action.specs._load import load_evals
from evolve_action.specs._model import EvalCase, EvalsSpec, FixtureRef, SuiteCase

__all__ = [
    "NOT_APPLICABLE_PROVIDERS",
    "SUITE_ID_SEPARATOR",
    "Suite",
    "SuiteFormat",
    "SuiteProblem",
    "agentv_config",
    "load_authored_evals",
    "load_suite",
    "read_suite",
    "suite_eval_cases",
    "suite_notes",
]

SuiteFormat = Literal["agentevals", "agentv-v2"]

SUITE_ID_SEPARATOR = "::"
"""A suite case's results id is `<suite>::<case id>`; evolve-format ids containing it are refused
where a skill has suites (so the two can never collide)."""

NOT_APPLICABLE_PROVIDERS = frozenset({"cli", "mock"})
"""Target providers whose suites are written against scripted tools, never Claude Code."""

CASE_KEYS = ("evalcases", "eval_cases", "cases", "tests")
OUTCOME_KEYS = ("expected_outcome", "outcome", "criteria")
INPUT_KEYS = ("input_messages", "input")
EXPECTED_KEYS = ("expected_messages", "expected_output")
EVALUATOR_KEYS = ("evaluators", "assert", "assertions")
ROLES = ("system", "user", "assistant", "tool")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]*[a-z0-9]$")


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteProblem:
    """One authoring problem in a suite file (errors keep the suite from running)."""

    message: str
    """`<where>: what is wrong — the fix` (without the file name)."""
    pointer: str = ""
    line: int | None = None
    severity: Literal["error", "warning"] = "error"


@dataclass(frozen=True, slots=True, kw_only=True)
class Suite:
    """One suite file read for one skill."""

    path: Path
    format: SuiteFormat
    name: str
    skill: str = ""
    """`metadata.skill` (AgentEvals), or ``."""
    skill_path: str = ""
    target: str = ""
    judge_target: str = ""
    target_provider: str = ""
    cases: tuple[SuiteCase, ...] = ()
    problems: tuple[SuiteProblem, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[SuiteProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def not_applicable(self) -> str:
        """Why the suite cannot apply to Claude Code (a `cli`/`mock` target), or ``."""
        if self.target_provider in NOT_APPLICABLE_PROVIDERS:
            return (
                f"target {self.target!r} uses provider {self.target_provider!r}: the suite is "
                "written for scripted tools, not an agent with the skill"
            )
        return ""


# --------------------------------------------------------------------------------------------
# Recognition


def _nearest(start: Path, root: Path, rel: str) -> Path | None:
    here = start
    while True:
        candidate = here / rel
        if candidate.is_file():
            return candidate
        if here == root or here.parent == here or not _within(here, root):
            return None
        here = here.parent


def agentv_config(start: Path, root: Path) -> dict[str, Any]:
    """The nearest `.agentv/config.yaml` walking up from `start` to `root` ({} when none)."""
    path = _nearest(start, root, ".agentv/config.yaml")
    if path is None:
        return {}
    try:
        value = encoding.decode_path(path)
    except SpecError:
        return {}
    return value if isinstance(value, dict) else {}


def _target_provider(start: Path, root: Path, target: str) -> str:
    path = _nearest(start, root, ".agentv/targets.yaml")
    if path is None:
        return ""
    try:
        value = encoding.decode_path(path)
    except SpecError:
        return ""
    entries = value.get("targets") if isinstance(value, dict) else value
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == (target or "default"):
            provider = entry.get("provider")
            return provider if isinstance(provider, str) else ""
    return ""


# --------------------------------------------------------------------------------------------
# Reading


class _Lines(Mapping[str, int]):
    """A pointer → line lookup as the `Mapping` `parse_evaluators` takes."""

    def __init__(self, line_of: encoding.LineOf | None) -> None:
        self._line_of = line_of

    def __getitem__(self, key: str) -> int:
        line = _line(key, self._line_of)
        if line is None:
            raise KeyError(key)
        return line

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _line(pointer: str, line_of: encoding.LineOf | None) -> int | None:
    if line_of is None:
        return None
    p = pointer
    while True:
        try:
            line = line_of(p)
        except Exception:
            line = None
        if line is not None:
            return line
        if not p:
            return None
        p = p.rsplit("/", 1)[0] if "/" in p else ""


def _ptr(base: str, *tokens: str | int) -> str:
    """`base` (a JSON pointer) extended by reference tokens."""
    out = base
    for token in tokens:
        out = encoding.pointer_join(out, token)
    return out


def _within(path: Path, root: Path) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _first(obj: Mapping[str, Any], keys: Sequence[str]) -> tuple[str, Any]:
    for key in keys:
        if key in obj and obj[key] is not None:
            return key, obj[key]
    return "", None


class _Reader:
    def __init__(self, path: Path, root: Path, skill_dir: Path | None) -> None:
        self.path = path
        self.root = root
        self.skill_dir = skill_dir
        self.problems: list[SuiteProblem] = []
        self.notes: list[str] = []
        self.line_of: encoding.LineOf | None = None
        self.roots = self._search_roots()
        config = agentv_config(path.parent, root)
        patterns = config.get("guideline_patterns")
        self.guideline_patterns = (
            [p for p in patterns if isinstance(p, str)] if isinstance(patterns, list) else []
        )

    def _search_roots(self) -> list[Path]:
        roots: list[Path] = []
        here = Path(os.path.abspath(self.path.parent))  # noqa: PTH100
        while True:
            roots.append(here)
            if here == self.root or here.parent == here or not _within(here, self.root):
                break
            here = here.parent
        if self.root not in roots:
            roots.append(self.root)
        return roots

    def error(self, message: str, pointer: str, *, line: int | None = None) -> None:
        self.problems.append(
            SuiteProblem(
                message=message,
                pointer=pointer,
                line=line if line is not None else _line(pointer, self.line_of),
            )
        )

    def warn(self, message: str, pointer: str) -> None:
        self.problems.append(
            SuiteProblem(
                message=message,
                pointer=pointer,
                line=_line(pointer, self.line_of),
                severity="warning",
            )
        )

    def resolve(self, value: str) -> Path | None:
        """AgentV's search: each root in order; a leading `/` is tried under each root too. A
        file resolving outside the repository is never used."""
        display = value.replace("\\", "/").lstrip("/")
        if not display:
            return None
        for base in self.roots:
            candidate = Path(os.path.normpath(base / display))
            if candidate.is_file() and _within(candidate, self.root):
                return candidate
        return None

    def rel(self, path: Path) -> str:
        try:
            return Path(os.path.abspath(path)).relative_to(self.root).as_posix()  # noqa: PTH100
        except ValueError:
            return path.as_posix()

    def in_skill(self, path: Path) -> bool:
        if self.skill_dir is None:
            return False
        return _within(path, self.skill_dir)


def read_suite(
    path: Path,
    *,
    root: Path,
    skill_dir: Path | None = None,
    parser: Any = None,
) -> Suite:
    """Read one suite file for the skill in `skill_dir` (never raises).

    `parser` defaults to `parse_evaluators` (the evaluator parser of this package).
    """
    parse = parse_evaluators if parser is None else parser
    path = Path(os.path.abspath(path))  # noqa: PTH100
    root = Path(os.path.abspath(root))  # noqa: PTH100
    reader = _Reader(path, root, skill_dir)
    stem = path.name.split(".")[0]
    try:
        decoded = _decode(path)
    except SpecError as exc:
        return Suite(
            path=path,
            format="agentevals",
            name=stem,
            problems=(
                SuiteProblem(
                    message=f"{exc.message} — fix the YAML syntax", line=exc.line, pointer=""
                ),
            ),
        )
    reader.line_of = decoded.line_of
    doc = decoded.value
    if not isinstance(doc, dict):
        reader.error(
            "a suite file is a mapping with `name` and `evalcases` (got "
            f"{type(doc).__name__}) — write the suite as a YAML mapping",
            "",
        )
        return Suite(path=path, format="agentevals", name=stem, problems=tuple(reader.problems))
    fmt: SuiteFormat = (
        "agentv-v2"
        if doc.get("$schema") == "agentv-eval-v2"
        or ("name" not in doc and not is_suite_name(path.name))
        else "agentevals"
    )
    name = _suite_name(doc, path, fmt, reader)
    meta = _obj(doc.get("metadata"))
    skill = _str(meta.get("skill"))
    skill_path = _str(meta.get("skill_path"))
    execution = _obj(doc.get("execution"))
    target = _str(execution.get("target")) or _str(doc.get("target"))
    judge = _str(execution.get("judge_target"))
    provider = _target_provider(path.parent, root, target)
    if (target and target != "default") or judge:
        shown = ", ".join(
            f"{k} {v!r}"
            for k, v in (("target", target), ("judge_target", judge))
            if v and v != "default"
        )
        reader.notes.append(
            f"{shown} recorded and ignored: evolve-action runs every case through Claude Code "
            "with the skill and without it, and judges with its own judge model"
        )
    cases_raw, cases_ptr = _case_list(doc, path, reader)
    suite_key, suite_evals = _evaluator_list(doc, execution, "")
    cases: list[SuiteCase] = []
    seen: dict[str, int] = {}
    defaults = {
        "execution": {k: v for k, v in execution.items() if k not in ("target", "judge_target")},
        **({suite_key: suite_evals} if suite_key and suite_key != "execution" else {}),
    }
    for index, raw in enumerate(cases_raw):
        pointer = _ptr(cases_ptr, index) if cases_ptr is not None else f"#{index + 1}"
        case = _read_case(
            raw,
            index=index,
            pointer=pointer,
            suite=name,
            suite_evals=(suite_evals, suite_key),
            defaults=defaults,
            execution=execution,
            reader=reader,
            parse=parse,
        )
        if case is None:
            continue
        if case.id in seen:
            reader.error(
                f"case id {case.id!r} is duplicated (first at case {seen[case.id] + 1}) — "
                "give every case a unique id",
                _ptr(pointer, "id") if cases_ptr is not None else "",
                line=case.line,
            )
            continue
        seen[case.id] = index
        cases.append(case)
    return Suite(
        path=path,
        format=fmt,
        name=name,
        skill=skill,
        skill_path=skill_path,
        target=target,
        judge_target=judge,
        target_provider=provider,
        cases=tuple(cases),
        problems=tuple(reader.problems),
        notes=tuple(dict.fromkeys(reader.notes)),
    )


def _decode(path: Path) -> encoding.Decoded:
    """Decode a suite file. Rubric `score_ranges` are maps with integer keys (`0: …`, `10: …`),
    which the shared decoder refuses as not JSON-representable: such a file is decoded again with
    its keys as strings (YAML's own reading; line numbers are then unknown)."""
    try:
        return encoding.decode_with_lines(path)
    except SpecError as exc:
        if "non-string mapping key" not in exc.message:
            raise
    import yaml

    try:
        value = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SpecError(str(exc), path=path) from None
    return encoding.Decoded(_string_keys(value), lambda _pointer: None)


def _string_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


def _suite_name(doc: Mapping[str, Any], path: Path, fmt: SuiteFormat, reader: _Reader) -> str:
    raw = doc.get("name")
    if isinstance(raw, str) and raw:
        if not NAME_PATTERN.fullmatch(raw) or not 2 <= len(raw) <= 64:
            reader.error(
                f"name {raw!r} is not kebab-case — write 2–64 lower-case letters, digits and "
                "hyphens, starting with a letter (e.g. "
                f"{_kebab(raw)!r})",
                "/name",
            )
        return raw
    if fmt == "agentevals":
        if is_suite_name(path.name) and path.name.split(".")[0].lower() != "dataset":
            reader.error(
                "missing `name` — an AgentEvals suite names itself: add "
                f"`name: {_kebab(path.parent.name)}` (kebab-case)",
                "",
            )
        elif "name" in doc:
            reader.error("`name` must be a non-empty string — add a kebab-case name", "/name")
    dataset = doc.get("dataset")
    if isinstance(dataset, str) and dataset:
        return dataset
    stem = path.name
    for suffix in (".yaml", ".yml", ".jsonl", ".eval", ".EVAL"):
        stem = stem.removesuffix(suffix)
    if stem in ("EVAL", "dataset", ""):
        # AgentV names it `dataset`; the directory names it better (`…/<name>/evals/dataset.yaml`)
        parent = path.parent
        if parent.name == "evals" and parent.parent != parent:
            parent = parent.parent
        return parent.name or stem
    return stem


def _kebab(text: str) -> str:
    out = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if not out or not out[0].isalpha():
        out = "suite-" + out
    return out[:64].rstrip("-") or "suite"


def _case_list(doc: Mapping[str, Any], path: Path, reader: _Reader) -> tuple[list[Any], str | None]:
    key, value = _first(doc, CASE_KEYS)
    if isinstance(value, list):
        if not value:
            reader.error(f"`{key}` is empty — add at least one case", f"/{key}")
        return value, f"/{key}"
    jsonl: Path | None = None
    if isinstance(value, str):
        jsonl = reader.resolve(value)
        if jsonl is None:
            reader.error(
                f"`{key}` names {value!r}, which does not exist — fix the path (relative to "
                "this file) or list the cases inline",
                f"/{key}",
            )
            return [], None
    elif value is None:
        sidecar = path.with_suffix(".jsonl")
        if sidecar.is_file():
            jsonl = sidecar
        else:
            reader.error(
                "no cases: add an `evalcases` list (or `cases`/`tests`), or a "
                f"{sidecar.name} beside this file with one case per line",
                "",
            )
            return [], None
    else:
        reader.error(
            f"`{key}` must be a list of cases or a .jsonl path — write the cases as a list",
            f"/{key}",
        )
        return [], None
    return _jsonl_cases(jsonl, reader), None


def _jsonl_cases(path: Path, reader: _Reader) -> list[Any]:
    cases: list[Any] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reader.error(f"{reader.rel(path)}: cannot read ({exc}) — save it as UTF-8 JSONL", "")
        return []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            reader.error(
                f"{reader.rel(path)}:{number}: invalid JSON ({exc.msg}) — write one JSON "
                "object per line",
                "",
            )
            continue
        if isinstance(value, dict):
            value = {**value, "__line__": number, "__file__": reader.rel(path)}
        cases.append(value)
    if not cases:
        reader.error(f"{reader.rel(path)} holds no cases — add one JSON object per line", "")
    return cases


def _evaluator_list(
    obj: Mapping[str, Any], execution: Mapping[str, Any], pointer: str
) -> tuple[str, list[Any] | None]:
    """`(key, list)`: `execution.evaluators`, else `evaluators|assert|assertions` (None: none)."""
    if isinstance(execution.get("evaluators"), list):
        return "execution", execution["evaluators"]
    key, value = _first(obj, EVALUATOR_KEYS)
    if isinstance(value, list):
        return key, value
    return "", None


def _read_case(
    raw: Any,
    *,
    index: int,
    pointer: str,
    suite: str,
    suite_evals: tuple[list[Any] | None, str],
    defaults: Mapping[str, Any],
    execution: Mapping[str, Any],
    reader: _Reader,
    parse: Any,
) -> SuiteCase | None:
    jsonl_line = raw.pop("__line__", None) if isinstance(raw, dict) else None
    jsonl_file = raw.pop("__file__", None) if isinstance(raw, dict) else None
    where_line = _line(pointer, reader.line_of) if jsonl_line is None else None
    label = f"case {index + 1}" + (f" ({jsonl_file}:{jsonl_line})" if jsonl_file else "")
    if not isinstance(raw, dict):
        reader.error(f"{label} must be a mapping with `id` and `input` — write it as one", pointer)
        return None
    case_id = raw.get("id")
    if isinstance(case_id, int) and not isinstance(case_id, bool):
        case_id = str(case_id)
    if not isinstance(case_id, str) or not case_id.strip():
        reader.error(f"{label}: missing `id` — give the case a unique id", pointer)
        return None
    label = f"case {case_id!r}" + (f" ({jsonl_file}:{jsonl_line})" if jsonl_file else "")
    if SUITE_ID_SEPARATOR in case_id:
        reader.error(
            f"{label}: ids must not contain {SUITE_ID_SEPARATOR!r} (it separates the suite "
            "name in results) — rename the case",
            _ptr(pointer, "id"),
        )
    _, criteria = _first(raw, OUTCOME_KEYS)
    criteria = criteria if isinstance(criteria, str) else ""
    in_key, messages = _first(raw, INPUT_KEYS)
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not isinstance(messages, list) or not messages:
        reader.error(
            f"{label}: missing input — add `input` (a string or messages) or `input_messages`",
            pointer,
        )
        return None
    case_exec = _obj(raw.get("execution"))
    if isinstance(case_exec.get("target"), str):
        reader.notes.append(
            f"{label}: execution.target {case_exec['target']!r} recorded and ignored "
            "(never read by AgentV either)"
        )
    rendered = _render_input(messages, _ptr(pointer, in_key), label, reader)
    expected_key, expected = _first(raw, EXPECTED_KEYS)
    reference, expected_messages = _reference(expected, reader)
    # Evaluators: a case list replaces the suite's; case rubrics are prepended (AV-FEB).
    ck, case_list = _evaluator_list(raw, case_exec, pointer)
    if case_list is not None:
        ev_raw, ev_ptr = (
            case_list,
            _ptr(pointer, "execution", "evaluators") if ck == "execution" else _ptr(pointer, ck),
        )
    elif suite_evals[0] is not None:
        key = suite_evals[1]
        ev_raw, ev_ptr = (
            suite_evals[0],
            "/execution/evaluators" if key == "execution" else f"/{key}",
        )
    else:
        ev_raw, ev_ptr = [], ""
    rubrics = raw.get("rubrics")
    members = list(ev_raw)
    if isinstance(rubrics, list) and rubrics:
        members = [{"name": "rubric", "type": "rubric", "rubrics": rubrics}, *members]
    if not members:
        members = [{"name": "llm_judge", "type": "llm_judge"}]
    specs_, problems = parse(
        members,
        base_dir=reader.path.parent,
        where=f"{reader.rel(reader.path)} {label}",
        lines=_Lines(reader.line_of),
        pointer=ev_ptr,
    )
    for problem in problems:
        ptr = problem.split(":", 1)[0] if problem.startswith("/") else ev_ptr
        if not any(p.message == problem for p in reader.problems):
            reader.error(problem, ptr)
    timeout = case_exec.get("timeout_seconds", execution.get("timeout_seconds"))
    timeout_seconds = timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else 0
    conversation = raw.get("conversation_id")
    conversation_id = conversation if isinstance(conversation, str) else ""
    eval_id = f"{suite}{SUITE_ID_SEPARATOR}{case_id}"
    refs = [f.source for f in rendered.fixtures]
    refs += _referenced_files(members, reader)
    if jsonl_file:
        refs.append(reader.root / jsonl_file)
    ref_pairs = tuple(dict.fromkeys((reader.rel(r), r) for r in refs))
    spec = {
        "suite": suite,
        "defaults": defaults,
        "case": raw,
        "prompt": rendered.prompt,
        "files": [f.dest for f in rendered.fixtures],
        "skill_blocks_dropped": len(rendered.dropped),
    }
    if expected_key == "expected_output" and isinstance(expected, dict):
        spec["expected_output"] = expected
    return SuiteCase(
        id=case_id,
        eval_id=eval_id,
        name=f"{conversation_id}/{case_id}" if conversation_id else "",
        line=where_line if where_line is not None else jsonl_line,
        prompt=rendered.prompt,
        criteria=criteria,
        reference_answer=reference,
        expected_messages=tuple(expected_messages),
        input_messages=tuple(m for m in messages if isinstance(m, dict)),
        fixtures=rendered.fixtures,
        guideline_files=rendered.guidelines,
        evaluators=tuple(specs_),
        conversation_id=conversation_id,
        timeout_seconds=timeout_seconds,
        refs=ref_pairs,
        spec=spec,
        notes=tuple(rendered.dropped),
        eval_dir=reader.path.parent,
    )


# --------------------------------------------------------------------------------------------
# Input rendering (AgentV formatting/prompt-builder.ts + providers/preread.ts, agent mode)


@dataclass(frozen=True, slots=True)
class _Rendered:
    prompt: str
    fixtures: tuple[FixtureRef, ...]
    guidelines: tuple[str, ...]
    dropped: tuple[str, ...]


def _dest_of(value: str) -> str:
    parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    return "/".join(parts)


def _render_input(messages: list[Any], pointer: str, label: str, reader: _Reader) -> _Rendered:
    fixtures: dict[str, FixtureRef] = {}
    guidelines: list[str] = []
    dropped: list[str] = []
    per_message: list[list[tuple[str, str]]] = []  # (kind, text) kinds: text, file, guideline
    roles: list[str] = []
    for mi, message in enumerate(messages):
        mptr = _ptr(pointer, mi)
        segments: list[tuple[str, str]] = []
        if not isinstance(message, dict):
            reader.error(f"{label}: message {mi + 1} must be a mapping with role and content", mptr)
            per_message.append(segments)
            roles.append("user")
            continue
        role = message.get("role")
        if role not in ROLES:
            reader.error(
                f"{label}: message {mi + 1} role {role!r} — use one of system, user, "
                "assistant, tool",
                _ptr(mptr, "role"),
            )
            role = "user"
        roles.append(str(role))
        content = message.get("content")
        if isinstance(content, str):
            if content.strip():
                segments.append(("text", content))
        elif isinstance(content, dict):
            segments.append(("text", json.dumps(content, indent=2, ensure_ascii=False)))
        elif isinstance(content, list):
            for bi, block in enumerate(content):
                bptr = _ptr(mptr, "content", bi)
                if isinstance(block, str):
                    if block.strip():
                        segments.append(("text", block))
                    continue
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                value = block.get("value")
                if kind == "text" and isinstance(value, str):
                    if value.strip():
                        segments.append(("text", value))
                elif kind == "json":
                    segments.append(("text", json.dumps(value, indent=2, ensure_ascii=False)))
                elif kind in ("file", "image") and isinstance(value, str) and value:
                    if kind == "image" and not _looks_like_path(value):
                        reader.notes.append(
                            f"{label}: an inline (base64) image block cannot reach Claude Code "
                            "as a file and is left out"
                        )
                        continue
                    source = reader.resolve(value)
                    if source is None:
                        reader.error(
                            f"{label}: file {value!r} not found (looked in "
                            f"{reader.rel(reader.roots[0]) or '.'} and every parent up to the "
                            "repository root) — fix the path or add the file",
                            _ptr(bptr, "value"),
                        )
                        continue
                    if reader.in_skill(source):
                        dropped.append(
                            f"{label}: file block {value!r} is the skill under test "
                            f"({reader.rel(source)}) and is dropped: Claude Code loads the "
                            "skill itself, and the baseline must run without it"
                        )
                        continue
                    dest = _dest_of(value)
                    prior = fixtures.get(dest)
                    if prior is not None and prior.source != source:
                        reader.error(
                            f"{label}: files {prior.authored!r} and {value!r} would both be "
                            f"staged at {dest!r} — rename one",
                            _ptr(bptr, "value"),
                        )
                        continue
                    fixtures[dest] = FixtureRef(authored=value, rel=dest, dest=dest, source=source)
                    if any(glob_match(reader.rel(source), p) for p in reader.guideline_patterns):
                        if dest not in guidelines:
                            guidelines.append(dest)
                        segments.append(("guideline", dest))
                    else:
                        segments.append(("file", dest))
        per_message.append(segments)
    markers = any(r in ("assistant", "tool") for r in roles) or (
        sum(1 for s in per_message if _visible(s)) > 1
    )
    if markers:
        parts: list[str] = []
        for role, segments in zip(roles, per_message, strict=True):
            if not _visible(segments):
                continue
            body = "\n".join(_format(kind, text) for kind, text in segments)
            parts.append(f"@[{role[:1].upper() + role[1:]}]:\n{body}")
        question = "\n\n".join(parts)
    else:
        flat = [_format(kind, text).strip() for s in per_message for kind, text in s]
        question = "\n\n".join(p for p in flat if p)
    inputs = [d for d in fixtures if d not in guidelines]
    sections: list[str] = []
    if guidelines:
        sections.append("Read all guideline files:\n" + _listing(guidelines) + ".")
    if inputs:
        sections.append("Read all input files:\n" + _listing(inputs) + ".")
    if sections:
        sections += [
            "If any file is missing, fail with ERROR: missing-file <filename> and stop.",
            "Then apply system_instructions on the user query below.",
        ]
        prompt = "\n".join(sections) + "\n\n[[ ## user_query ## ]]\n\n" + question.strip()
    else:
        prompt = question.strip()
    return _Rendered(prompt, tuple(fixtures.values()), tuple(guidelines), tuple(dropped))


def _looks_like_path(value: str) -> bool:
    return not value.startswith("data:") and len(value) < 1024 and "\n" not in value


def _visible(segments: Sequence[tuple[str, str]]) -> bool:
    return any(kind in ("text", "file") and text.strip() for kind, text in segments)


def _format(kind: str, text: str) -> str:
    if kind == "file":
        return f'<file: path="{text}">'
    if kind == "guideline":
        return f"<Attached: {text}>"
    return text


def _listing(paths: Sequence[str]) -> str:
    return "\n".join(f"* [{posixpath.basename(p)}]({p})" for p in paths)


def _reference(expected: Any, reader: _Reader) -> tuple[str | None, list[Any]]:
    """AV-FEB: the last expected message's content is the reference answer (objects as JSON)."""
    if expected is None:
        return None, []
    if isinstance(expected, str):
        return expected, [{"role": "assistant", "content": expected}]
    if isinstance(expected, dict):
        if "role" in expected:
            expected = [expected]
        else:
            return _compact(expected), [{"role": "assistant", "content": expected}]
    if not isinstance(expected, list) or not expected:
        return None, []
    messages = [m for m in expected if isinstance(m, dict)]
    if not messages:
        return None, []
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, str):
        return content, messages
    if isinstance(content, dict):
        return _compact(content), messages
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("value", "")))
            elif isinstance(block, dict) and block.get("type") == "file":
                source = reader.resolve(str(block.get("value", "")))
                if source is not None:
                    with contextlib.suppress(OSError, UnicodeDecodeError):
                        parts.append(source.read_text(encoding="utf-8"))
        return "\n".join(parts), messages
    if last.get("tool_calls") is not None:
        return _compact(last["tool_calls"]), messages
    return None, messages


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _referenced_files(members: Sequence[Any], reader: _Reader) -> list[Path]:
    """Files an evaluator names (judge scripts, prompt templates), found by AgentV's search."""
    found: list[Path] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str) and len(node) < 4096:
            for token in node.split():
                token = token.strip("'\"")
                if ("/" in token or "." in token) and not token.startswith("-"):
                    path = reader.resolve(token)
                    if path is not None and path != reader.path:
                        found.append(path)

    walk(list(members))
    return found


# --------------------------------------------------------------------------------------------
# Into evolve's model


def load_suite(path: Path, *, root: Path, skill_dir: Path | None = None) -> Suite:
    """`read_suite`, raising the first error as a `SpecError` (file:line and the fix)."""
    suite = read_suite(path, root=root, skill_dir=skill_dir)
    if suite.errors:
        first = suite.errors[0]
        more = f" (and {len(suite.errors) - 1} more)" if len(suite.errors) > 1 else ""
        raise SpecError(f"{first.message}{more}", path=path, line=first.line)
    return suite


def suite_eval_cases(suite: Suite, *, start: int = 0) -> tuple[EvalCase, ...]:
    """The suite's cases as evolve `EvalCase`s (empty for a not-applicable suite): id
    `<suite>::<case>`, the rendered prompt, the staged files and the case itself in `suite`."""
    if suite.not_applicable:
        return ()
    return tuple(
        EvalCase(
            id=case.eval_id,
            name=case.name,
            prompt=case.prompt,
            expected_output=case.reference_answer or "",
            fixtures=case.fixtures,
            timeout_seconds=case.timeout_seconds,
            index=start + i,
            suite=case,
        )
        for i, case in enumerate(suite.cases)
    )


def suite_notes(suite: Suite, root: Path) -> list[str]:
    """One-line notes about how a suite runs (ignored targets, dropped skill blocks, not
    applicable), each naming the file."""
    rel = _rel(suite.path, root)
    notes = [f"note: {rel}: {n}" for n in suite.notes]
    notes += [f"note: {rel}: {n}" for c in suite.cases for n in c.notes]
    if suite.not_applicable:
        notes.append(
            f"note: {rel}: suite {suite.name!r} is not applicable ({suite.not_applicable}); its "
            f"{len(suite.cases)} case(s) are not run and never count as the skill's failures"
        )
    return notes


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def load_authored_evals(
    *,
    evals_path: Path | None,
    suite_paths: Sequence[Path],
    skill_dir: Path,
    root: Path,
    fixture_bases: Sequence[Path] = (),
) -> EvalsSpec:
    """A skill's Tier 2 definitions as one `EvalsSpec`: evolve's evals file (when any), then the
    cases of every valid, applicable suite in path order (an invalid suite is left out: planning
    and Tier 0 report it; it never runs). `SpecError` when the evals file is unusable or an
    evolve-format id equals a suite case's id."""
    if evals_path is not None:
        base = load_evals(evals_path, fixture_bases=fixture_bases)
    elif suite_paths:
        base = EvalsSpec(path=Path(suite_paths[0]))
    else:
        raise SpecError("no eval definitions", path=skill_dir)
    cases = list(base.evals)
    taken = {c.id for c in cases}
    for path in suite_paths:
        suite = read_suite(path, root=root, skill_dir=skill_dir)
        if suite.errors:
            continue
        for case in suite_eval_cases(suite, start=len(cases)):
            if case.id in taken:
                raise SpecError(
                    f"eval id {case.id!r} of suite {suite.name!r} is also an id in "
                    f"{base.path.name} — rename one of them",
                    path=path,
                    line=case.suite.line if case.suite is not None else None,
                )
            taken.add(case.id)
            cases.append(case)
    return dataclasses.replace(base, evals=tuple(cases))
