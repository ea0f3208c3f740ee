"""evolve-action: evaluate coding-agent skills on every pull request.

Owns the package version. Everything else lives in one-concern modules (see DESIGN.md §5).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("evolve-action")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
