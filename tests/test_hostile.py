"""Issue #41's hostile inputs: each is one clear line naming the file, item or flag, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bad_inputs import run_case
from tests.support.hostile import CASES
from tests.support.hostile.serving import SERVER_CASES, run_server_case


@pytest.mark.parametrize("case", CASES(), ids=lambda c: c.name[:60])
def test_every_hostile_input_is_one_clear_line_and_writes_nothing(case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    kind, detail = run_case(case, tmp_path)
    assert kind == "one line", detail


@pytest.mark.parametrize("case", SERVER_CASES(), ids=lambda c: c.name[:60])
def test_every_broken_server_ends_in_one_line_or_an_honest_outcome(case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue #49: a server answering NaN, a cut answer, an echoed key, no choices, no JSON, or nothing."""
    case.check(run_server_case(case, tmp_path))
