"""Property-based tests (hypothesis) for what reads files a fault or a user may have damaged: the record
reader with its torn-tail repair, and the data loader."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cejudge_dspy.data import Item, load_items
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.runs import Record, append_record, read_records
from cejudge_dspy.runs._files import repair_torn_tail
from cejudge_dspy.tasks import load_task

text = st.text(min_size=0, max_size=30)
records = st.lists(
    st.builds(
        Record,
        id=st.text(min_size=1, max_size=8),
        task=st.just("chat"),
        method=st.just("cejudge"),
        status=st.sampled_from(["ok", "unparsed", "error"]),
        item=st.builds(Item, id=text, mode=st.just("pairwise"), instruction=text, language=text),
        result=st.none(),
        error=st.none() | text,
    ),
    min_size=1,
    max_size=6,
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(records=records, cut=st.floats(min_value=0, max_value=1))
def test_a_file_cut_anywhere_reads_as_a_prefix_and_repairs_to_whole_records(records, cut) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "results.jsonl"
        for r in records:
            append_record(path, r.to_dict())
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * cut)])
        read = read_records(path)  # never raises on a torn tail
        assert read == records[: len(read)]
        repair_torn_tail(path)
        assert read_records(path) == read  # the repaired file holds exactly the whole records
        assert path.read_bytes() == b"" or path.read_bytes().endswith(b"\n")
        for r in records[len(read) :]:  # resuming appends whole lines after the repair
            append_record(path, r.to_dict())
        assert read_records(path) == records


@SETTINGS
@given(lines=st.lists(st.binary(max_size=40), max_size=5))
def test_arbitrary_bytes_are_records_or_one_clear_error(lines) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "results.jsonl"
        path.write_bytes(b"\n".join(lines))
        try:
            read_records(path)
        except CEJudgeError as exc:
            assert str(exc).startswith(f"{path}:") and "\n" not in str(exc)


cell = st.one_of(
    st.none(), text, st.integers(), st.floats(allow_nan=True), st.booleans(), st.lists(text, max_size=2)
)
row = st.fixed_dictionaries(
    {"prompt": cell, "chosen": cell, "rejected": cell},
    optional={"language": st.one_of(cell, st.sampled_from(["de", "en", "German", "xx"])), "label": cell},
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(row, max_size=6), label=st.booleans())
def test_the_loader_returns_valid_items_or_one_clear_error(rows, label) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "data.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        try:
            items = load_items(
                load_task("chat"),
                str(path),
                fields={"label": "label"} if label else None,
                constants={"language": "en"} if not any("language" in r for r in rows) else None,
            )
        except CEJudgeError as exc:
            assert "\n" not in str(exc) and str(exc)
            return
        assert len({i.id for i in items}) == len(items) <= len(rows)
        for item in items:
            assert item.instruction.strip() and item.response_a.strip() and item.response_b.strip()
            assert item.label in (None, "A", "B", "tie")
