"""A benchmark's `--record` appends a dated entry of data to its JSON file, and the measurement page's hook
(docs/hooks/measurement_tables.py) renders it, newest first: the page's tables come from the data."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks import bench_cli_start, bench_long_item, record
from benchmarks.obvious import run as obvious
from tests import support

DOCS = support.REPO / "docs"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "measurement_tables_hook", DOCS / "hooks" / "measurement_tables.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _hook()
FAKE = {
    "python -c pass": [0.10, 0.12, 0.11],
    "cejudge --help": [0.80, 0.90, 0.85],
    "cejudge tasks": [0.60, 0.70, 0.65],
    "cejudge evaluate --help": [0.90, 0.95, 0.99],
}


def _args(path: Path, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    record.add_record_argument(parser, "bench_cli_start")
    return parser.parse_args(["--record", str(path), *argv])


def test_a_recorded_run_is_a_dated_entry_of_data(tmp_path: Path) -> None:
    path = tmp_path / "data" / "bench_cli_start.json"
    args = _args(path, "--note", "a fake run")
    argv = ["--runs", "3", "--record", str(path)]
    assert record.record(args, "bench_cli_start", [bench_cli_start.table(FAKE)], argv) == path
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["benchmark"] == "bench_cli_start" and data["schema"] == record.SCHEMA
    (entry,) = data["entries"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry["date"])
    assert entry["command"] == f"python -m benchmarks.bench_cli_start --runs 3 --record {path}"
    assert entry["note"] == "a fake run"
    assert entry["host"]["cores"] and entry["host"]["cpu"] and len(entry["host"]["load_average"]) == 3
    assert entry["versions"]["python"] and "dspy" in entry["versions"] and "xllamacpp" in entry["versions"]
    assert re.fullmatch(r"[0-9a-f]{7,}( \(dirty\))?", entry["commit"])
    (table,) = entry["tables"]
    assert table["columns"][0] == "command" and len(table["rows"]) == 4
    assert table["rows"][1] == ["`cejudge --help`", 0.85, 0.80, 0.90, pytest.approx(0.85 / 0.11)]  # numbers


def test_given_arguments_are_the_command_even_when_this_process_has_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bare `python -m pytest` (the README's test command) has no arguments either: a call from Python
    with none is still `python -m MODULE`, not this process's command line."""
    monkeypatch.setattr("sys.argv", ["pytest"])
    monkeypatch.setattr("sys.orig_argv", ["python", "-m", "pytest"])
    assert record.command("benchmarks.obvious.run", []) == "python -m benchmarks.obvious.run"
    assert record.command("benchmarks.obvious.run", ["--set", "pairwise"]) == (
        "python -m benchmarks.obvious.run --set pairwise"
    )
    assert record.command("benchmarks.obvious.run", None) == "python -m pytest"  # run as a script


def test_the_hook_renders_the_recorded_entry_newest_first(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    path = docs / "measurements" / "data" / "bench_cli_start.json"
    args = _args(path)
    record.record(args, "bench_cli_start", [bench_cli_start.table(FAKE)], ["--runs", "3"])
    data = json.loads(path.read_text(encoding="utf-8"))
    older = {**data["entries"][0], "date": "2020-01-01T00:00:00Z", "note": "the older one"}
    data["entries"].insert(0, older)  # appended out of order: the page still shows the newest first
    path.write_text(json.dumps(data), encoding="utf-8")
    page = "# Title\n\n<!-- measurements: bench_cli_start level=3 -->\n\nProse after.\n"
    out = HOOK.include(page, docs, "measurements/cli-start.md")
    assert "<!-- measurements" not in out and out.endswith("Prose after.\n")
    newest = HOOK.when(data["entries"][1]["date"])
    assert out.index(f"### {newest}") < out.index("### 2020-01-01 00:00 UTC") < out.index("the older one")
    assert "| `cejudge --help` | 0.850 | 0.800 | 0.900 | 7.7x |" in out
    assert "|---|---:|---:|---:|---:|" in out  # numeric columns right-aligned
    assert "Command: `python -m benchmarks.bench_cli_start --runs 3`" in out
    assert "[bench_cli_start.json](data/bench_cli_start.json)" in out


def test_bench_long_item_records_seconds_calls_and_tokens(tmp_path: Path) -> None:
    """The long-item benchmark's figures (a fake measurement) become a row the page renders."""
    row = {"id": "x/1", "prompt": "p" * 100, "response_a": "a" * 500, "response_b": "b" * 600, "label": "A"}
    measured = {"wall": 61.234, "seconds": 55.5, "status": "ok", "calls": 12, "prompt_tokens": 11343,
                "completion_tokens": 700, "verdict": "A"}  # fmt: skip
    docs = tmp_path / "docs"
    path = docs / "measurements" / "data" / "bench_long_item.json"
    parser = argparse.ArgumentParser()
    record.add_record_argument(parser, "bench_long_item")
    args = parser.parse_args(["--record", str(path)])
    record.record(args, "bench_long_item", [bench_long_item.table(row, "embedded", measured)], ["--record"])
    (entry,) = json.loads(path.read_text(encoding="utf-8"))["entries"]
    expected = ["`x/1`", "`embedded`", "100 / 500 / 600", 61.234, 55.5, 12, 11343, 700, "A (gold A)"]
    assert entry["tables"][0]["rows"] == [expected]  # the numbers as data, formatted only on the page
    out = HOOK.include("<!-- measurements: bench_long_item -->", docs, "measurements/embedded-long-items.md")
    assert "| `x/1` | `embedded` | 100 / 500 / 600 | 61.2 | 55.5 | 12 | 11,343 | 700 | A (gold A) |" in out


def test_bench_long_item_picks_a_paragraph_length_labelled_pair() -> None:
    def pair(i: str, a: int, b: int, label: str = "A") -> dict[str, str]:
        return {"id": i, "prompt": "p" * 100, "response_a": "a" * a, "response_b": "b" * b, "label": label}

    rows = [
        pair("short-b", 1900, 20),
        pair("tie", 950, 950, "tie"),
        pair("para", 500, 700),
        pair("long", 2000, 2000),
    ]
    assert (
        bench_long_item.pick(rows, 2000, None)["id"] == "para"
    )  # the others: a short response, a gold tie, far
    assert bench_long_item.pick(rows, 2000, "long")["id"] == "long"


def test_the_obvious_benchmark_records_its_figures_as_ratios_with_their_counts(tmp_path: Path) -> None:
    def row(i: int, label: str, ab: str | None, ba: str | None) -> dict[str, object]:
        return {"id": str(i), "status": "ok", "language": "de", "response_language": None,
                "kind": "arithmetic", "label": label, "verdict": ab, "score": None, "ab": ab, "ba": ba,
                "order_free": False, "orders": ["AB", "BA"], "shown": [ab, ba], "seconds": 2.0,
                "calls": 11}  # fmt: skip

    rows = [row(1, "A", "A", "A"), row(2, "B", "B", "A"), row(3, "A", "B", "B")]
    tables = obvious.pairwise_tables(obvious.report("pairwise", rows), "obvious pairwise · fake")
    path = tmp_path / "docs" / "measurements" / "data" / "obvious.json"
    parser = argparse.ArgumentParser()
    record.add_record_argument(parser, "obvious")
    record.record(
        parser.parse_args(["--record", str(path)]), "obvious", tables, [], module="benchmarks.obvious.run"
    )
    (entry,) = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert entry["command"] == "python -m benchmarks.obvious.run"
    overall = entry["tables"][0]["rows"][0]
    assert overall[:4] == [
        3,
        [2 / 3, 2, 3],
        [1 / 3, 1, 3],
        [1 / 3, 1, 3],
    ]  # n, then A/B, B/A, both: [value, k, n]
    out = HOOK.include("<!-- measurements: obvious -->", tmp_path / "docs", "measurements/x.md")
    assert "| 3 | 0.667 (2/3) | 0.333 (1/3) | 0.333 (1/3) |" in out
    assert (
        "| de | 3 | 0.67 | 0.33 | 0.33 | 0.67 | 0 | 0 | 0 |" in out
    )  # by language: position consistency 2/3


def test_an_id_marker_shows_one_entry_in_place_and_the_list_leaves_it_out(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    path = docs / "measurements" / "data" / "bench_cli_start.json"
    table = record.Table(["a"], [[1]])
    old = {**record.entry("benchmarks.bench_cli_start", [], [table]), "id": "old-run", "note": "the old one"}
    record.append(path, "bench_cli_start", old)
    record.append(
        path, "bench_cli_start", record.entry("benchmarks.bench_cli_start", [], [table], "a new one")
    )
    page = (
        "<!-- measurements: bench_cli_start -->\n\n## An old run\n\n"
        "<!-- measurements: bench_cli_start id=old-run -->\n"
    )
    out = HOOK.include(page, docs, "measurements/x.md")
    listed, _, in_place = out.partition("## An old run")
    assert "a new one" in listed and "the old one" not in listed
    assert "the old one" in in_place and "id `old-run`" in in_place and "## " not in in_place  # no heading
    with pytest.raises(ValueError, match="0 entries of 'bench_cli_start' have the id 'gone'"):
        HOOK.include("<!-- measurements: bench_cli_start id=gone -->", docs, "measurements/x.md")


def test_a_marker_without_its_data_fails_the_build(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no measurements for 'nothing'"):
        HOOK.include("<!-- measurements: nothing -->", tmp_path, "measurements/x.md")
    named = "Write `<!-- measurements: nothing -->` on a line of its own."  # named in prose: left alone
    assert HOOK.include(named, tmp_path, "contributing-docs.md") == named


def test_without_record_nothing_is_written(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    record.add_record_argument(parser, "bench_cli_start")
    assert record.record(parser.parse_args([]), "bench_cli_start", [bench_cli_start.table(FAKE)]) is None
    assert parser.parse_args(["--record"]).record == str(record.DATA / "bench_cli_start.json")


def test_a_table_refuses_a_row_of_the_wrong_width() -> None:
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        record.Table(["a", "b", "c"], [[1, 2]])


def test_every_marker_of_the_site_has_its_data_and_every_data_file_a_page() -> None:
    marked = set()
    for page in DOCS.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        marked |= {m.group(1) for m in HOOK.MARKER.finditer(text)}
        HOOK.include(text, DOCS, page.relative_to(DOCS).as_posix())  # every marker resolves and renders
    files = {p.stem for p in (DOCS / "measurements" / "data").glob("*.json")}
    assert marked == files
    for bench in files:
        data = json.loads((DOCS / "measurements" / "data" / f"{bench}.json").read_text(encoding="utf-8"))
        assert data["benchmark"] == bench
        for entry in data["entries"]:
            assert entry["date"] and entry["command"] and entry["tables"], f"{bench}: {entry['date']}"
