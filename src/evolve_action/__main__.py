"""`python -m evolve_action` entry point: the same `main` as the console script."""

from evolve_action.cli import main

raise SystemExit(main())
