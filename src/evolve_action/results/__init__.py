"""Stored results: the schema-5 model, its codec, the merge rules and the store.

Owns: the results data model (`ResultsFile`, entries, snapshots, summaries), decoding/encoding it
(with migrations from older schemas), merging fresh case results into stored entries (rotating
`previous`/`baseline`, re-summarising), and the store (`load_results`, `write_results`,
`ResultsWriter`: the per-unit writer). Guarantees: writes are atomic and deterministic; an unreadable
results file is never overwritten. Never does: print, plan, run agents.

Files (private; import from this package):
- `_bytes`: The quick decode of a canonical schema-5 results file straight from its JSON bytes.
- `_codec`: The schema-5 results codec: Go `encoding/json` decoding and evolve's exact encoding.
- `_merge`: Pure operations on results entries: summaries, partial-rerun merge, snapshot rotation.
- `_model`: The typed model of a schema-5 results file: frozen msgspec structs, no behaviour.
- `_store`: The schema-5 results file (`<plugin>/evals/<skill>/results.<ext>`): the facade, I/O and recording.
"""

from evolve_action.results._codec import (
    estimate_json,
    from_document,
    measured_json,
    migrate_document,
    to_document,
)
from evolve_action.results._merge import (
    drop_models,
    foreign_model_keys,
    replace_eval_entry,
    replace_trigger_entry,
    summarise_evals,
    summarise_grades,
    summarise_triggers,
    trim_eval_result,
    with_entry,
)
from evolve_action.results._model import (
    EntryHeader,
    Estimate,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    EvalSummary,
    ExecutionMetrics,
    GradedAssertion,
    GradeSummary,
    Measured,
    ModelEntry,
    Pricing,
    ResultsFile,
    Timing,
    TriggerResult,
    TriggersEntry,
    TriggerSnapshot,
    TriggerSummary,
    format_ran_at,
    make_header,
)
from evolve_action.results._store import (
    OVERWRITE_FLAG,
    EvalUnitRecord,
    LoadedResults,
    ResultsWriter,
    TriggerUnitRecord,
    check_writable,
    discard_unusable,
    load_results,
    lock_results,
    migrate_in_place,
    write_results,
)

__all__ = [
    "OVERWRITE_FLAG",
    "EntryHeader",
    "Estimate",
    "EvalResult",
    "EvalSnapshot",
    "EvalSummary",
    "EvalUnitRecord",
    "EvalsEntry",
    "ExecutionMetrics",
    "GradeSummary",
    "GradedAssertion",
    "LoadedResults",
    "Measured",
    "ModelEntry",
    "Pricing",
    "ResultsFile",
    "ResultsWriter",
    "Timing",
    "TriggerResult",
    "TriggerSnapshot",
    "TriggerSummary",
    "TriggerUnitRecord",
    "TriggersEntry",
    "check_writable",
    "discard_unusable",
    "drop_models",
    "estimate_json",
    "foreign_model_keys",
    "format_ran_at",
    "from_document",
    "load_results",
    "lock_results",
    "make_header",
    "measured_json",
    "migrate_document",
    "migrate_in_place",
    "replace_eval_entry",
    "replace_trigger_entry",
    "summarise_evals",
    "summarise_grades",
    "summarise_triggers",
    "to_document",
    "trim_eval_result",
    "with_entry",
    "write_results",
]
