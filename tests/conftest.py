"""Shared test setup: no network metadata fetches, an isolated DSPy cache, the shared data folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Before dspy is imported anywhere: keep DSPy's disk cache out of the user's home and stop the
# model-metadata download attempt (there is no network here).
os.environ.setdefault("DSPY_CACHEDIR", tempfile.mkdtemp(prefix="cejudge-test-dspy-cache-"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """`../shared/data` beside the repository; tests that need it skip cleanly when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not present")
    return SHARED_DATA
