"""Flows: the user-level jobs as plain functions over typed options that return data.

Owns: the demo (copy the examples, choose the backend, summarise the written results). Guarantees:
flows never parse argv and never print. Never does: stage work (the stage packages do).

Files (private; import from this package):
- `_demo`: `evolve-action demo`: the example repository, evaluated end to end, offline by default.
"""

from evolve_action.flows._demo import (
    DUMMY_KEY,
    POLICY_RESOURCE,
    Backend,
    DemoSummary,
    SkillFigures,
    choose_backend,
    copy_examples,
    demo_policy,
    render_summary,
    scripted_environ,
    summarise,
)

__all__ = [
    "DUMMY_KEY",
    "POLICY_RESOURCE",
    "Backend",
    "DemoSummary",
    "SkillFigures",
    "choose_backend",
    "copy_examples",
    "demo_policy",
    "render_summary",
    "scripted_environ",
    "summarise",
]
