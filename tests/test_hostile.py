"""Issue #41's hostile inputs: each is one clear line naming the file, item or flag, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bad_inputs import run_case
from tests.support.hostile import CASES


@pytest.mark.parametrize("case", CASES(), ids=lambda c: c.name[:60])
def test_every_hostile_input_is_one_clear_line_and_writes_nothing(case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    kind, detail = run_case(case, tmp_path)
    assert kind == "one line", detail
