"""`adapter` in a run's identity and records (runs._identity, runs._record): a run.json, a panel member or a
consistency.json from before `--adapter` reads as auto, and a record's `features` keep the adapter's name
beside the true/false/null features."""

from __future__ import annotations

import pytest

from cejudge_dspy.consistency._layout import COMPARED
from cejudge_dspy.runs import IDENTITY_KEYS, Record, identity_diff
from cejudge_dspy.runs._identity import identity_value

OLD = {"task": "chat", "method": "direct", "lm": "openai/x", "api_base": "http://127.0.0.1:9/v1"}


def test_a_run_from_before_the_adapter_reads_as_auto() -> None:
    assert "adapter" in IDENTITY_KEYS and "adapter" in COMPARED
    assert identity_value(OLD, "adapter") == "auto"
    assert identity_diff(OLD, {**OLD, "adapter": "auto"}) == ""
    assert identity_diff(OLD, {**OLD, "adapter": "json"}) == "adapter: 'auto' -> 'json'"
    # A consistency run compares its own keys the same way.
    assert identity_diff(OLD, {**OLD, "adapter": "auto"}, COMPARED) == ""


def test_a_panel_member_from_before_the_adapter_reads_as_auto() -> None:
    member = {"name": "a", "lm": "openai/x", "api_base": None, "method": "direct"}
    old = {**OLD, "method": "panel", "panel": [member, {**member, "name": "b"}]}
    new = {**old, "panel": [{**m, "adapter": "auto"} for m in old["panel"]]}
    assert identity_diff(old, new) == ""
    changed = {**old, "panel": [{**member, "adapter": "json"}, {**member, "name": "b", "adapter": "auto"}]}
    assert identity_diff(old, changed) == "panel member 'a' adapter: 'auto' -> 'json'"


def _row() -> dict[str, object]:
    item = {"id": "i1", "mode": "pairwise", "instruction": "q", "response_a": "a", "response_b": "b"}
    return {"id": "i1", "task": "chat", "method": "direct", "status": "error", "item": item, "result": None}


def test_a_record_keeps_the_adapter_it_was_asked_in() -> None:
    features = {"logprobs": False, "scoring": None, "schema": False, "adapter": "json"}
    assert Record.from_dict(_row() | {"features": features}).features == features
    assert Record.from_dict(_row() | {"features": {"logprobs": True}}).features == {"logprobs": True}
    with pytest.raises(ValueError, match="features"):
        Record.from_dict(_row() | {"features": {"adapter": True}})
    with pytest.raises(ValueError, match="features"):
        Record.from_dict(_row() | {"features": {"logprobs": "json"}})
