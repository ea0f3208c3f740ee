"""The LLM judge: one `anthropic` SDK conversation per eval case grades all of its `llm` assertions.

Owns: the judge prompt, the read-only workspace tools (`list_files`, `read_file`, `grep`) and their
confinement to the workspace, the tool loop (turn cap 16, engine spec §2.2), the forced verdict tool
and the mapping of its answer to one `grading.Verdict` per assertion, plus judge model resolution
and `Judge.call_tool` (one forced-tool turn: `evolve-action init`'s drafting request).

Guarantees: `Judge.grade` never raises for a judge failure (API error after retries, timeout, turn
cap, malformed answer): every affected assertion fails with evidence `judge error: <why>`. Every
assertion gets exactly one verdict, index-aligned with the request. Workspace tools never read
outside the workspace: `..`, absolute paths and symlinks that resolve outside are refused.

Never does: print, read `os.environ` (the caller passes the environment to `client_from_env`), start
processes, or write to the workspace.

Wire protocol (agreed with the scripted model server's `judge` action, `modelserver`):

* One `POST /v1/messages` per judge turn, non-streaming, `model` = the judge model's bare API id
  (`claude-sonnet-5` by default), `max_tokens` 4096, a short `system` text.
* `tools` (offered on every turn, in this order): `list_files`, `read_file`, `grep`,
  `submit_verdicts`. `submit_verdicts` has the input schema::

      {"verdicts": [{"id": <int 1..N>, "passed": <bool>, "evidence": <string>}, ...]}

* `tool_choice` is `{"type": "any"}` (some tool must be called) on every turn except the last allowed
  one (turn 16), where it is `{"type": "tool", "name": "submit_verdicts"}`. A scripted judge may answer
  `submit_verdicts` on its first turn.
* The first user message (the only one carrying text; later user turns carry only `tool_result`
  blocks, except a nudge when the model answered without a tool) is, exactly::

      You are grading an AI coding agent's work against {N} numbered assertions.

      Assertions to verify:
      <assertions>
      1. {text of assertion 1}
      2. {text of assertion 2}
      </assertions>
      {EXP}The agent's final response was:
      ---
      {OUT}
      ---

      The agent's workspace is available through the list_files, read_file and grep tools (paths are
      relative to the workspace root). You may inspect any files in it to verify the assertions.

      Grade every assertion independently. Submit your verdicts by calling the submit_verdicts tool with
      exactly one verdict for every assertion id, 1 through {N}.

  (the two long lines are single lines in the real prompt). Assertion ids are the 1-based positions
  among the case's `llm` assertions in authored order; an assertion text is put on one line (each run
  of whitespace containing a newline becomes one space). `{EXP}` is empty, or
  `The eval author's description of the expected output (context, not a separate assertion):\\n---\\n`
  + the first 2000 bytes of `expected_output` + `\\n---\\n\\n`; `{OUT}` is the first 8000 bytes of the
  agent's final text.
* Answer handling: the first `submit_verdicts` call ends the conversation. `id` may be an integer or a
  decimal string; duplicates → first wins; ids outside 1..N are ignored; a missing id fails that
  assertion with `judge error: no verdict for assertion <i>`. A text-only reply holding spec §10.3's
  `{"verdicts": [...]}` JSON envelope is accepted too; otherwise the judge is nudged to call the tool.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evolve_action.catalog import DEFAULT_JUDGE_MODEL, Catalog, Model
from evolve_action.encoding import compile_re2, truncate_bytes
from evolve_action.errors import ConfigError
from evolve_action.grading._assertions import Verdict
from evolve_action.harness import anthropic_client

if TYPE_CHECKING:  # the SDK is imported lazily: it costs seconds at CLI start
    import anthropic

__all__ = [
    "JUDGE_MAX_TURNS",
    "VERDICT_TOOL",
    "Judge",
    "JudgeRequest",
    "WorkspaceTools",
    "build_prompt",
    "client_from_env",
    "parse_text_verdicts",
    "resolve_judge_model",
]

JUDGE_MAX_TURNS = 16
VERDICT_TOOL = "submit_verdicts"
MAX_TOKENS = 4096
_READ_CAP = 100_000
_GREP_MAX_MATCHES = 200
_LIST_MAX = 1000

_SYSTEM = (
    "You are a strict, fair grader of an AI coding agent's work. Use the workspace tools to check "
    "facts about files, then call submit_verdicts exactly once."
)

_TOOLS: list[dict[str, Any]] = [
    {
        "name": "list_files",
        "description": "List the entries of a directory in the workspace (directories end with '/'). "
        "With recursive=true, list every file below it.",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "directory relative to the workspace root",
                },
                "recursive": {"type": "boolean"},
            },
        },
    },
    {
        "name": "read_file",
        "description": "Read a text file of the workspace, optionally from a 1-based line offset.",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
        },
    },
    {
        "name": "grep",
        "description": "Search workspace files for an RE2 regular expression; returns path:line: text.",
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {
                    "type": "string",
                    "description": "file or directory (default: whole workspace)",
                },
            },
            "required": ["pattern"],
        },
    },
    {
        "name": VERDICT_TOOL,
        "description": "Submit one verdict per assertion id. Call exactly once, with every id.",
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
                        "required": ["id", "passed", "evidence"],
                    },
                }
            },
            "required": ["verdicts"],
        },
    },
]


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeRequest:
    """What one judge conversation grades."""

    assertions: tuple[str, ...]
    """Texts of the case's `llm` assertions in authored order (ids 1..N)."""
    final_text: str
    """The agent's final response (ANSI-stripped)."""
    expected_output: str = ""
    """The eval's `expected_output`: context only, never graded on its own."""
    workspace: Path
    timeout: float = 600.0
    """Wall-clock bound of the whole conversation (the eval timeout)."""


# ---------------------------------------------------------------------------------------------
# Model resolution and client


def resolve_judge_model(catalog: Catalog, token: str | None) -> Model:
    """Resolve `--judge-model` / config `judge_model` (canonical or bare id); default Sonnet 5.

    Raises `ConfigError` with evolve's message when the token names no known model, or when the model
    is not an Anthropic model (this judge speaks the Anthropic Messages API only).
    """
    tok = (token or "").strip() or DEFAULT_JUDGE_MODEL
    model = catalog.lookup(tok)
    if model is None:
        raise ConfigError(
            f'judge model "{tok}": not a known model',
            hint="pass --judge-model with a canonical or bare Anthropic id, e.g. "
            "anthropic/claude-sonnet-5 or claude-sonnet-5",
        )
    if model.provider != "anthropic":
        raise ConfigError(
            f"judge model {model.key}: only Anthropic models can judge (the judge uses the Anthropic API)",
            hint="pass --judge-model anthropic/<model>",
        )
    return model


def client_from_env(
    environ: Mapping[str, str], *, max_retries: int = 4
) -> anthropic.AsyncAnthropic | None:
    """The judge's SDK client (`harness.anthropic_client`, retried `max_retries` times); None
    when no credential is available."""
    return anthropic_client(environ, max_retries=max_retries)


# ---------------------------------------------------------------------------------------------
# Prompt


def _one_line(text: str) -> str:
    return (
        " ".join(part.strip() for part in text.splitlines() if part.strip())
        if "\n" in text or "\r" in text
        else text
    )


def build_prompt(request: JudgeRequest) -> str:
    """The first user message of a judge conversation (exact format in the module docstring)."""
    n = len(request.assertions)
    items = "".join(f"{i}. {_one_line(t)}\n" for i, t in enumerate(request.assertions, 1))
    exp = ""
    if request.expected_output:
        exp = (
            "The eval author's description of the expected output (context, not a separate assertion):\n"
            "---\n" + truncate_bytes(request.expected_output, 2000) + "\n---\n\n"
        )
    out = truncate_bytes(request.final_text, 8000)
    return (
        f"You are grading an AI coding agent's work against {n} numbered assertions.\n"
        "\n"
        "Assertions to verify:\n"
        "<assertions>\n"
        f"{items}"
        "</assertions>\n"
        f"{exp}"
        "The agent's final response was:\n"
        "---\n"
        f"{out}\n"
        "---\n"
        "\n"
        "The agent's workspace is available through the list_files, read_file and grep tools (paths are "
        "relative to the workspace root). You may inspect any files in it to verify the assertions.\n"
        "\n"
        "Grade every assertion independently. Submit your verdicts by calling the submit_verdicts tool "
        f"with exactly one verdict for every assertion id, 1 through {n}."
    )


# ---------------------------------------------------------------------------------------------
# Workspace tools


def _read_head(path: Path, cap: int) -> bytes:
    """At most the first `cap` bytes of a file (never the whole of a large file)."""
    with path.open("rb") as fh:
        return fh.read(cap)


class ToolRefused(Exception):
    """A workspace tool call that is not allowed or cannot be served (reported to the model)."""


class WorkspaceTools:
    """Read-only `list_files` / `read_file` / `grep`, confined to one workspace directory."""

    def __init__(self, workspace: Path) -> None:
        self.root = workspace.resolve()

    def resolve(self, rel: str) -> Path:
        """Map a workspace-relative path to a real path inside the workspace, or raise `ToolRefused`."""
        rel = (rel or ".").strip() or "."
        if rel.startswith("/"):
            # Absolute paths are accepted only when they already point into the workspace.
            candidate = Path(rel)
        else:
            candidate = self.root / rel
        try:
            real = candidate.resolve(strict=False)
        except (OSError, RuntimeError, ValueError) as exc:  # ValueError: a NUL byte in the path
            raise ToolRefused(f"{rel!r}: cannot resolve path ({exc})") from None
        if real != self.root and self.root not in real.parents:
            raise ToolRefused(f"{rel}: outside the workspace (refused)")
        return real

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix() if p != self.root else "."

    def list_files(self, path: str = ".", recursive: bool = False) -> str:
        """List a directory (sorted; directories end with `/`); recursive lists files below it."""
        d = self.resolve(path)
        if not d.is_dir():
            raise ToolRefused(f"{path}: not a directory")
        out: list[str] = []
        if recursive:
            for dirpath, dirnames, filenames in os.walk(d, followlinks=False):
                dirnames[:] = sorted(n for n in dirnames if n != ".git")
                base = Path(dirpath)
                for name in sorted(filenames):
                    out.append(self._rel(base / name))
                    if len(out) >= _LIST_MAX:
                        return "\n".join([*out, f"… (truncated at {_LIST_MAX} entries)"])
        else:
            for entry in sorted(os.scandir(d), key=lambda e: e.name):
                out.append(entry.name + ("/" if entry.is_dir() else ""))
        return "\n".join(out) if out else "(empty)"

    def read_file(self, path: str, offset: int = 1, limit: int | None = None) -> str:
        """Return a file's text (from 1-based line `offset`, `limit` lines), capped at 100 kB.

        Only the first 400 kB of the file are read (lines past that are never returned).
        """
        f = self.resolve(path)
        if not f.is_file():
            raise ToolRefused(f"{path}: not a file")
        data = _read_head(f, _READ_CAP * 4).decode("utf-8", "replace")
        if offset > 1 or limit is not None:
            lines = data.split("\n")
            start = max(offset, 1) - 1
            end = start + limit if limit is not None else len(lines)
            data = "\n".join(lines[start:end])
        if len(data.encode("utf-8")) > _READ_CAP:
            data = truncate_bytes(data, _READ_CAP) + "\n… (truncated)"
        return data

    def grep(self, pattern: str, path: str = ".") -> str:
        """Search files for an RE2 pattern; `path:line: text` lines, at most 200."""
        try:
            rx = compile_re2(pattern)
        except ValueError as exc:
            raise ToolRefused(f"invalid pattern: {exc}") from None
        start = self.resolve(path)
        files: list[Path] = []
        if start.is_file():
            files = [start]
        elif start.is_dir():
            for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
                dirnames[:] = sorted(n for n in dirnames if n != ".git")
                files.extend(Path(dirpath) / n for n in sorted(filenames))
        else:
            raise ToolRefused(f"{path}: no such file or directory")
        hits: list[str] = []
        for f in files:
            try:
                real = f.resolve()
            except OSError:
                continue
            if self.root not in real.parents or not real.is_file():
                continue  # a symlink out of the workspace is skipped silently
            try:
                text = _read_head(real, _READ_CAP * 10).decode("utf-8", "replace")
            except OSError:
                continue
            for no, line in enumerate(text.split("\n"), 1):
                if rx.search(line) is not None:
                    hits.append(f"{self._rel(f)}:{no}: {truncate_bytes(line, 300)}")
                    if len(hits) >= _GREP_MAX_MATCHES:
                        return "\n".join([*hits, "… (truncated)"])
        return "\n".join(hits) if hits else "(no matches)"

    def call(self, name: str, args: Mapping[str, Any]) -> str:
        """Dispatch one tool call; raises `ToolRefused` with a message for the model."""
        if name == "list_files":
            return self.list_files(str(args.get("path") or "."), bool(args.get("recursive", False)))
        if name == "read_file":
            offset = args.get("offset")
            limit = args.get("limit")
            return self.read_file(
                str(args.get("path") or ""),
                offset if isinstance(offset, int) and offset > 0 else 1,
                limit if isinstance(limit, int) and limit > 0 else None,
            )
        if name == "grep":
            return self.grep(str(args.get("pattern") or ""), str(args.get("path") or "."))
        raise ToolRefused(f"unknown tool {name!r}")


# ---------------------------------------------------------------------------------------------
# Verdict parsing


def _as_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _evidence(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return truncate_bytes(text, 200)


def verdicts_from_items(items: Any, n: int) -> dict[int, Verdict]:
    """Map a `verdicts` array to ids 1..N (first wins; out-of-range ids and junk ignored)."""
    out: dict[int, Verdict] = {}
    if not isinstance(items, list):
        return out
    for item in items:
        if not isinstance(item, Mapping):
            continue
        ident = _as_id(item.get("id"))
        if ident is None or not 1 <= ident <= n or ident in out:
            continue
        passed = item.get("passed")
        out[ident] = Verdict(passed=passed is True, evidence=_evidence(item.get("evidence")))
    return out


def parse_text_verdicts(text: str, n: int) -> dict[int, Verdict] | None:
    """Spec §10.3 fallback: the first `{` from which a `{"verdicts": [...]}` value decodes wins."""
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos != -1:
        try:
            value, _ = decoder.raw_decode(text, pos)
        except ValueError:
            value = None
        if isinstance(value, Mapping):
            items = next((v for k, v in value.items() if k.lower() == "verdicts"), None)
            if isinstance(items, list) and items:
                return verdicts_from_items(items, n)
        pos = text.find("{", pos + 1)
    return None


def _complete(found: Mapping[int, Verdict], n: int) -> list[Verdict]:
    return [
        found.get(i) or Verdict(passed=False, evidence=f"judge error: no verdict for assertion {i}")
        for i in range(1, n + 1)
    ]


def _failed(n: int, why: str) -> list[Verdict]:
    return [Verdict(passed=False, evidence=f"judge error: {why}")] * n


# ---------------------------------------------------------------------------------------------
# The conversation


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnswer:
    """`Judge.call_tool`'s answer: the forced tool's input (None without one), the usage, why not."""

    input: Any = None
    usage: Mapping[str, int] = field(default_factory=dict)
    why: str = ""


class GradingCache:
    """Judge verdicts by (transcript, expectation, judge model): a bounded map (least recently
    used out), so re-grading what was graded already starts no conversation. Each `Judge` has
    one; a caller that grades over several sweeps (power on demand's rounds) keeps one judge."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._items: collections.OrderedDict[str, Verdict] = collections.OrderedDict()
        self.hits = 0

    def get(self, key: str) -> Verdict | None:
        got = self._items.get(key)
        if got is not None:
            self._items.move_to_end(key)
            self.hits += 1
        return got

    def put(self, key: str, verdict: Verdict) -> None:
        self._items[key] = verdict
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)


def _workspace_digest(workspace: Path) -> str:
    """SHA-256 over the workspace's regular files (path and bytes; `.git` left out): what the
    judge's tools can read, so a grading is reused only for the same files."""
    h = hashlib.sha256()
    if not workspace.is_dir():
        return h.hexdigest()
    for path in sorted(
        p for p in workspace.rglob("*") if ".git" not in p.relative_to(workspace).parts
    ):
        if path.is_file() and not path.is_symlink():
            h.update(path.relative_to(workspace).as_posix().encode() + b"\0")
            try:
                h.update(hashlib.sha256(path.read_bytes()).digest())
            except OSError:
                h.update(b"?")
    return h.hexdigest()


def _run_key(model: str, request: JudgeRequest) -> str:
    """The transcript part of a grading's key: the judge model, the agent's final text, the
    expected output shown as context and the workspace's files."""
    h = hashlib.sha256()
    for part in (model, request.final_text, request.expected_output):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    h.update(_workspace_digest(request.workspace).encode())
    return h.hexdigest()


def _grading_key(run: str, assertion: str) -> str:
    return hashlib.sha256(
        f"{run}\0{_one_line(assertion)}".encode("utf-8", "surrogatepass")
    ).hexdigest()


class Judge:
    """Runs judge conversations against one model through one SDK client."""

    def __init__(
        self,
        client: anthropic.AsyncAnthropic | None,
        *,
        model: str,
        max_turns: int = JUDGE_MAX_TURNS,
        unavailable: str = "",
        gradings: GradingCache | None = None,
    ) -> None:
        """`model` is the bare API id; `client=None` makes every verdict a judge error."""
        self.gradings = gradings if gradings is not None else GradingCache()
        self._client = client
        self.model = model
        self.max_turns = max(1, max_turns)
        self.unavailable = unavailable or "no Anthropic credentials for the judge"

    @property
    def available(self) -> bool:
        """False when every verdict will be a `judge unavailable` error (no client)."""
        return self._client is not None

    async def aclose(self) -> None:
        """Close the SDK client's HTTP connections (idempotent)."""
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def grade(self, request: JudgeRequest) -> list[Verdict]:
        """Grade all assertions of one case in one conversation; never raises for judge failures."""
        verdicts, _ = await self.grade_checked(request)
        return verdicts

    async def grade_checked(self, request: JudgeRequest) -> tuple[list[Verdict], str]:
        """`grade`, plus why the judge could not answer (`""` when every assertion got a verdict).

        The reason (`judge unavailable: …`, `timed out`, `HTTP 401: …`, `no verdict for assertion
        2`…) lets the eval engine make the case a runtime error instead of failed expectations.

        Gradings are cached by (transcript, expectation, judge model) (`self.gradings`): an assertion
        already graded for this final text and workspace by this model costs nothing; only the
        others go to the judge, in one conversation. A judge error is never cached.
        """
        if not request.assertions:
            return [], ""
        run = _run_key(self.model, request)
        keys = [_grading_key(run, text) for text in request.assertions]
        known = {i: self.gradings.get(k) for i, k in enumerate(keys)}
        todo = [i for i, v in known.items() if v is None]
        if todo:
            sub = dataclasses.replace(
                request, assertions=tuple(request.assertions[i] for i in todo)
            )
            fresh, why = await self._grade_uncached(sub)
            for i, verdict in zip(todo, fresh, strict=True):
                known[i] = verdict
                if not why:  # a judge error is never cached
                    self.gradings.put(keys[i], verdict)
            if why:
                return [v for _, v in sorted(known.items()) if v is not None], why
        return [v for _, v in sorted(known.items()) if v is not None], ""

    async def _grade_uncached(self, request: JudgeRequest) -> tuple[list[Verdict], str]:
        """One judge conversation over every assertion of `request` (`grade_checked`)."""
        import anthropic

        n = len(request.assertions)
        if n == 0:
            return [], ""
        why = ""
        found: dict[int, Verdict] = {}
        if self._client is None:
            why = f"judge unavailable: {self.unavailable}"
        else:
            try:
                async with asyncio.timeout(request.timeout):
                    found = await self._converse(self._client, request, n)
            except TimeoutError:
                why = "timed out"
            except anthropic.APIStatusError as exc:
                why = f"HTTP {exc.status_code}: {_short(exc.message)}"
            except anthropic.APIError as exc:
                why = _short(str(exc))
            except _JudgeFailure as exc:
                why = str(exc)
        if why:
            return _failed(n, why), why
        missing = [i for i in range(1, n + 1) if i not in found]
        return _complete(found, n), (
            f"no verdict for assertion {', '.join(map(str, missing))}" if missing else ""
        )

    async def complete(self, *, system: str, prompt: str, limit_seconds: float) -> tuple[str, str]:
        """One plain judge turn (no tools): `(reply text, "")`, or `("", why)` on a judge failure.

        For judges whose prompt the eval author wrote (AgentV/AgentEvals `llm_judge`, score-range
        rubrics): the caller parses the reply. Never raises for a judge failure.
        """
        import anthropic

        if self._client is None:
            return "", f"judge unavailable: {self.unavailable}"
        try:
            async with asyncio.timeout(limit_seconds):
                resp = await self._client.messages.create(
                    model=self.model,
                    max_tokens=MAX_TOKENS,
                    system=system,
                    messages=[{"role": "user", "content": prompt}],
                )
        except TimeoutError:
            return "", "timed out"
        except anthropic.APIStatusError as exc:
            return "", f"HTTP {exc.status_code}: {_short(exc.message)}"
        except anthropic.APIError as exc:
            return "", _short(str(exc))
        blocks = [_block_dict(b) for b in resp.content]
        return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text"), ""

    async def call_tool(
        self,
        *,
        system: str,
        prompt: str,
        tool: Mapping[str, Any],
        max_tokens: int,
        limit_seconds: float,
    ) -> ToolAnswer:
        """One turn that forces `tool` (for `evolve-action init`'s drafting request): the tool's
        input, the usage, or why there is none. Never raises for a model failure."""
        import anthropic

        if self._client is None:
            return ToolAnswer(why=f"unavailable: {self.unavailable}")
        try:
            async with asyncio.timeout(limit_seconds):
                params: dict[str, Any] = {
                    "model": self.model,
                    "max_tokens": max_tokens,
                    "system": system,
                    "tools": [dict(tool)],
                    "tool_choice": {"type": "tool", "name": str(tool["name"])},
                    "messages": [{"role": "user", "content": prompt}],
                }
                resp = await self._client.messages.create(**params)
        except TimeoutError:
            return ToolAnswer(why="timed out")
        except anthropic.APIStatusError as exc:
            return ToolAnswer(why=f"HTTP {exc.status_code}: {_short(exc.message)}")
        except anthropic.APIError as exc:
            return ToolAnswer(why=_short(str(exc)))
        u = resp.usage
        usage = {
            "input_tokens": u.input_tokens or 0,
            "output_tokens": u.output_tokens or 0,
            "cache_read_input_tokens": getattr(u, "cache_read_input_tokens", 0) or 0,
            "cache_creation_input_tokens": getattr(u, "cache_creation_input_tokens", 0) or 0,
        }
        for block in (_block_dict(b) for b in resp.content):
            if block.get("type") == "tool_use" and block.get("name") == tool["name"]:
                return ToolAnswer(input=block.get("input"), usage=usage)
        return ToolAnswer(usage=usage, why=f"the model did not call {tool['name']}")

    async def _converse(
        self, client: anthropic.AsyncAnthropic, request: JudgeRequest, n: int
    ) -> dict[int, Verdict]:
        tools = WorkspaceTools(request.workspace)
        messages: list[dict[str, Any]] = [{"role": "user", "content": build_prompt(request)}]
        for turn in range(1, self.max_turns + 1):
            last = turn == self.max_turns
            choice: dict[str, Any] = (
                {"type": "tool", "name": VERDICT_TOOL} if last else {"type": "any"}
            )
            params: dict[str, Any] = {
                "model": self.model,
                "max_tokens": MAX_TOKENS,
                "system": _SYSTEM,
                "tools": _TOOLS,
                "tool_choice": choice,
                "messages": messages,
            }
            resp = await client.messages.create(**params)
            blocks = [_block_dict(b) for b in resp.content]
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            for use in uses:
                if use.get("name") == VERDICT_TOOL:
                    inp = use.get("input")
                    items = inp.get("verdicts") if isinstance(inp, Mapping) else None
                    if isinstance(items, str):  # some models double-encode the array
                        with contextlib.suppress(ValueError):
                            items = json.loads(items)
                    return verdicts_from_items(items, n)
            if not uses:
                text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
                parsed = parse_text_verdicts(text, n)
                if parsed is not None:
                    return parsed
                if last:
                    raise _JudgeFailure("no JSON verdicts in response")
                messages.append(
                    {"role": "assistant", "content": blocks or [{"type": "text", "text": "…"}]}
                )
                messages.append(
                    {
                        "role": "user",
                        "content": f"Call the {VERDICT_TOOL} tool now with every assertion id.",
                    }
                )
                continue
            messages.append({"role": "assistant", "content": blocks})
            results: list[dict[str, Any]] = []
            for use in uses:
                args = use.get("input")
                try:
                    content = tools.call(
                        str(use.get("name")), args if isinstance(args, Mapping) else {}
                    )
                    results.append(
                        {"type": "tool_result", "tool_use_id": use["id"], "content": content}
                    )
                except ToolRefused as exc:
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": use["id"],
                            "content": str(exc),
                            "is_error": True,
                        }
                    )
                except Exception as exc:  # any tool failure is reported to the model
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": use["id"],
                            "content": f"error: {exc}",
                            "is_error": True,
                        }
                    )
            messages.append({"role": "user", "content": results})
        raise _JudgeFailure(f"no verdicts within {self.max_turns} turns")


class _JudgeFailure(Exception):
    pass


def _short(text: str) -> str:
    return truncate_bytes(" ".join(text.split()), 300)


def _block_dict(block: Any) -> dict[str, Any]:
    """An SDK content block as a plain dict suitable to send back as assistant content."""
    if isinstance(block, Mapping):
        return dict(block)
    dump = getattr(block, "model_dump", None)
    if callable(dump):
        data = dump(exclude_none=True)
        if isinstance(data, dict):
            keep = {"text": ("type", "text"), "tool_use": ("type", "id", "name", "input")}
            fields = keep.get(str(data.get("type")))
            return {k: data[k] for k in fields if k in data} if fields else data
    return {"type": "text", "text": str(block)}
