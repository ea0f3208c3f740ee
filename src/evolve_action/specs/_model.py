"""The authored Tier 1/Tier 2 definitions as values: models, fixture staging, model restriction.

Owns: the normalized models of `triggers.<ext>` and `evals.<ext>` (`TriggerSpec`, `TriggerQuery`,
`EvalsSpec`, `EvalCase`, `Assertion`, `FixtureRef`, `Source`, `ASSERTION_TYPES`), the fixture
staging rule (engine spec §4.3: `clean_ref`, `is_local`, `staged_path`, `resolve_fixture`) and the
model restriction (§4.4: `model_allowed`).

Guarantees: values are frozen, slotted, keyword-only dataclasses; the staging rule never lets a
`files` entry escape the evals directory (`SpecError`). Never does: read or decode files (see
`_load`, which builds these values), print.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evolve_action.encoding import go_clean, trim_space
from evolve_action.errors import SpecError

if TYPE_CHECKING:
    from evolve_action.specs._evaluators import EvaluatorSpec

__all__ = [
    "ASSERTION_TYPES",
    "Assertion",
    "EvalCase",
    "EvalsSpec",
    "FixtureRef",
    "Source",
    "SuiteCase",
    "TriggerQuery",
    "TriggerSpec",
    "clean_ref",
    "is_local",
    "model_allowed",
    "resolve_fixture",
    "staged_path",
]

ASSERTION_TYPES: tuple[str, ...] = (
    "file_exists",
    "file_absent",
    "regex",
    "not_regex",
    "command",
    "tool_call",
    "llm",
)
"""The assertion types evolve grades (any other type fails at grading and in validation)."""


class Source(StrEnum):
    """Where a normalized assertion came from; results record it as `source`."""

    EXPECTATION = "expectation"
    ASSERTION = "assertion"


# --------------------------------------------------------------------------------------------
# Models


@dataclass(frozen=True, slots=True, kw_only=True)
class Assertion:
    """One normalized assertion (an `expectations` entry, a bare string, or an authored object)."""

    type: str
    """`file_exists`, `file_absent`, `regex`, `not_regex`, `command`, `tool_call` or `llm`; an
    unknown authored type is kept verbatim (validation flags it, grading fails it)."""
    path: str = ""
    """Workspace-relative file (`file_exists`/`file_absent`; optional subject of `regex`/`not_regex`)."""
    pattern: str = ""
    """RE2 pattern (`regex`/`not_regex`, compiled with `(?m)`; `tool_call` argument pattern)."""
    run: str = ""
    """Shell command for `command` (`/bin/sh -c`)."""
    cwd: str = ""
    """Workspace-relative directory the `command` runs in."""
    tool: str = ""
    """RE2 pattern matched against tool names (`tool_call`)."""
    requires: str = ""
    """Executable that must be on PATH for a `command` to run (else it is skipped)."""
    expect_exit: int | None = None
    """Expected exit status of a `command`; `None` (unset) means 0."""
    text: str = ""
    """The statement the LLM judge grades (`llm`)."""
    source: Source = Source.ASSERTION
    """`expectation` for entries expanded from `expectations`, else `assertion`."""
    implied_type: bool = False
    """True for a skill-creator style object without `type`: graded as `llm` (so `type == "llm"`),
    but hashed with `"type":""` exactly as evolve hashes it."""

    @property
    def from_expectation(self) -> bool:
        """True when this assertion was expanded from `expectations`."""
        return self.source is Source.EXPECTATION

    @property
    def exit_code(self) -> int:
        """The exit status a `command` must return (`expect_exit`, default 0)."""
        return 0 if self.expect_exit is None else self.expect_exit

    def describe(self) -> str:
        """evolve's `describe()`: the results `text` and the console label of this assertion."""
        t = self.type
        if t == "file_exists":
            return f"file {self.path} exists"
        if t == "file_absent":
            return f"file {self.path} is absent"
        if t == "regex":
            return f"{self.path or 'output'} matches /{self.pattern}/"
        if t == "not_regex":
            return f"{self.path or 'output'} does not match /{self.pattern}/"
        if t == "command":
            return f"command `{self.run}` exits {self.exit_code}"
        if t == "tool_call":
            if self.pattern:
                return f"agent called tool /{self.tool}/ with args /{self.pattern}/"
            return f"agent called tool /{self.tool}/"
        if t == "llm":
            return self.text
        return t

    def spec_object(self) -> dict[str, Any]:
        """The ordered JSON object of this assertion in the eval spec JSON (engine spec §6.4)."""
        obj = self._with_operands({"type": "" if self.implied_type else self.type})
        if self.text:
            obj["text"] = self.text
        return obj

    def echo(self) -> dict[str, Any]:
        """The authored-assertion fields a results `GradedAssertion` starts with (report spec §1.1):
        `type, path?, pattern?, run?, cwd?, tool?, requires?, expect_exit?` (no `text`)."""
        return self._with_operands({"type": self.type})

    def _with_operands(self, obj: dict[str, Any]) -> dict[str, Any]:
        """`obj` plus the set operands `path, pattern, run, cwd, tool, requires, expect_exit`."""
        for key in ("path", "pattern", "run", "cwd", "tool", "requires"):
            value = getattr(self, key)
            if value:
                obj[key] = value
        if self.expect_exit is not None:
            obj["expect_exit"] = self.expect_exit
        return obj


@dataclass(frozen=True, slots=True, kw_only=True)
class FixtureRef:
    """One `files` entry, resolved by the staging rule (§4.3)."""

    authored: str
    """The path as written in the evals file (hashed verbatim in the spec JSON)."""
    rel: str
    """Cleaned, `/`-separated, one leading `evals/` stripped: the path relative to the evals dir."""
    dest: str
    """Workspace-relative destination: `rel` below `files/`, otherwise its basename."""
    source: Path
    """Absolute source file (`<evals dir>/<rel>`); may not exist (validation reports it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerQuery:
    """One trigger prompt and whether the skill should fire for it."""

    query: str
    should_trigger: bool = False
    index: int = 0
    """Position in the authored `triggers` list."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerSpec:
    """A loaded `triggers.<ext>` file."""

    path: Path
    skill_name: str = ""
    """Optional authored echo of the skill name (the directory stays authoritative)."""
    queries: tuple[TriggerQuery, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteCase:
    """One case of a suite, resolved for running."""

    id: str
    """The authored case id."""
    eval_id: str
    """The results id: `<suite>::<id>`."""
    name: str = ""
    """`<conversation_id>/<id>` when the case has a `conversation_id`."""
    line: int | None = None
    prompt: str = ""
    """The one prompt the agent gets (AgentV's agent-target rendering of the input messages)."""
    criteria: str = ""
    """`expected_outcome` (or its aliases)."""
    reference_answer: str | None = None
    expected_messages: tuple[Mapping[str, Any], ...] = ()
    input_messages: tuple[Mapping[str, Any], ...] = ()
    fixtures: tuple[FixtureRef, ...] = ()
    """Input and guideline files staged into the workspace (`source` absolute)."""
    guideline_files: tuple[str, ...] = ()
    """Workspace paths of the guideline files among `fixtures`."""
    evaluators: tuple[EvaluatorSpec, ...] = ()
    conversation_id: str = ""
    timeout_seconds: int = 0
    refs: tuple[tuple[str, Path], ...] = ()
    """`(repository-relative path, file)` of every file the case depends on (inputs, judge
    scripts, prompt files), for fingerprints."""
    spec: Mapping[str, Any] = field(default_factory=dict)
    """The case, its suite defaults and its rendered prompt as one JSON value (fingerprints)."""
    notes: tuple[str, ...] = ()
    eval_dir: Path = Path()
    """The suite file's directory (code_judge's cwd)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalCase:
    """One normalized behavioural eval."""

    id: str
    """Normalized id (`1` → `"1"`; `""` when absent)."""
    prompt: str = ""
    name: str = ""
    expected_output: str = ""
    files: tuple[str, ...] = ()
    """Authored `files` strings, verbatim."""
    fixtures: tuple[FixtureRef, ...] = ()
    """`files` resolved by the staging rule, in authored order."""
    expectations: tuple[str, ...] = ()
    """Authored `expectations`, verbatim (already expanded into `assertions`)."""
    assertions: tuple[Assertion, ...] = ()
    """Normalized list: expectation `llm` assertions first, then authored ones in order."""
    max_turns: int = 0
    """0 = use the run-level value."""
    timeout_seconds: int = 0
    """0 = use the tier timeout."""
    index: int = 0
    """Position in the authored `evals` list."""
    suite: SuiteCase | None = None
    """Set for a case of an AgentEvals/AgentV suite: graded by its evaluators, not `assertions`."""

    @property
    def label(self) -> str:
        """`eval "<id>"`, or `evals[i]` when the id is empty (evolve's message label)."""
        return f'eval "{self.id}"' if self.id else f"evals[{self.index}]"


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalsSpec:
    """A loaded `evals.<ext>` file."""

    path: Path
    skill_name: str = ""
    models: tuple[str, ...] = ()
    """Model restriction tokens (applies to the skill's evals and triggers); empty = unrestricted."""
    evals: tuple[EvalCase, ...] = field(default=())
    fixture_bases: tuple[Path, ...] = ()
    """Where a `files` entry not found beside the file is looked for next (skill-creator's files:
    the skill root, then the repository root)."""

    @property
    def directory(self) -> Path:
        """The directory holding the evals file (fixture paths are relative to it)."""
        return self.path.parent

    def allows(self, *, provider: str, model: str) -> bool:
        """Whether the `models` restriction admits `provider/model` (§4.4)."""
        return model_allowed(self.models, provider=provider, model=model)

    def get(self, eval_id: str) -> EvalCase | None:
        """The eval with this id (first one if duplicated), or None."""
        for case in self.evals:
            if case.id == eval_id:
                return case
        return None


# --------------------------------------------------------------------------------------------
# Staging rule and model restriction


def clean_ref(ref: str) -> str:
    r"""Steps 1–2 of §4.3: `\` → `/`, POSIX clean (empty → `.`), strip one leading `evals/`."""
    rel = go_clean(ref.replace("\\", "/"))
    if rel.startswith("evals/"):
        rel = rel[len("evals/") :]
    return rel


def is_local(rel: str) -> bool:
    """Go `filepath.IsLocal`-style check on a cleaned path: not absolute, not `..` or `../…`."""
    return not (rel.startswith("/") or rel == ".." or rel.startswith("../"))


def _local_ref(ref: str) -> str:
    """The cleaned ref (`clean_ref`); `SpecError` when it escapes the evals directory."""
    rel = clean_ref(ref)
    if not is_local(rel):
        raise SpecError(f'files entry "{ref}" escapes the evals directory')
    return rel


def _dest_of(rel: str) -> str:
    return rel[len("files/") :] if rel.startswith("files/") else posixpath.basename(rel)


def staged_path(ref: str) -> str:
    """Workspace destination of a `files` entry (§4.3), e.g. `files/a/b.go` → `a/b.go`,
    `fixtures/demo/go.mod` → `go.mod`, `evals/files/x.pdf` → `x.pdf`.

    Raises `SpecError` when the ref escapes the evals directory.
    """
    return _dest_of(_local_ref(ref))


def resolve_fixture(ref: str, evals_dir: Path, bases: Sequence[Path] = ()) -> FixtureRef:
    """Apply the staging rule to one authored `files` entry; `SpecError` when it escapes.

    The source is beside the evals file (evolve's rule); when no file is there, the first of
    `bases` holding the authored path (skill-creator's `evals/files/…` from the skill root, or a
    path from the repository root) is used instead.
    """
    return fixture_candidates(ref, evals_dir, bases)[0]


def fixture_candidates(ref: str, evals_dir: Path, bases: Sequence[Path] = ()) -> list[FixtureRef]:
    """Every place `ref` may be, in lookup order; an existing one first when there is one."""
    rel = _local_ref(ref)
    base = os.path.abspath(evals_dir)  # noqa: PTH100 - no symlink resolution, as in Go
    source = Path(base) if rel == "." else Path(base, rel)
    found = [FixtureRef(authored=ref, rel=rel, dest=_dest_of(rel), source=source)]
    authored = go_clean(ref.replace("\\", "/"))
    if is_local(authored):
        for other in bases:
            path = Path(os.path.abspath(other), authored)  # noqa: PTH100
            if path != source and all(f.source != path for f in found):
                found.append(FixtureRef(authored=ref, rel=rel, dest=_dest_of(rel), source=path))
    present = [f for f in found if f.source.is_file()]
    return [*present, *(f for f in found if f not in present)] if present else found


def model_allowed(restriction: Sequence[str], *, provider: str, model: str) -> bool:
    """§4.4: empty restriction, or a trimmed token `all`, the provider id, `provider/model` or `model`.

    `model` is the bare id (`claude-sonnet-5`); a canonical `provider/bare` is accepted too.
    """
    if not restriction:
        return True
    bare = model.split("/", 1)[1] if model.startswith(provider + "/") else model
    canonical = f"{provider}/{bare}"
    return any(trim_space(tok) in ("all", provider, canonical, bare) for tok in restriction)
