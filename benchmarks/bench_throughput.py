"""CE-Judge speed, side by side in one process, on a latency-simulating backbone (no GPU needed).

  (a) paper: the paper's pipeline, one call after another, nothing shared, one order (paper_pipeline.py)
  (b) ours/1: cejudge_dspy's judge with one order (stages concurrent, shared work, English skipped)
  (c) ours/2: cejudge_dspy's judge with both orders (pairwise only)

Every pipeline runs through `runner.judge_items` at each concurrency on the same synthetic items; the
table gives LM calls, tokens and time per item, items/s, and wall time over the critical-path bound
computed from the engine's latency model (harness.py). Then a rerun with DSPy's cache on in a temp
directory (memory cache dropped, so answers come from disk, as in a new process) shows 0 new calls.

    python benchmarks/bench_throughput.py                 # ~2-3 min on 2 CPU cores
    python benchmarks/bench_throughput.py --items 16 --concurrency 1,4 --mode pairwise   # quick look
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from collections.abc import Callable
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy  # noqa: E402
from harness import Run, run  # noqa: E402
from paper_pipeline import PaperPairwise, PaperPointwise  # noqa: E402
from synthetic import pairwise_items, pointwise_items  # noqa: E402

from cejudge_dspy.backbones.simulated import simulated_backbone  # noqa: E402
from cejudge_dspy.items import Item  # noqa: E402
from cejudge_dspy.methods.cejudge.judges import PairwiseJudge, PointwiseJudge  # noqa: E402

Factory = Callable[[], dspy.Module]
PIPELINES: dict[str, dict[str, tuple[str, Factory]]] = {
    "pairwise": {
        "a": ("paper", lambda: PaperPairwise("chat")),
        "b": ("ours/1", lambda: PairwiseJudge("chat", orders="single")),
        "c": ("ours/2", lambda: PairwiseJudge("chat", orders="both")),
    },
    "pointwise": {
        "a": ("paper", lambda: PaperPointwise("literary")),
        "b": ("ours/1", lambda: PointwiseJudge()),
    },
}
TASKS = {"pairwise": "chat", "pointwise": "literary"}
HEADER = (
    f"{'pipeline':<8} {'conc':>4} {'items':>5} {'calls/it':>8} {'prompt tok/it':>13} {'output tok/it':>13} "
    f"{'latency s/it':>12} {'wall s/it':>9} {'items/s':>8} {'bound it/s':>10} {'wall/bound':>10} "
    f"{'peak items':>10} {'peak calls':>10}"
)


def row(r: Run) -> str:
    n = r.n
    return (
        f"{r.pipeline:<8} {r.concurrency:>4} {n:>5} {r.engine_calls / n:>8.2f} {r.prompt_tokens / n:>13.0f} "
        f"{r.output_tokens / n:>13.0f} {r.latency:>12.3f} {r.wall / n:>9.3f} {n / r.wall:>8.2f} "
        f"{n / r.bound:>10.2f} {r.ratio:>10.2f} {r.peak_items:>10} {r.peak_calls:>10}"
    )


def per_item(counts: dict[str, int], n: int) -> str:
    return ", ".join(f"{k} {v / n:.2f}" for k, v in sorted(counts.items()))


def bench_mode(mode: str, items: list[Item], args: argparse.Namespace, model: dict[str, Any]) -> None:
    lm, engine = simulated_backbone(**model)
    runs: dict[tuple[str, int], Run] = {}
    print(
        f"\n== {mode}: {len(items)} items, {len({i.instruction for i in items})} unique instructions, "
        f"{sum(i.language == 'en' for i in items)} with English instructions =="
    )
    print(HEADER)
    for conc in args.concurrency:
        # Enough items for ~4 waves at this concurrency; the slow low-concurrency runs take a prefix.
        subset = items[: max(args.min_items, 4 * conc)]
        for key, (name, factory) in PIPELINES[mode].items():
            if key in args.pipelines:
                runs[key, conc] = r = run(name, factory(), subset, lm, engine, conc, task=TASKS[mode])
                print(row(r), flush=True)
    if runs:
        report(mode, runs, args)


def report(mode: str, runs: dict[tuple[str, int], Run], args: argparse.Namespace) -> None:
    """Calls saved and where, critical paths, and the numbers the issue's "done when" asks for."""
    # Calls are counted on the largest item set (every instruction group); latency at concurrency 1.
    big = max(args.concurrency, key=lambda c: (max(args.min_items, 4 * c), -c))
    first = min(args.concurrency)
    paper = runs.get(("a", big))
    print(f"\nLM calls per item at concurrency {big} (shared = a stage result reused, not recomputed):")
    for key in PIPELINES[mode]:
        if (r := runs.get((key, big))) is None:
            continue
        print(f"  {r.pipeline:<7} {r.engine_calls / r.n:.2f} calls | {per_item(r.by_stage, r.n)}")
        if paper is not None and key != "a":
            saved = (paper.engine_calls - r.engine_calls) / r.n
            extra = r.by_stage.get("VerdictJudgment", 0) / r.n - 1 if mode == "pairwise" else 0.0
            english = paper.english / paper.n
            # Shared work is what is left: `reused` also counts a second response reusing its own item's
            # instruction, which the paper's pipeline computes once per item too, so it is no saving.
            shared = saved - english + extra
            print(
                f"          {saved:.2f} fewer than paper = {shared:.2f} shared across items + "
                f"{english:.2f} English translations skipped - {extra:.2f} second-order judgment"
                f" ({r.usage['reused'] / r.n:.2f} stage results reused per item in all)"
            )
    print(
        f"Critical path per item at concurrency {first} (slowest call per level: concepts|translation, "
        "checklist, judgment):"
    )
    for key in PIPELINES[mode]:
        if (r := runs.get((key, first))) is not None and r.paths:
            mean = sum(r.paths.values()) / len(r.paths)
            seq = sum(r.seq_paths.values()) / len(r.seq_paths)
            print(
                f"  {r.pipeline:<7} {mean:.3f} s; as 3 calls + 1 per extra order {seq:.3f} s; "
                f"measured latency {r.latency:.3f} s"
            )
    print(f"-- {mode} summary --")
    for key in PIPELINES[mode]:
        if (r := runs.get((key, big))) is not None:
            print(f"  calls/item {r.pipeline:<7} {r.engine_calls / r.n:.2f}")
    ours1 = runs.get(("c" if mode == "pairwise" else "b", first))
    if (paper1 := runs.get(("a", first))) and ours1:
        print(
            f"  latency/item at concurrency {first}: paper {paper1.latency:.3f} s, {ours1.pipeline} "
            f"{ours1.latency:.3f} s (paper/ours = {paper1.latency / ours1.latency:.2f})"
        )
    for key in PIPELINES[mode]:
        if (r := runs.get((key, 16))) is not None:
            print(
                f"  concurrency 16, {r.pipeline:<7} {r.n / r.wall:.2f} items/s, bound {r.n / r.bound:.2f} "
                f"items/s, wall/bound {r.ratio:.2f}"
            )


def cache_rerun(items: list[Item], model: dict[str, Any], concurrency: int) -> None:
    """Judge, then judge again with DSPy's cache from disk only: the rerun must cost 0 engine calls."""
    old = dspy.cache
    with tempfile.TemporaryDirectory(prefix="cejudge-bench-cache-") as tmp:
        try:
            dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=tmp)
            lm, engine = simulated_backbone(cache=True, **model)
            first = run("ours/2", PairwiseJudge("chat"), items, lm, engine, concurrency, task="chat")
            # A new Cache object with memory off: what a new process would find (the disk cache only).
            dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=tmp)
            second = run("ours/2", PairwiseJudge("chat"), items, lm, engine, concurrency, task="chat")
        finally:
            dspy.cache = old
    print(
        f"\n== rerun with DSPy's persistent cache ({len(items)} pairwise items, both orders, "
        f"concurrency {concurrency}) =="
    )
    for label, r in (("first run", first), ("rerun", second)):
        print(
            f"  {label:<9}: engine calls {r.engine_calls:>4} | LM calls {r.usage['calls']:>4} "
            f"(cached {r.usage['cached']:>4}, reused {r.usage['reused']:>3}) | wall {r.wall:.2f} s"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("pairwise", "pointwise", "both"), default="both")
    p.add_argument("--items", type=int, default=64, help="pairwise items (4 per instruction)")
    p.add_argument("--pointwise-items", type=int, default=32, help="pointwise items (4 per source)")
    p.add_argument("--min-items", type=int, default=8, help="items at concurrency C: max(this, 4*C), capped")
    p.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16, 64])
    p.add_argument("--pipelines", default="abc", help="subset of a (paper), b (ours/1), c (ours/2)")
    p.add_argument("--base-ms", type=float, default=50.0, help="latency per call, ms")
    p.add_argument("--prompt-ms", type=float, default=0.02, help="latency per prompt token, ms")
    p.add_argument("--output-ms", type=float, default=2.0, help="latency per output token, ms")
    p.add_argument("--slots", type=int, default=None, help="server batch slots (default: unlimited)")
    p.add_argument("--no-cache-rerun", action="store_true")
    args = p.parse_args(argv)
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
        f"slots {args.slots or 'unlimited'}; concurrency C judges the first max({args.min_items}, 4*C) items"
    )
    modes = ("pairwise", "pointwise") if args.mode == "both" else (args.mode,)
    for mode in modes:
        items = pairwise_items(args.items) if mode == "pairwise" else pointwise_items(args.pointwise_items)
        bench_mode(mode, items, args, model)
    if not args.no_cache_rerun and "pairwise" in modes:
        cache_rerun(pairwise_items(args.items), model, concurrency=16)
    return 0


if __name__ == "__main__":
    sys.exit(main())
