"""Judging throughput through llama.cpp's server against the in-process engine, at the same concurrencies.

    python -m benchmarks.bench_server_throughput                          # 4 items, direct, 1,2,4,8
    python -m benchmarks.bench_server_throughput --items 2 --concurrency 1,2   # a quick end-to-end check
    python -m benchmarks.bench_server_throughput --method cejudge --items 8 --json /tmp/roads.json
    python -m benchmarks.bench_server_throughput --adapter json     # the same prompts on both roads
    python -m benchmarks.bench_server_throughput --roads server     # one road only

The same first N items of a pairwise file (default: the 60 obvious pairs, benchmarks/obvious/) are judged
with `--method` (default `direct`, the cheapest: one call per order) on two roads, in one process and
one run, concurrency after concurrency:

  server      `--lm openai/judge --api-base http://127.0.0.1:PORT/v1` against `python -m llama_cpp.server`
              with the packaged GGUF (tests/support/llama_server.py starts it, once for the whole run);
  in-process  `--lm embedded`, a fresh engine per concurrency with `parallel` set to the concurrency
              (1: the serial engine; more: the batched engine decoding that many calls together).

llama-cpp-python's server has no parallel slots to match: it serves one request at a time (one `Llama`
behind a global lock in `llama_cpp/server/app.py`), so at concurrency C the other C - 1 requests queue.
What it does is measured as it is; its concurrency column is the judge's, not the server's. (llama.cpp's
C++ server, e.g. through xllamacpp, has `n_parallel` slots with continuous batching; not measured here.)

Each road is judged the way `cejudge evaluate` judges (`evaluate.judge_items`, DSPy's cache off, the
backbone's preferred adapter unless `--adapter` says otherwise: in-process JSONAdapter, a server DSPy's
ChatAdapter, so the prompts differ and the tokens per item say by how much). Model loading is outside the
clock: one untimed one-token call first. The in-process engine keeps no prompt states on disk between
concurrencies; the server keeps, as it always does, the last request's prefix in its KV cache.

Printed per road and concurrency: items, seconds, items per minute, LM calls, prompt and output tokens
per item, verdicts that came out right, and the server's items per minute over the in-process figure at
the same concurrency. Timings depend on the machine and its load: record them on a measurements page
with both, never in code.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import logging
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy  # noqa: E402

from benchmarks.record import Table, add_record_argument  # noqa: E402
from benchmarks.record import record as record_entry  # noqa: E402
from tests.support.llama_server import LlamaServer as LlamaServerBase  # noqa: E402

OBVIOUS = Path(__file__).resolve().parent / "obvious" / "pairwise.jsonl"
ROADS = ("in-process", "server", "slots")
# The `slots` road: llama.cpp's C++ server (xllamacpp's prebuilt wheel, `pip install -e ".[bench]"`) with
# `n_parallel` slots set to the concurrency, restarted for each; run in its own process, so its llama.cpp
# build never meets llama-cpp-python's in this one.
SLOTS_SERVER = """
import sys, threading, xllamacpp
p = xllamacpp.CommonParams()
p.model.path, p.port = sys.argv[1], int(sys.argv[2])
p.n_parallel, p.n_ctx = int(sys.argv[3]), int(sys.argv[4])
p.hostnames = ["127.0.0.1"]
p.model_alias = {"judge"}
server = xllamacpp.Server(p)
threading.Event().wait()  # serve until terminated
"""
ADAPTERS: dict[str, Callable[[], Any]] = {
    "json": lambda: dspy.JSONAdapter(),
    "chat": lambda: dspy.ChatAdapter(),
}


@dataclass(frozen=True)
class Cell:
    """One road at one concurrency: what its records add up to, and the wall time of the batch."""

    road: str
    concurrency: int
    items: int
    seconds: float
    calls: int
    prompt_tokens: int
    output_tokens: int
    ok: int  # records with a parsed outcome
    right: int  # verdicts equal to the item's label
    verdicts: tuple[tuple[str, str | None], ...] = ()  # (item id, verdict) per record

    @property
    def per_minute(self) -> float:
        return 60.0 * self.items / self.seconds if self.seconds > 0 else float("inf")


def cell_of(road: str, concurrency: int, records: Sequence[Any], seconds: float) -> Cell:
    """Sum a batch's records (`runs.Record`: status, result.usage, result.verdict, label)."""
    calls = prompt = output = ok = right = 0
    verdicts = []
    for record in records:
        verdicts.append((record.id, record.result.verdict if record.result is not None else None))
        result = record.result
        if result is not None:
            calls += result.usage.calls
            prompt += result.usage.prompt_tokens
            output += result.usage.completion_tokens
            right += result.verdict is not None and result.verdict == record.label
        ok += record.status == "ok"
    return Cell(
        road, concurrency, len(records), seconds, calls, prompt, output, ok, right, tuple(sorted(verdicts))
    )


def agreement(cell: Cell, other: Cell) -> str:
    """How many of the items both judged got the same verdict on both roads, as "k/n"."""
    mine, theirs = dict(cell.verdicts), dict(other.verdicts)
    both = [i for i in mine if i in theirs]
    return f"{sum(mine[i] == theirs[i] for i in both)}/{len(both)}"


HEADER = (
    f"{'road':<10} {'conc':>4} {'items':>5} {'seconds':>8} {'items/min':>9} {'calls/item':>10} "
    f"{'prompt tok/item':>15} {'output tok/item':>15} {'ok':>3} {'right':>5} {'vs in-process':>13} "
    f"{'agree':>6}"
)


def row(c: Cell, cells: Sequence[Cell]) -> str:
    """One cell's row; a server row is put against the in-process row at its concurrency in `cells`
    (its items per minute over theirs, and on how many items their verdicts agree)."""
    n = max(c.items, 1)
    base = next((b for b in cells if b.road == "in-process" and b.concurrency == c.concurrency), None)
    against = base is not None and c.road != "in-process"
    ratio = f"{c.per_minute / base.per_minute:.2f}x" if base is not None and against else "-"
    agree = agreement(c, base) if base is not None and against else "-"
    return (
        f"{c.road:<10} {c.concurrency:>4} {c.items:>5} {c.seconds:>8.1f} {c.per_minute:>9.2f} "
        f"{c.calls / n:>10.2f} {c.prompt_tokens / n:>15.0f} {c.output_tokens / n:>15.0f} {c.ok:>3} "
        f"{c.right:>5} {ratio:>13} {agree:>6}"
    )


def record_table(cells: Sequence[Cell]) -> Table:
    """The rows of `table` as data, for `--record` (docs/measurements/data/bench_server_throughput.json)."""
    rows = []
    for c in sorted(cells, key=lambda c: (c.concurrency, ROADS.index(c.road) if c.road in ROADS else 9)):
        n = max(c.items, 1)
        base = next((b for b in cells if b.road == "in-process" and b.concurrency == c.concurrency), None)
        against = base is not None and c.road != "in-process"
        ratio = c.per_minute / base.per_minute if against and base.per_minute else None
        rows.append(
            [c.road, c.concurrency, c.items, c.seconds, c.per_minute, c.calls / n, c.prompt_tokens / n]
            + [c.output_tokens / n, c.ok, c.right, ratio, agreement(c, base) if against else "-"]
        )
    columns = ["road", "concurrency", "items", "seconds", "items/min", "calls/item", "prompt tok/item"]
    columns += ["output tok/item", "ok", "right", "items/min vs in-process", "same verdict"]
    formats = ["", "{}", "{}", "{:.1f}", "{:.2f}", "{:.2f}", "{:.0f}", "{:.0f}", "{}", "{}", "{:.2f}x", ""]
    return Table(columns=columns, rows=rows, formats=formats, title="throughput by road and concurrency")


def table(cells: Sequence[Cell]) -> list[str]:
    """The printed table: a header, then one row per cell, ordered by concurrency then road."""
    order = sorted(cells, key=lambda c: (c.concurrency, ROADS.index(c.road) if c.road in ROADS else 9))
    return [HEADER, *(row(c, cells) for c in order)]


# --- running a road -------------------------------------------------------------------------------

LmFactory = Callable[[int], dspy.LM]  # concurrency -> a fresh LM for that batch


def warm_up(lm: dspy.LM) -> None:
    """One untimed one-token call: loads the model (in-process) and reaches the server. DSPy warns that
    the answer was cut short, which is the point here."""
    log = logging.getLogger("dspy.clients.lm")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        lm("Hi", max_tokens=1)
    finally:
        log.setLevel(level)


def judge_batch(
    lm: dspy.LM, adapter: Any, items: Sequence[Any], *, task: str, method: str, concurrency: int
) -> tuple[list[Any], float]:
    """Judge `items` as `cejudge evaluate --concurrency C` does; the records and the wall seconds (the
    model loaded first by an untimed one-token call, outside the clock)."""
    from cejudge_dspy.evaluate import judge_items
    from cejudge_dspy.judges import memo_adapter, run_program

    program = run_program(task, method)
    context: dict[str, Any] = {"lm": lm, "adapter": memo_adapter(adapter), "disable_history": True}
    with dspy.context(**context), tempfile.TemporaryDirectory(prefix="cejudge-bench-roads-") as tmp:
        warm_up(lm)
        start = time.perf_counter()
        records = asyncio.run(
            judge_items(
                items, program, Path(tmp) / "results.jsonl", task=task, method=method, concurrency=concurrency
            )
        )
        return records, time.perf_counter() - start


def measure(
    roads: dict[str, tuple[LmFactory, Any]],
    items: Sequence[Any],
    *,
    task: str,
    method: str,
    concurrencies: Sequence[int],
    show: Callable[[str], None] = print,
) -> list[Cell]:
    """Every road at every concurrency (interleaved, so a change in load hits both alike): one Cell each.
    `roads`: name -> (a factory of a fresh LM for a concurrency, the adapter)."""
    cells: list[Cell] = []
    show(HEADER)
    for concurrency in concurrencies:
        for road, (factory, adapter) in roads.items():
            lm = factory(concurrency)
            try:
                records, seconds = judge_batch(
                    lm, adapter, items, task=task, method=method, concurrency=concurrency
                )
            finally:
                close = getattr(getattr(lm, "engine", None), "close", None)
                if callable(close):
                    close()
            cells.append(cell := cell_of(road, concurrency, records, seconds))
            show(row(cell, cells))
    return cells


@contextmanager
def real_roads(chosen: Sequence[str], adapter: str, n_ctx: int) -> Iterator[dict[str, tuple[LmFactory, Any]]]:
    """The chosen real roads: the packaged model in-process, and the same file behind llama_cpp.server
    (started only when chosen)."""
    from cejudge_dspy.backbones import make_lm, preferred_adapter
    from tests.support.llama_server import MODEL, LlamaServer, llama_server_available

    def pick(spec: str) -> Any:
        return ADAPTERS[adapter]() if adapter in ADAPTERS else preferred_adapter(spec)

    roads: dict[str, tuple[LmFactory, Any]] = {}
    if "in-process" in chosen:
        roads["in-process"] = (
            lambda c: make_lm("embedded", cache=False, parallel=c, n_ctx=n_ctx, prompt_states=False),
            pick("embedded"),
        )
    with contextlib.ExitStack() as stack:
        if "server" in chosen:
            if (why := llama_server_available()) is not None:
                raise SystemExit(f"error: the server road cannot run here: {why}")
            server = stack.enter_context(LlamaServer(n_ctx=n_ctx))
            roads["server"] = (lambda c: make_lm(MODEL, api_base=server.api_base, cache=False), pick(MODEL))
        if "slots" in chosen:
            if importlib.util.find_spec("xllamacpp") is None:
                raise SystemExit('error: the slots road needs xllamacpp: pip install -e ".[bench]"')
            slots = stack.enter_context(SlotsServer(n_ctx=n_ctx))
            roads["slots"] = (lambda c: make_lm(MODEL, api_base=slots.restart(c), cache=False), pick(MODEL))
        yield roads


class SlotsServer(LlamaServerBase):
    """llama.cpp's C++ server with `n_parallel` slots (SLOTS_SERVER), restarted for each concurrency with as
    many slots: each slot holds `n_ctx` tokens, so the context is `n_ctx` times the slots."""

    def __init__(self, *, n_ctx: int) -> None:
        super().__init__(n_ctx=n_ctx)
        self.slots = 1

    def command(self, model: Path) -> list[str]:
        ctx = str(self.n_ctx * self.slots)
        return [sys.executable, "-c", SLOTS_SERVER, str(model), str(self.port), str(self.slots), ctx]

    def ready(self, models: Any) -> bool:
        return True  # any JSON answer from /v1/models: the C++ server lists the model by its path

    def restart(self, slots: int) -> str:
        self.stop()
        self.slots = slots
        return self.start()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(OBVIOUS), help="a pairwise file (default: the obvious pairs)")
    p.add_argument("--task", default="chat")
    p.add_argument("--items", type=int, default=4, help="the first N items of --data (default 4)")
    p.add_argument("--method", default="direct", help="direct (default, one call per order) or cejudge, ...")
    p.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4, 8])
    p.add_argument("--adapter", choices=("preferred", *ADAPTERS), default="preferred")
    p.add_argument("--n-ctx", type=int, default=8192, help="context of the server and the in-process engine")
    p.add_argument("--roads", default=",".join(ROADS), help="which roads, comma-separated")
    p.add_argument("--json", help="also write the cells to this file")
    add_record_argument(p, "bench_server_throughput")
    args = p.parse_args(argv)

    from cejudge_dspy.data import load_items
    from cejudge_dspy.tasks import load_task

    items = load_items(load_task(args.task), args.data, limit=args.items, first=True)
    print(
        f"{len(items)} items of {args.data}, --method {args.method}, concurrency {args.concurrency}; "
        f"{platform.node()}, {os.cpu_count()} CPUs, load {'{:.2f} {:.2f} {:.2f}'.format(*os.getloadavg())}",
        flush=True,
    )
    chosen = [r for r in args.roads.split(",") if r]
    if not chosen or set(chosen) - set(ROADS):
        p.error(f"--roads takes {', '.join(ROADS)}, got {args.roads!r}")
    with real_roads(chosen, args.adapter, args.n_ctx) as roads:
        cells = measure(
            roads,
            items,
            task=args.task,
            method=args.method,
            concurrencies=args.concurrency,
            show=lambda line: print(line, flush=True),
        )
    print("\n" + "\n".join(table(cells)))
    print(f"load at the end {'{:.2f} {:.2f} {:.2f}'.format(*os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(c) for c in cells], indent=1) + "\n")
    record_entry(args, "bench_server_throughput", [record_table(cells)], argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
