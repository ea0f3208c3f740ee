"""GitHub I/O: workflow commands today; event context, inputs, outputs, changed files, comments next.

Owns: writing workflow commands (annotations, masks, groups, outputs, step summary) to injected
streams. Guarantees: a value can never break out of its command. Never reads `os.environ`.

Files (private; import from this package):
- `_workflow`: GitHub Actions workflow commands: annotations, masks, groups, outputs and the step summary.
"""

from evolve_action.github._workflow import annotate

__all__ = [
    "annotate",
]
