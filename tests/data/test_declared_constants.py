"""A task's declared constants go with its declared columns (issue #48): MM-Eval's `label = "A"` holds because
its `chosen` column is mapped to response A, so it applies to the hub dataset and to a local copy read through
those columns, never to a user's file read through its own columns; a constant given by the caller still
applies, and an empty label cell leaves its item unlabelled (a partly labelled file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.data import load_items
from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import load_task
from tests import support

MMEVAL = support.FIXTURES / "data" / "mmeval.jsonl"


def five_pairs(tmp_path: Path, labels: list[str | None] | None = None) -> str:
    """Five pairs in the common schema, no label column unless `labels` (None: no key in that row)."""
    rows = []
    for i in range(5):
        row = {"instruction": f"Question {i}?", "response_a": f"Answer {i}.", "response_b": f"Reply {i}."}
        row["language"] = "en"
        if labels is not None and labels[i] is not None:
            row["label"] = labels[i]
        rows.append(row)
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_a_users_file_read_through_its_own_columns_gets_no_declared_constant(tmp_path: Path) -> None:
    for task in ("chat", "reasoning"):
        items = load_items(load_task(task), five_pairs(tmp_path))
        assert len(items) == 5
        assert {i.label for i in items} == {None}  # not the declared "A": no one gave a label
        assert {i.subset for i in items} == {None}  # nor the declared subset


def test_command_line_fields_make_a_file_the_users_own(tmp_path: Path) -> None:
    """Remapping a text field on the command line means the file is not the declared dataset."""
    path = tmp_path / "renamed.jsonl"
    path.write_text(json.dumps({"q": "Q?", "chosen": "x", "rejected": "y", "language": "de"}) + "\n")
    (item,) = load_items(load_task("chat"), str(path), fields={"instruction": "q"})
    assert item.label is None and item.language == "de"


def test_a_local_copy_of_the_declared_dataset_keeps_its_constants() -> None:
    """MM-Eval's own columns (prompt/chosen/rejected): the chosen answer is response A, so label A holds."""
    items = load_items(load_task("chat"), str(MMEVAL), subsets=["chat", "reasoning"])
    assert len(items) == 7 and {i.label for i in items} == {"A"}


def test_an_explicit_constant_still_applies(tmp_path: Path) -> None:
    items = load_items(load_task("chat"), five_pairs(tmp_path), constants={"label": "A"})
    assert [i.label for i in items] == ["A"] * 5
    items = load_items(load_task("chat"), five_pairs(tmp_path), constants={"subset": "mine"})
    assert {(i.label, i.subset) for i in items} == {(None, "mine")}


def test_a_partly_labelled_file_keeps_its_unlabelled_items(tmp_path: Path) -> None:
    path = five_pairs(tmp_path, ["A", None, "b", "", "tie"])
    items = load_items(load_task("chat"), path)
    assert [i.label for i in items] == ["A", None, "B", None, "tie"]


def test_a_bad_label_is_still_refused_with_its_item_and_field(tmp_path: Path) -> None:
    path = five_pairs(tmp_path, ["A", "C", None, None, None])
    with pytest.raises(InputError, match=r"item mine/1 \(mine\.jsonl line 2\), field 'label'"):
        load_items(load_task("chat"), path)
