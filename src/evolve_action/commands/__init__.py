"""CLI subcommands: each module registers its parser and a thin handler (parse → options → engine)."""
