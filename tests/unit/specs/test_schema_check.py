"""The compiled schema check (validation's fast path) agrees with jsonschema on every document:
the example repository's triggers and evals files and seeded random mutations of them (types
swapped, keys dropped or added, lists emptied), so a valid file skips jsonschema and an invalid
one still gets jsonschema's exact findings."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest

from evolve_action import encoding
from evolve_action.specs._schema_check import compile_check
from evolve_action.specs._validation import (
    _fast_check,
    _leaves,
    _registry,
    _schema_errors,
    _schema_message,
    load_schema,
    schema_validator,
)

EXAMPLES = Path(__file__).resolve().parents[3] / "src" / "evolve_action" / "examples" / "plugins"

SAMPLES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    2.5,
    -0.5,
    "",
    " ",
    "x",
    "llm",
    "regex",
    "command",
    "file_exists",
    "tool_call",
    "not_regex",
    "file_absent",
    [],
    ["x"],
    [""],
    [1],
    {},
    {"type": "llm"},
    {"type": "llm", "text": "t"},
    {"text": ""},
    {"type": "regex", "pattern": "a"},
    {"type": "command", "run": ""},
    {"query": "q"},
    {"id": 1, "prompt": "p", "expectations": ["e"]},
]
"""Values a mutation puts in place of another (every JSON type; the schemas' enum words)."""

KEYS = [
    "type",
    "text",
    "path",
    "pattern",
    "run",
    "tool",
    "cwd",
    "requires",
    "expect_exit",
    "id",
    "prompt",
    "expectations",
    "assertions",
    "files",
    "max_turns",
    "timeout_seconds",
    "query",
    "should_trigger",
    "models",
    "evals",
    "triggers",
    "skill_name",
    "name",
    "other",
]
"""Keys a mutation adds or drops (the schemas' own, and one they do not know)."""


def _spec_files(stem: str) -> list[Path]:
    found = sorted(EXAMPLES.glob(f"*/evals/*/{stem}.*"))
    assert found, f"no example {stem} files under {EXAMPLES}"
    return found


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside `value` (itself included)."""
    out: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            out.append(item)
            stack.extend(item)
    return out


def _mutate(value: Any, rng: random.Random) -> Any:
    """A copy of `value` with one to three random edits."""
    doc = copy.deepcopy(value)
    for _ in range(rng.randint(1, 3)):
        target = rng.choice(_containers(doc))
        if isinstance(target, dict):
            action = rng.randrange(3)
            if action == 0 and target:
                del target[rng.choice(list(target))]
            elif action == 1 and target:
                target[rng.choice(list(target))] = copy.deepcopy(rng.choice(SAMPLES))
            else:
                target[rng.choice(KEYS)] = copy.deepcopy(rng.choice(SAMPLES))
        elif target:
            action = rng.randrange(3)
            index = rng.randrange(len(target))
            if action == 0:
                del target[index]
            elif action == 1:
                target[index] = copy.deepcopy(rng.choice(SAMPLES))
            else:
                target.clear()
        else:
            target.append(copy.deepcopy(rng.choice(SAMPLES)))
    return doc


def _jsonschema_valid(name: str, value: Any) -> bool:
    return next(iter(schema_validator(name).iter_errors(value)), None) is None


@pytest.mark.parametrize("name", ["triggers", "evals"])
def test_compiled_check_agrees_with_jsonschema_over_mutations(name: str) -> None:
    check = _fast_check(name)
    assert check is not None, f"the {name} schema no longer compiles: validation lost its fast path"
    originals = [encoding.decode_path(p) for p in _spec_files(name)]
    originals = [{name: v} if isinstance(v, list) else v for v in originals]
    rng = random.Random(f"schema-check-{name}")
    outcomes = {True: 0, False: 0}
    for value in originals:
        assert check(value) and _jsonschema_valid(name, value)
    for round_ in range(1500):
        doc = _mutate(rng.choice(originals), rng)
        expected = _jsonschema_valid(name, doc)
        assert check(doc) is expected, f"round {round_}: {doc!r}"
        outcomes[expected] += 1
    assert min(outcomes.values()) > 300, outcomes  # both answers well exercised


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ({"evals": [{"id": 1, "prompt": "p", "expectations": ["e"]}]}, True),
        ({"evals": [{"id": 1.0, "prompt": "p", "expectations": ["e"]}]}, False),  # Go integer
        ({"evals": [{"id": True, "prompt": "p", "expectations": ["e"]}]}, False),
        ({"evals": [{"id": "", "prompt": "p", "expectations": ["e"]}]}, False),
        ({"evals": [{"id": "a", "prompt": "p", "assertions": []}]}, False),  # anyOf: minItems
        ({"evals": [{"id": "a", "prompt": "p", "assertions": [""]}]}, False),  # if/then
        ({"evals": [{"id": "a", "prompt": "p", "assertions": [{"text": ""}]}]}, False),  # not
        ({"evals": [{"id": "a", "prompt": "p", "assertions": [{"type": "regex"}]}]}, False),
        ({"evals": [{"id": "a", "prompt": "p", "assertions": [{"type": "shell"}]}]}, False),
        ({"evals": [{"id": "a", "prompt": "p", "max_turns": -1, "expectations": ["e"]}]}, False),
        ({"evals": [{"id": "a", "prompt": "p", "max_turns": 0, "expectations": ["e"]}]}, True),
        ({"models": [" "], "evals": []}, False),  # pattern \S
        ({"models": ["a b"], "evals": []}, True),
        ([], False),
    ],
)
def test_compiled_check_on_edge_cases(value: Any, valid: bool) -> None:
    check = _fast_check("evals")
    assert check is not None
    assert _jsonschema_valid("evals", value) is valid
    assert check(value) is valid


def test_a_schema_with_an_unhandled_keyword_keeps_jsonschema_path() -> None:
    schema = {"$id": "https://example.invalid/x.json", "type": "object", "patternProperties": {}}
    assert compile_check(schema, _registry().resolver(base_uri=schema["$id"])) is None
    evals = load_schema("evals")
    assert compile_check(evals, _registry().resolver(base_uri=evals["$id"])) is not None
    assert compile_check(evals, _registry().resolver()) is None  # its `$ref`s resolve nowhere


def test_schema_errors_of_mutated_documents_are_jsonschema_s() -> None:
    """With the shortcut in front, `_schema_errors` still returns jsonschema's own errors (same
    validator, path and message, in the same order) for every document, valid or not."""
    rng = random.Random("schema-check-errors")
    invalid = 0
    for name in ("triggers", "evals"):
        originals = [encoding.decode_path(p) for p in _spec_files(name)]
        originals = [{name: v} if isinstance(v, list) else v for v in originals]
        for _ in range(300):
            doc = _mutate(rng.choice(originals), rng)
            direct = [e for err in schema_validator(name).iter_errors(doc) for e in _leaves(err)]
            direct.sort(key=lambda e: (list(map(str, e.absolute_path)), str(e.validator)))
            got = _schema_errors(name, doc)
            assert [_schema_message(e) for e in got] == [_schema_message(e) for e in direct]
            invalid += bool(direct)
    assert invalid > 100
