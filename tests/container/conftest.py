"""Container fixtures: the action's image, built once per session (or reused by its inputs' hash).

Every test here is marked `container` (deselect with `-m "not container"`) and skips, with the
reason, where podman cannot run: not installed, not root. A failing build is an error, not a skip.
"""

from __future__ import annotations

import pytest
from tests.conftest import REPO
from tests.helpers.container import Image, build_image, podman_problem


@pytest.fixture(scope="session")
def image() -> Image:
    """The image of this checkout's Dockerfile (see tests/helpers/container.py for the cache)."""
    problem = podman_problem()
    if problem is not None:
        pytest.skip(problem)
    return build_image(REPO)
