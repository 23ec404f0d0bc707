"""Hostile options cases (issue #41)."""

from __future__ import annotations

from tests.support.bad_inputs import Case


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    return []
