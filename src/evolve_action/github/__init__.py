"""GitHub I/O: workflow commands (`workflow`), the REST client (`api`), comment and commit-back flows."""
