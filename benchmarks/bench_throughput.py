"""CE-Judge speed, side by side in one process, on a latency-simulating backbone (no GPU needed).

  paper       the paper's released pipeline (paper_pipeline.py): Google-style external translation
              (simulated, batched, no LLM call), English skipped, one order, stage after stage
  seq-llm     ours, not the paper's: the same sequence with an LLM translation of every text
  ours/1      cejudge_dspy's judge, one order (stages concurrent, shared work, English skipped)
  ours/2      cejudge_dspy's judge, both orders (pairwise only)
  ours/2+ext  ours/2 with the paper's external translator: like for like with `paper`
              (pointwise: ours/1+ext)
  ours/grad   cejudge_dspy's default pairwise judge: each response graded on its own, the pairwise
              judgment in both orders only for pairs the grades do not separate (LLM translation)
The ours/1, ours/2 and ours/2+ext rows use the paper's judgment (`judgment="pairwise"`), once or in both
orders, so that their calls compare with the paper's.

Every pipeline runs through `runner.judge_items` at each concurrency on the same synthetic items, whose
repetition of instructions follows the real data (synthetic.py). The table gives LM calls, tokens and
time per item, items/s, and wall time over the critical-path bound computed from the engine's latency
model (harness.py). Then a rerun with DSPy's cache on in a temp directory (memory cache dropped, so
answers come from disk, as in a new process) shows 0 new calls.

    python -m benchmarks.bench_throughput                 # ~6-8 min on 2 shared CPU cores
    python -m benchmarks.bench_throughput --items 16 --concurrency 1,4 --mode pairwise   # quick look
    python -m benchmarks.bench_throughput --record        # append the tables to docs/measurements/data/

`--record` appends the tables (per mode: the runs, the calls per item by stage, the critical paths; the
cache rerun), dated, with the host and versions, to docs/measurements/data/bench_throughput.json, which
docs/measurements/bench-throughput.md shows (record.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy  # noqa: E402

from benchmarks.harness import Run, run  # noqa: E402
from benchmarks.paper_pipeline import PaperPairwise, PaperPointwise, SimulatedExternalTranslator  # noqa: E402
from benchmarks.record import Cell, Table, add_record_argument, record  # noqa: E402
from benchmarks.synthetic import pairwise_items, pointwise_items  # noqa: E402
from cejudge_dspy.backbones import simulated_backbone  # noqa: E402
from cejudge_dspy.data import Item  # noqa: E402
from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge  # noqa: E402

Factory = Callable[[], dspy.Module]
TRANSLATE_S = [0.1]  # the external translator's latency per request (--translate-ms)


def ext() -> SimulatedExternalTranslator:
    return SimulatedExternalTranslator(batch_latency=TRANSLATE_S[0])


def load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


# key: (name, factory, sequential: every call awaited after the previous one)
PIPELINES: dict[str, dict[str, tuple[str, Factory, bool]]] = {
    "pairwise": {
        "a": ("paper", lambda: PaperPairwise("chat"), True),
        "b": ("seq-llm", lambda: PaperPairwise("chat", translator="llm"), True),
        "c": ("ours/1", lambda: PairwiseJudge("chat", orders="single", judgment="pairwise"), False),
        "d": ("ours/2", lambda: PairwiseJudge("chat", orders="both", judgment="pairwise"), False),
        "e": ("ours/2+ext", lambda: PairwiseJudge("chat", translator=ext(), judgment="pairwise"), False),
        "f": ("ours/grad", lambda: PairwiseJudge("chat"), False),
    },
    "pointwise": {
        "a": ("paper", lambda: PaperPointwise("literary"), True),
        "b": ("seq-llm", lambda: PaperPointwise("literary", translator="llm"), True),
        "c": ("ours/1", lambda: PointwiseJudge(), False),
        "e": ("ours/1+ext", lambda: PointwiseJudge(translator=ext()), False),
    },
}
TASKS = {"pairwise": "chat", "pointwise": "literary"}
HEADER = (
    f"{'pipeline':<10} {'conc':>4} {'items':>5} {'calls/it':>8} {'prompt tok/it':>13} {'output tok/it':>13} "
    f"{'latency s/it':>12} {'wall s/it':>9} {'items/s':>8} {'bound it/s':>10} {'wall/bound':>10} "
    f"{'peak items':>10} {'peak calls':>10}"
)


COLUMNS = ["pipeline", "conc", "items", "calls/it", "prompt tok/it", "output tok/it", "latency s/it",
           "wall s/it", "items/s", "bound it/s", "wall/bound", "peak items", "peak calls"]  # fmt: skip
FORMATS = ["", "", "", "{:.2f}", "{:.0f}", "{:.0f}", "{:.3f}", "{:.3f}", "{:.2f}", "{:.2f}", "{:.2f}", "", ""]


def row_data(r: Run) -> list[Cell]:
    """One run's row of the table, as numbers (rounded past what the table shows)."""
    n = r.n
    per = [r.engine_calls / n, r.prompt_tokens / n, r.output_tokens / n, r.latency, r.wall / n, n / r.wall]
    return [r.pipeline, r.concurrency, n, *(round(x, 4) for x in (*per, n / r.bound, r.ratio)),
            r.peak_items, r.peak_calls]  # fmt: skip


def row(r: Run) -> str:
    name, conc, n, calls, prompt, output, latency, wall, speed, bound, ratio, peak_items, peak_calls = (
        row_data(r)
    )
    return (
        f"{name:<10} {conc:>4} {n:>5} {calls:>8.2f} {prompt:>13.0f} {output:>13.0f} {latency:>12.3f} "
        f"{wall:>9.3f} {speed:>8.2f} {bound:>10.2f} {ratio:>10.2f} {peak_items:>10} {peak_calls:>10}"
    )


def per_item(counts: dict[str, int], n: int) -> str:
    return ", ".join(f"{k} {v / n:.2f}" for k, v in sorted(counts.items()))


def bench_mode(mode: str, items: list[Item], args: argparse.Namespace, model: dict[str, Any]) -> list[Table]:
    """Every pipeline at every concurrency; the tables `--record` keeps."""
    lm, engine = simulated_backbone(**model)
    runs: dict[tuple[str, int], Run] = {}
    title = (
        f"{mode}: {len(items)} items, {len({i.instruction for i in items})} unique instructions, "
        f"{sum(i.language == 'en' for i in items)} with English instructions"
    )
    print(f"\n== {title} ==")
    print(HEADER)
    for conc in args.concurrency:
        # Enough items for ~4 waves at this concurrency; the slow low-concurrency runs take a prefix.
        subset = items[: max(args.min_items, args.per_slot * conc)]
        for key, (name, factory, sequential) in PIPELINES[mode].items():
            if key in args.pipelines:
                runs[key, conc] = r = run(
                    name, factory(), subset, lm, engine, conc, task=TASKS[mode], sequential=sequential
                )
                print(row(r), flush=True)
    if not runs:
        return []
    table = Table(COLUMNS, [row_data(r) for r in runs.values()], FORMATS, title)
    return [table, *report(mode, runs, args)]


def report(mode: str, runs: dict[tuple[str, int], Run], args: argparse.Namespace) -> list[Table]:
    """Calls per item and where they go, critical paths, and the numbers the issue's "done when" asks for;
    the first two as tables (the rest is derived from the runs' table)."""
    # Calls are counted on the largest item set (every instruction group); latency at concurrency 1.
    big = max(args.concurrency, key=lambda c: (max(args.min_items, args.per_slot * c), -c))
    first = min(args.concurrency)
    print(
        f"\nLM calls per item at concurrency {big} ({runs_n(runs, big)} items; "
        "reused = a stage result shared):"
    )
    calls: list[list[Cell]] = []
    for key in PIPELINES[mode]:
        if (r := runs.get((key, big))) is None:
            continue
        ext = f", external translation requests {r.external / r.n:.2f}" if r.external else ""
        print(
            f"  {r.pipeline:<10} {r.engine_calls / r.n:.2f} calls{ext}, reused {r.usage['reused'] / r.n:.2f} "
            f"| {per_item(r.by_stage, r.n)}"
        )
        external = round(r.external / r.n, 4) if r.external else None
        reused = round(r.usage["reused"] / r.n, 4)
        per_call = round(r.engine_calls / r.n, 4)
        calls.append([r.pipeline, per_call, external, reused, per_item(r.by_stage, r.n)])
    print(f"Critical path per item at concurrency {first} (harness.py) against the measured item latency:")
    paths: list[list[Cell]] = []
    for key in PIPELINES[mode]:
        if (r := runs.get((key, first))) is not None and r.paths:
            mean = sum(r.paths.values()) / len(r.paths)
            print(f"  {r.pipeline:<10} path {mean:.3f} s, latency {r.latency:.3f} s ({r.latency / mean:.2f})")
            paths.append([r.pipeline, round(mean, 4), round(r.latency, 4), round(r.latency / mean, 4)])
    print(f"-- {mode} summary (load {load()}) --")
    paper = runs.get(("a", big))
    for key in PIPELINES[mode]:
        if (r := runs.get((key, big))) is not None:
            vs = f" ({r.engine_calls / paper.engine_calls:.2f}x paper)" if paper and key != "a" else ""
            print(f"  calls/item {r.pipeline:<10} {r.engine_calls / r.n:.2f}{vs}")
    ours = "d" if mode == "pairwise" else "c"
    for key in ("e", ours):
        if (paper1 := runs.get(("a", first))) and (r1 := runs.get((key, first))):
            print(
                f"  latency/item at concurrency {first}: paper {paper1.latency:.3f} s, {r1.pipeline} "
                f"{r1.latency:.3f} s (paper/ours = {paper1.latency / r1.latency:.2f})"
            )
    for key in PIPELINES[mode]:
        if (r := runs.get((key, 16))) is not None:
            print(
                f"  concurrency 16, {r.pipeline:<10} {r.n / r.wall:.2f} items/s, bound {r.n / r.bound:.2f} "
                f"items/s, wall/critical path {r.ratio:.2f} (goal <= 1.2)"
            )
    return [calls_table(mode, big, runs_n(runs, big), calls), paths_table(mode, first, paths)]


def calls_table(mode: str, conc: int, n: int, rows: list[list[Cell]]) -> Table:
    columns = [
        "pipeline",
        "LM calls/item",
        "external translation requests/item",
        "reused/item",
        "by stage, per item",
    ]
    title = f"{mode}: LM calls per item at concurrency {conc} ({n} items; reused = a stage result shared)"
    return Table(columns, rows, ["", "{:.2f}", "{:.2f}", "{:.2f}", ""], title)


def paths_table(mode: str, conc: int, rows: list[list[Cell]]) -> Table:
    title = (
        f"{mode}: critical path per item at concurrency {conc} (harness.py) against the measured item latency"
    )
    return Table(
        ["pipeline", "path s", "latency s", "latency / path"], rows, ["", "{:.3f}", "{:.3f}", "{:.2f}"], title
    )


def runs_n(runs: dict[tuple[str, int], Run], conc: int) -> int:
    return next((r.n for (_, c), r in runs.items() if c == conc), 0)


def cache_rerun(items: list[Item], model: dict[str, Any], concurrency: int) -> Table:
    """Judge, then judge again with DSPy's cache from disk only: the rerun must cost 0 engine calls."""
    old = dspy.cache
    with tempfile.TemporaryDirectory(prefix="cejudge-bench-cache-") as tmp:
        try:
            dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=tmp)
            lm, engine = simulated_backbone(cache=True, **model)
            judge = PairwiseJudge("chat", judgment="pairwise")
            first = run("ours/2", judge, items, lm, engine, concurrency, task="chat")
            # A new Cache object with memory off: what a new process would find (the disk cache only).
            dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=tmp)
            judge = PairwiseJudge("chat", judgment="pairwise")
            second = run("ours/2", judge, items, lm, engine, concurrency, task="chat")
        finally:
            dspy.cache = old
    title = (
        f"rerun with DSPy's persistent cache ({len(items)} pairwise items, both orders, "
        f"concurrency {concurrency})"
    )
    print(f"\n== {title} ==")
    rows: list[list[Cell]] = []
    for label, r in (("first run", first), ("rerun", second)):
        print(
            f"  {label:<9}: engine calls {r.engine_calls:>4} | LM calls {r.usage['calls']:>4} "
            f"(cached {r.usage['cached']:>4}, reused {r.usage['reused']:>3}) | wall {r.wall:.2f} s"
        )
        rows.append(
            [label, r.engine_calls, r.usage["calls"], r.usage["cached"], r.usage["reused"], round(r.wall, 3)]
        )
    columns = ["run", "engine calls", "LM calls", "cached", "reused", "wall s"]
    return Table(columns, rows, ["", "", "", "", "", "{:.2f}"], title)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("pairwise", "pointwise", "both"), default="both")
    p.add_argument("--items", type=int, default=256, help="pairwise items (~1.37 per instruction)")
    p.add_argument("--pointwise-items", type=int, default=256, help="pointwise items (1 per source)")
    p.add_argument("--min-items", type=int, default=8, help="items at concurrency C: max(this, K*C), capped")
    p.add_argument("--per-slot", type=int, default=4, help="K above: items per concurrency slot")
    p.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16, 64])
    p.add_argument(
        "--pipelines",
        default="abcdef",
        help="subset of a (paper), b (seq-llm), c (ours/1), d (ours/2), e (+ext), f (ours/grad, pairwise)",
    )
    p.add_argument("--base-ms", type=float, default=50.0, help="latency per call, ms")
    p.add_argument("--prompt-ms", type=float, default=0.02, help="latency per prompt token, ms")
    p.add_argument("--output-ms", type=float, default=2.0, help="latency per output token, ms")
    p.add_argument("--translate-ms", type=float, default=100.0, help="external translator, ms per request")
    p.add_argument("--slots", type=int, default=None, help="server batch slots (default: unlimited)")
    p.add_argument("--no-cache-rerun", action="store_true")
    add_record_argument(p, "bench_throughput")
    args = p.parse_args(argv)
    TRANSLATE_S[0] = args.translate_ms / 1000
    model = {
        "base_latency": args.base_ms / 1000,
        "per_prompt_token": args.prompt_ms / 1000,
        "per_output_token": args.output_ms / 1000,
        "max_concurrency": args.slots,
    }
    print(
        f"python {platform.python_version()}, dspy {dspy.__version__}, {os.cpu_count()} CPUs; "
        f"simulated latency {args.base_ms:g} ms + {args.prompt_ms:g} ms/prompt token + "
        f"{args.output_ms:g} ms/output token, "
        f"slots {args.slots or 'unlimited'}; external translation {args.translate_ms:g} ms per request; "
        f"concurrency C judges the first max({args.min_items}, {args.per_slot}*C) items; load {load()}"
    )
    modes = ("pairwise", "pointwise") if args.mode == "both" else (args.mode,)
    tables: list[Table] = []
    for mode in modes:
        items = pairwise_items(args.items) if mode == "pairwise" else pointwise_items(args.pointwise_items)
        tables += bench_mode(mode, items, args, model)
    if not args.no_cache_rerun and "pairwise" in modes:
        tables.append(cache_rerun(pairwise_items(64), model, concurrency=16))
    record(args, "bench_throughput", tables, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
