"""Tuning tests keep GEPA's private checkpoints in a temporary folder, never in the user's cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CEJUDGE_CHECKPOINTS", str(tmp_path_factory.mktemp("checkpoints")))
        yield
