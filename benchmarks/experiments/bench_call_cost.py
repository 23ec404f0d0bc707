"""What one LM call costs in CPU, and what each of a judging run's savings is worth (issue 14).

Each variant judges the same pairwise items (PairwiseJudge("chat", judgment="pairwise"): the paper's
judgment in both orders, LLM translation,
items per instruction from the real data) through `runner.judge_items` at concurrency 64 on an instant
simulated backbone (`simulated:0`), in a fresh process, and reports CPU (user + system, all threads) per
engine call. `shipped` is the code as it is; every other variant undoes one saving, or (marked DSPy)
tries one that only DSPy could make, by patching the process before the run; nothing is patched in the
package itself. The simulated server's own CPU (answering, in this process) is timed apart, since a
real server spends it elsewhere. Variants run in three interleaved rounds and the median is printed, so
a change in the machine's load hits every variant alike:

    python -m benchmarks.experiments.bench_call_cost            # ~4 min on 2 shared cores
    python -m benchmarks.experiments.bench_call_cost --items 300 --rounds 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[2]

VARIANTS = {
    "shipped": "the code as it is",
    "gc-default": "no GC tuning during the run (Python's thresholds, nothing frozen)",
    "history": "DSPy's call history kept (keep_history())",
    "dspy-format": "DSPy's adapter formats the whole prompt on every call",
    "callback": "LM calls counted by a DSPy callback on the LM",
    "write-on-loop": "each record fsynced on the event loop, one by one",
    "dspy:typeadapter": "DSPy: parse_value reuses pydantic TypeAdapters (not shipped)",
    "dspy:no-threads": "DSPy: request preparation and pricing on the loop, no worker thread (not shipped)",
}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _patch(variant: str) -> Any:
    """Apply `variant` to this process; returns a context manager to run the judging in."""
    from cejudge_dspy.evaluate import _runner as runner
    from cejudge_dspy.judges._machinery import _judging_run as runtime
    from cejudge_dspy.judges._machinery import _memo_adapters as formatting

    if variant == "gc-default":
        runtime.run_gc = nullcontext  # type: ignore[assignment]
    elif variant == "history":
        return runtime.keep_history()
    elif variant == "dspy-format":
        from dspy.adapters.utils import format_field_value

        # The memo adapter still counts the calls; only its formatting shortcuts are undone.
        formatting._Memo._remember = lambda self, part, signature, build: build(signature)  # type: ignore[method-assign]
        formatting._input_text = lambda info, value: str(format_field_value(field_info=info, value=value))
    elif variant == "callback":
        formatting.count_lm_call = lambda: None  # type: ignore[assignment]
        for cls in formatting.MEMO_ADAPTERS:
            cls.counts_lm_calls = False  # type: ignore[assignment]
    elif variant == "write-on-loop":
        from cejudge_dspy.runs import append_record

        class OnLoop:
            def __init__(self, path: Path) -> None:
                self.path = path

            async def write(self, row: dict[str, Any]) -> None:
                append_record(self.path, row)

        runner.RecordWriter = OnLoop  # type: ignore[assignment,misc]
    elif variant == "dspy:typeadapter":
        import functools

        import dspy.adapters.utils as adapter_utils
        import pydantic

        adapter_utils.TypeAdapter = functools.lru_cache(maxsize=None)(pydantic.TypeAdapter)
    elif variant == "dspy:no-threads":
        to_thread = asyncio.to_thread

        async def inline_for_dspy(func: Any, /, *args: Any, **kwargs: Any) -> Any:
            # DSPy hops to a worker thread twice per LM call; run those hops inline, keep ours.
            if sys._getframe(1).f_globals.get("__name__", "").startswith("dspy."):
                return func(*args, **kwargs)
            return await to_thread(func, *args, **kwargs)

        asyncio.to_thread = inline_for_dspy  # type: ignore[assignment]
    return nullcontext()


def child(variant: str, n: int, out: Path) -> dict[str, Any]:
    import dspy

    from benchmarks.synthetic import pairwise_items
    from cejudge_dspy.backbones import _simulated as simulated
    from cejudge_dspy.evaluate import judge_items
    from cejudge_dspy.judges.cejudge import PairwiseJudge
    from cejudge_dspy.runs import RESULTS

    server = [0.0]  # the simulated server's CPU: preparing answers and its bookkeeping
    prepare = simulated.SimulatedEngine.prepare

    def timed(self: Any, request: Any) -> Any:
        t = time.thread_time()
        try:
            return prepare(self, request)
        finally:
            server[0] += time.thread_time() - t

    simulated.SimulatedEngine.prepare = timed  # type: ignore[method-assign]
    items = pairwise_items(n)
    lm, engine = simulated.simulated_backbone(base_latency=0.0, per_prompt_token=0.0, per_output_token=0.0)
    program = PairwiseJudge("chat", judgment="pairwise")
    around = _patch(variant)
    cpu0 = _cpu()
    with around, dspy.context(lm=lm):
        records = asyncio.run(
            judge_items(items, program, out / RESULTS, task="chat", method="cejudge", concurrency=64)
        )
    cpu = _cpu() - cpu0
    assert len(records) == n and all(r.status == "ok" for r in records)
    calls = sum(r.result.usage.calls for r in records)
    return {
        "calls": engine.calls,
        "counted": calls,
        "ms_per_call": 1000 * cpu / engine.calls,
        "server_ms_per_call": 1000 * server[0] / engine.calls,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--child", nargs=2, metavar=("VARIANT", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.items, Path(args.child[1]))))
        return 0
    import dspy

    print(
        f"python {platform.python_version()}, dspy {dspy.__version__}, {os.cpu_count()} CPUs; "
        f"{args.items} pairwise items, concurrency 64, simulated:0; load at start "
        "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    )
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="cejudge-cost-") as tmp:
        for r in range(args.rounds):
            for variant in VARIANTS:
                out = Path(tmp) / f"{variant}-{r}"
                out.mkdir()
                cmd = [
                    sys.executable,
                    "-m",
                    "benchmarks.experiments.bench_call_cost",
                    "--items",
                    str(args.items),
                    "--child",
                    variant,
                    str(out),
                ]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)
                if proc.returncode:
                    raise SystemExit(f"variant {variant} failed:\n{proc.stderr[-3000:]}")
                results[variant].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    med = {v: statistics.median(x["ms_per_call"] for x in rs) for v, rs in results.items()}
    server = statistics.median(x["server_ms_per_call"] for x in results["shipped"])
    base = med["shipped"]
    print(f"\n{'variant':<17} {'CPU ms/call':>11} {'vs shipped':>10}  what it does")
    for v, what in VARIANTS.items():
        print(f"{v:<17} {med[v]:>11.3f} {med[v] - base:>+10.3f}  {what}")
    print(
        f"\nshipped: {base:.3f} ms per call, of which the simulated server {server:.3f} ms "
        f"(answering in this process), the judging process {base - server:.3f} ms; "
        f"calls counted = engine calls in every variant: "
        f"{all(x['counted'] == x['calls'] for rs in results.values() for x in rs)}; "
        "load at end {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
