"""benchmarks/bench_server_throughput.py's bookkeeping, with fakes: no server, no model, no timing asserted.

The table (items per minute, calls and tokens per item, the ratio to in-process at the same concurrency)
from made-up cells, and `measure` end to end with the simulated backbone standing in for both roads.
"""

from __future__ import annotations

from types import SimpleNamespace

from benchmarks.bench_server_throughput import OBVIOUS, Cell, cell_of, measure, record_table, table
from cejudge_dspy.backbones import make_lm
from cejudge_dspy.data import load_items
from cejudge_dspy.tasks import load_task
from cejudge_dspy.usage import Usage


def _record(status: str, verdict: str | None, label: str, calls: int, prompt: int, output: int) -> object:
    usage = Usage(calls=calls, prompt_tokens=prompt, completion_tokens=output)
    result = SimpleNamespace(usage=usage, verdict=verdict)
    return SimpleNamespace(id=f"item-{calls}-{prompt}", status=status, label=label, result=result)


def test_a_cell_sums_its_records() -> None:
    records = [
        _record("ok", "A", "A", 2, 300, 20),
        _record("ok", "B", "A", 2, 310, 24),
        _record("error", None, "A", 0, 0, 0),
    ]
    cell = cell_of("server", 2, records, 30.0)
    assert (cell.items, cell.calls, cell.prompt_tokens, cell.output_tokens) == (3, 4, 610, 44)
    assert (cell.ok, cell.right) == (2, 1)
    assert cell.per_minute == 6.0
    assert cell.verdicts == (("item-0-0", None), ("item-2-300", "A"), ("item-2-310", "B"))


def test_the_table_puts_each_server_row_against_in_process_at_its_concurrency() -> None:
    same, other = (("x", "A"), ("y", "B")), (("x", "A"), ("y", "A"))
    cells = [
        Cell("server", 1, 4, 120.0, 8, 1200, 80, 4, 4, other),  # 2 items a minute
        Cell("in-process", 1, 4, 60.0, 8, 1000, 80, 4, 3, same),  # 4 items a minute
        Cell("server", 2, 4, 100.0, 8, 1200, 80, 4, 4, same),  # no in-process row at 2
    ]
    header, *rows = table(cells)
    assert "items/min" in header and "vs in-process" in header and "agree" in header
    assert [r.split()[:2] for r in rows] == [["in-process", "1"], ["server", "1"], ["server", "2"]]
    assert rows[0].split()[-2:] == ["-", "-"]
    assert rows[1].split()[-2:] == ["0.50x", "1/2"]  # half the speed; the verdicts agree on "x" only
    assert rows[2].split()[-2:] == ["-", "-"]
    fields = rows[1].split()
    assert fields[4:8] == ["2.00", "2.00", "300", "20"]  # items/min, calls, prompt and output tokens per item


def test_the_recorded_table_holds_the_printed_rows_as_numbers() -> None:
    same, other = (("x", "A"), ("y", "B")), (("x", "A"), ("y", "A"))
    cells = [
        Cell("server", 1, 4, 120.0, 8, 1200, 80, 4, 4, other),
        Cell("in-process", 1, 4, 60.0, 8, 1000, 80, 4, 3, same),
    ]
    recorded = record_table(cells)
    assert [r[:2] for r in recorded.rows] == [["in-process", 1], ["server", 1]]
    assert recorded.rows[0][-2:] == [None, "-"]
    assert recorded.rows[1][4] == 2.0 and recorded.rows[1][-2:] == [0.5, "1/2"]
    assert len(recorded.formats) == len(recorded.columns) == len(recorded.rows[1])


def test_measure_judges_every_road_at_every_concurrency() -> None:
    items = load_items(load_task("chat"), str(OBVIOUS), limit=2, first=True)
    simulated = (lambda c: make_lm("simulated:0", cache=False), None)
    shown: list[str] = []
    cells = measure(
        {"in-process": simulated, "server": simulated},
        items,
        task="chat",
        method="direct",
        concurrencies=[1, 2],
        show=shown.append,
    )
    assert [(c.road, c.concurrency) for c in cells] == [
        ("in-process", 1),
        ("server", 1),
        ("in-process", 2),
        ("server", 2),
    ]
    assert all(c.items == 2 and c.ok == 2 for c in cells), cells
    assert all(c.calls == 4 for c in cells), cells  # the direct judge: one call per order
    assert len(shown) == 1 + len(cells)  # the header, then a row as each cell finishes
    assert shown[2].split()[-2:][1] == "2/2"  # the server's row, put against in-process as it comes
