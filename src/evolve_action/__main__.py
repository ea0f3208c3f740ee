"""`python -m evolve_action` entry point: the same entry as the console script."""

from evolve_action.cli import console_main

raise SystemExit(console_main())
