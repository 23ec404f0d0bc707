"""Local data files read directly (issue #41): never a stale cached copy, `first` reads only what its items
need, a file's own `id` column names its items, labels JSON cannot hold are refused, and every problem
names the line a user opens the file at."""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cejudge_dspy.data import _files as files
from cejudge_dspy.data import fingerprint, load_items, read_text_lines, stratified_sample
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.tasks import load_task

PAIRWISE = {"instruction": "prompt", "response_a": "response_a", "response_b": "response_b", "label": "label"}


def pairwise(i: int, label: str = "A", language: str = "en", **extra: Any) -> dict[str, Any]:
    return {
        "prompt": f"q{i}",
        "response_a": "a",
        "response_b": "b",
        "label": label,
        "language": language,
        **extra,
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def rewrite_keeping_mtime(path: Path, data: bytes) -> None:
    """Edit a file in place, same size, and put its timestamps back: a cache keyed on path, size and
    mtime cannot tell the difference."""
    before = path.stat()
    assert len(data) == before.st_size
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_size == before.st_size


# --- never a stale copy --------------------------------------------------------------------------


def test_a_jsonl_file_edited_in_place_with_its_mtime_restored_is_read_anew(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [pairwise(i, "A") for i in range(6)])
    task = load_task("chat")
    first, print_before = load_items(task, str(path), fields=PAIRWISE), fingerprint(task, str(path))
    assert {i.label for i in first} == {"A"}
    rewrite_keeping_mtime(path, path.read_bytes().replace(b'"label": "A"', b'"label": "B"'))
    again = load_items(task, str(path), fields=PAIRWISE)
    assert {i.label for i in again} == {"B"}  # the records and run.json's data hash now agree
    assert fingerprint(task, str(path)) != print_before


def test_a_csv_file_edited_in_place_with_its_mtime_restored_is_read_anew(tmp_path: Path) -> None:
    path = tmp_path / "de-en.csv"
    path.write_text("source;tgt;rating\n" + "".join(f"s{i};t{i};3\n" for i in range(4)), encoding="utf-8")
    assert {i.label for i in load_items(load_task("literary"), str(path))} == {3.0}
    rewrite_keeping_mtime(path, path.read_bytes().replace(b";3\n", b";5\n"))
    assert {i.label for i in load_items(load_task("literary"), str(path))} == {5.0}


def test_a_parquet_file_edited_in_place_with_its_mtime_restored_is_read_anew(tmp_path: Path) -> None:
    path = tmp_path / "de-en.parquet"

    def write(rating: int) -> None:
        table = pa.table({"source": ["s0", "s1"], "tgt": ["t0", "t1"], "rating": [rating, rating]})
        pq.write_table(table, path)

    write(3)
    before = path.stat()
    assert {i.label for i in load_items(load_task("literary"), str(path))} == {3.0}
    write(4)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert {i.label for i in load_items(load_task("literary"), str(path))} == {4.0}


# --- reading only what is needed -----------------------------------------------------------------


class _CountingRaw(io.RawIOBase):
    """The bytes a reader takes from the operating system, below Python's read-ahead buffer."""

    def __init__(self, path: Path, counts: list[int]) -> None:
        self.raw, self.counts = io.FileIO(path), counts

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer) or 0
        self.counts[0] += n
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


@pytest.fixture
def bytes_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counts = [0]
    monkeypatch.setattr(files, "_open", lambda path: io.BufferedReader(_CountingRaw(path, counts)))
    return counts


@pytest.fixture
def large(tmp_path: Path) -> Path:
    """About 4 MB: 4,000 items of 1 KB, in two languages."""
    pad = "x" * 1000
    rows = [pairwise(i, language="de" if i % 4 else "en", response_b=pad) for i in range(4000)]
    return write_jsonl(tmp_path / "large.jsonl", rows)


def test_first_reads_only_the_lines_its_items_need(large: Path, bytes_read: list[int]) -> None:
    items = load_items(load_task("chat"), str(large), fields=PAIRWISE, limit=5, first=True)
    assert [i.id for i in items] == [f"large/{n}" for n in range(5)]
    # the first five lines plus one read-ahead block, out of 4 MB
    assert 0 < bytes_read[0] <= 5 * 1100 + io.DEFAULT_BUFFER_SIZE < large.stat().st_size // 100


def test_first_respects_the_filters_and_stops_when_it_has_its_items(
    large: Path, bytes_read: list[int]
) -> None:
    items = load_items(load_task("chat"), str(large), fields=PAIRWISE, languages=["en"], limit=3, first=True)
    assert [i.id for i in items] == ["large/0", "large/4", "large/8"]
    assert bytes_read[0] <= 9 * 1100 + io.DEFAULT_BUFFER_SIZE


def test_the_seeded_sample_keeps_its_meaning_and_reads_every_line(large: Path, bytes_read: list[int]) -> None:
    # `limit` without `first` is the language-stratified sample over the whole file (as `--limit`
    # documents): a sample that may pick the last line has to read up to it. What streaming changes here
    # is memory and the cache: rows go one by one into items, with only the mapped columns kept.
    task = load_task("chat")
    sample = load_items(task, str(large), fields=PAIRWISE, limit=5, seed=3)
    assert bytes_read[0] >= large.stat().st_size
    everything = load_items(task, str(large), fields=PAIRWISE)
    assert sample == stratified_sample(everything, 5, seed=3)
    assert Counter(i.language for i in sample) == {"de": 4, "en": 1}


def test_first_across_a_directory_stops_in_the_first_file(tmp_path: Path, bytes_read: list[int]) -> None:
    write_jsonl(tmp_path / "a.jsonl", [pairwise(i) for i in range(3)])
    write_jsonl(tmp_path / "b.jsonl", [pairwise(i) for i in range(3)])
    items = load_items(load_task("chat"), str(tmp_path), fields=PAIRWISE, limit=2, first=True)
    assert [i.id for i in items] == ["a/0", "a/1"]
    assert bytes_read[0] == (tmp_path / "a.jsonl").stat().st_size  # b.jsonl was never opened


def test_first_needs_a_limit(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [pairwise(0)])
    with pytest.raises(InputError, match="first needs a limit"):
        load_items(load_task("chat"), str(path), fields=PAIRWISE, first=True)


# --- ids -----------------------------------------------------------------------------------------


def test_an_id_column_names_the_items_without_a_flag(tmp_path: Path) -> None:
    rows = [pairwise(0, id="q-7"), pairwise(1, id=12), pairwise(2, id=" ")]
    items = load_items(load_task("chat"), str(write_jsonl(tmp_path / "d.jsonl", rows)), fields=PAIRWISE)
    assert [i.id for i in items] == ["q-7", "12", "d/2"]  # a blank id falls back to <stem>/<row>


def test_a_mapped_id_wins_over_the_id_column(tmp_path: Path) -> None:
    rows = [pairwise(0, id="x", uid="u0"), pairwise(1, id="x", uid="u1")]
    path = str(write_jsonl(tmp_path / "d.jsonl", rows))
    items = load_items(load_task("chat"), path, fields=PAIRWISE | {"id": "uid"})
    assert [i.id for i in items] == ["u0", "u1"]
    with pytest.raises(InputError, match="item x, field 'id': id is not unique"):
        load_items(load_task("chat"), path, fields=PAIRWISE)


def test_a_declared_id_template_wins_over_an_id_column(tmp_path: Path) -> None:
    scores = {"coherence": 1, "consistency": 2, "fluency": 3, "relevance": 4}
    row = {"id": "ignored", "doc_id": "d1", "system_id": "M0", "source": "s", "system_output": "o"}
    (item,) = load_items(
        load_task("summeval"), str(write_jsonl(tmp_path / "s.jsonl", [row | {"scores": scores}]))
    )
    assert item.id == "d1/M0"


@pytest.mark.shared_data
def test_the_shared_pairwise_file_keeps_its_items_and_takes_its_ids(shared_data: Path) -> None:
    path = shared_data / "pairwise_en_dev.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = load_items(load_task("chat"), str(path))
    assert [i.id for i in items] == [r["id"] for r in rows]
    assert [(i.instruction, i.label) for i in items] == [(r["prompt"], r["label"]) for r in rows]


# --- labels --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rating", "message"),
    [
        ("Infinity", r"not a finite number \(inf\)"),
        ("-Infinity", r"not a finite number \(-inf\)"),
        ("NaN", r"not a number \(NaN\)"),
        ('"nan"', r"not a number \('nan'\)"),
        ('{"overall": 4}', r"expected a number, got dict \{'overall': 4\}"),
        ("[4]", r"expected a number, got list \[4\]"),
    ],
)
def test_a_label_json_cannot_hold_or_a_metric_would_drop_is_refused(
    tmp_path: Path, rating: str, message: str
) -> None:
    path = tmp_path / "de-en.jsonl"
    path.write_text(
        '{"source": "s0", "tgt": "t0", "rating": 3}\n\n'
        + f'{{"source": "s1", "tgt": "t1", "rating": {rating}}}\n'
    )
    with pytest.raises(InputError, match=r"^item de-en/1 \(de-en\.jsonl line 3\), field 'label': " + message):
        load_items(load_task("literary"), str(path))


def test_a_non_finite_score_names_its_dimension(tmp_path: Path) -> None:
    row = '{"doc_id": "d", "system_id": "m", "source": "s", "system_output": "o", "scores": '
    scores = '{"coherence": NaN, "consistency": 1, "fluency": 1, "relevance": 1}}\n'
    path = tmp_path / "s.jsonl"
    path.write_text(row + scores)
    with pytest.raises(InputError, match=r"field 'label': score 'coherence': not a number \(nan\)"):
        load_items(load_task("summeval"), str(path))


# --- where a problem is --------------------------------------------------------------------------


def test_a_bad_line_deep_in_a_jsonl_file_is_named_by_its_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [pairwise(i) for i in range(8)])
    path.write_text(path.read_text() + '{"prompt": "p",}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"d\.jsonl as jsonl: line 9 is not valid JSON \(Expecting property"):
        load_items(load_task("chat"), str(path), fields=PAIRWISE)


def test_row_problems_name_real_lines_past_blank_lines_and_multiline_cells(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n" + json.dumps(pairwise(0)) + "\n\n\n" + json.dumps(pairwise(1, label="C")) + "\n")
    with pytest.raises(InputError, match=r"item d/1 \(d\.jsonl line 5\), field 'label'"):
        load_items(load_task("chat"), str(path), fields=PAIRWISE)
    csv_path = tmp_path / "de-en.csv"
    csv_path.write_text('source;tgt;rating\n"two\nlines";t;3\n\ns;t;bad\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"item de-en/1 \(de-en\.csv line 5\), field 'label'"):
        load_items(load_task("literary"), str(csv_path))


def test_json_lists_and_json_lines_in_a_json_file(tmp_path: Path) -> None:
    listed = tmp_path / "l.json"
    listed.write_text(json.dumps([pairwise(0), pairwise(1, "B")]), encoding="utf-8")
    assert [i.label for i in load_items(load_task("chat"), str(listed), fields=PAIRWISE)] == ["A", "B"]
    lines = tmp_path / "j.json"
    lines.write_text(json.dumps(pairwise(0)) + "\n" + json.dumps(pairwise(1, "tie")) + "\n", encoding="utf-8")
    assert [i.label for i in load_items(load_task("chat"), str(lines), fields=PAIRWISE)] == ["A", "tie"]
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps([pairwise(0), 3]), encoding="utf-8")
    with pytest.raises(DataError, match=r"b\.json row 2: expected a JSON object"):
        load_items(load_task("chat"), str(bad), fields=PAIRWISE)


def test_a_jsonl_row_missing_a_column_of_other_rows_reads_it_as_missing(tmp_path: Path) -> None:
    rows = [pairwise(0, group="g"), pairwise(1)]
    items = load_items(
        load_task("chat"), str(write_jsonl(tmp_path / "d.jsonl", rows)), fields=PAIRWISE | {"group": "group"}
    )
    assert [i.group for i in items] == ["g", None]


def test_csv_cells_longer_than_the_csv_default_limit(tmp_path: Path) -> None:
    path = tmp_path / "de-en.csv"
    path.write_text("source;tgt;rating\n" + "w" * 200_000 + ";t;3\n", encoding="utf-8")
    (item,) = load_items(load_task("literary"), str(path))
    assert len(item.instruction) == 200_000


# --- not a regular file --------------------------------------------------------------------------


def test_named_pipes_are_refused_before_anything_opens_them(tmp_path: Path) -> None:
    # Opening a pipe without a writer blocks: each call returning at all shows nothing opened it.
    pipe = tmp_path / "p.jsonl"
    os.mkfifo(pipe)
    task = load_task("chat")
    for call in (
        lambda: load_items(task, str(pipe)),
        lambda: fingerprint(task, str(pipe)),
        lambda: read_text_lines(pipe, "pass a file"),
    ):
        with pytest.raises(DataError, match=r"p\.jsonl: not a regular file \(a named pipe\)"):
            call()


# --- `cejudge evaluate --first N` ----------------------------------------------------------------


def test_evaluate_first_judges_the_first_items_reads_no_further_and_is_its_own_run(
    large: Path, tmp_path: Path, bytes_read: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    from cejudge_dspy.cli import main

    out = tmp_path / "run"
    common = ["evaluate", "--task", "chat", "--data", str(large), "--lm", "simulated:0", "--no-cache"]
    common += ["--field", "instruction=prompt", "--bootstrap", "0", "--out", str(out)]
    assert main([*common, "--first", "3"]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["item"]["id"] for r in records] == ["large/0", "large/1", "large/2"]
    assert bytes_read[0] <= 3 * 1100 + io.DEFAULT_BUFFER_SIZE  # 4 MB file, three lines read
    run = json.loads((out / "run.json").read_text())
    assert run["first"] == 3 and run["limit"] is None
    # The stratified sample of the same size is another selection, so it does not resume this run.
    capsys.readouterr()
    assert main([*common, "--limit", "3"]) != 0
    assert "first" in capsys.readouterr().err


def test_evaluate_refuses_first_with_limit_and_a_first_below_one(
    large: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cejudge_dspy.cli import main

    base = [
        "evaluate",
        "--task",
        "chat",
        "--data",
        str(large),
        "--lm",
        "simulated:0",
        "--out",
        str(tmp_path / "r"),
    ]
    with pytest.raises(SystemExit):
        main([*base, "--first", "3", "--limit", "3"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert main([*base, "--first", "0"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--first" in err
    assert not (tmp_path / "r").exists()
