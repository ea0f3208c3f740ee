"""The command-line front end: parse → typed options → call a flow or engine → print → exit code.

Owns: `main`, the parser tree, the exit-code table (docs/cli.md) and one module per subcommand.
Never holds business logic.

Files (private; import from this package):
- `_action`: `evolve-action pr`, `gate` and `run` without a tier: the GitHub Action's modes.
- `_all`: `evolve-action run all`: checks → triggers → evals → report, in one command.
- `_checks`: `evolve-action run checks`: Tier 0 static checks from the command line.
- `_common`: Shared pieces of the subcommand modules: the invocation object and the checks and
  lines the run commands share.
- `_demo`: `evolve-action demo`: evaluate a copy of the example repository end to end, offline by default.
- `_evals`: `evolve-action run evals`: Tier 2 behavioural evals from the command line.
- `_export`: `evolve-action export`: stored results as AgentEvals rows or skill-creator artefacts.
- `_flags`: the flags several subcommands share (repository, selection, trigger tier), defined once.
- `_init`: `evolve-action init`: draft trigger queries and eval cases for the skills that have none.
- `_install`: `evolve-action install`: install an optional agent CLI (Codex).
- `_main`: The command-line front end: parse, build options, pick a reporter, call an engine, map to exit codes.
- `_model_server`: `evolve-action model-server`: run the scripted Anthropic-compatible server until interrupted.
- `_parser`: the argument parser: no abbreviated options, short usage errors, unknown arguments.
- `_report`: `evolve-action report`: regenerate EVALUATION.md / EVALUATION.<fmt> / plugin pages; gate; JUnit.
- `_shard`: `evolve-action plan`, `merge` and `shard`: scale-out over a CI matrix.
- `_steps`: the console lines of `run all`'s steps (`StepPrinter`) and its exit code (`finish`).
- `_triggers`: `evolve-action run triggers`: Tier 1 trigger accuracy from the command line.
"""

from evolve_action.cli._main import build_parser, console_main, main

__all__ = [
    "build_parser",
    "console_main",
    "main",
]
