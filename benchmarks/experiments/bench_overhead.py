"""DSPy's own cost per LM call, measured with an instant backbone (the simulated engine at latency 0).

Layers, each timed per call, for ChatAdapter and JSONAdapter:
  format   adapter.format: signature + inputs -> messages
  parse    adapter.parse: completion text -> typed outputs
  engine   the simulated engine building its answer (not DSPy; subtract it)
  predict  dspy.Predict.acall end to end (format, LM call machinery, parse, callbacks)
  stage    cejudge's Stage.acall: predict plus usage accounting and the output check
  judge    a whole PairwiseJudge (both orders) per LM call it makes, items one at a time
On a real server each call takes seconds; these milliseconds are the CPU the event loop spends per
call, which caps how many calls one process can keep in flight (calls/s = 1000 / ms per call).

    python -m benchmarks.experiments.bench_overhead [--n 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy  # noqa: E402

from benchmarks.synthetic import pairwise_items  # noqa: E402
from cejudge_dspy.backbones import simulated_backbone

# noqa: E402
from cejudge_dspy.backbones._simulated_answers import answer, render, stage_of

# noqa: E402
# noqa: E402
from cejudge_dspy.judges.cejudge import (
    Concepts,
    PairwiseJudge,  # noqa: E402
    VerdictJudgment,
)
from cejudge_dspy.judges.cejudge import _signatures as sig  # noqa: E402
from cejudge_dspy.tasks import load_task  # noqa: E402


def per_call_ms(fn: Callable[[], Any], n: int) -> float:
    fn()  # warm caches (pydantic adapters, regexes) outside the timing
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1000


def async_per_call_ms(
    make: Callable[[], Awaitable[Any]], n: int, lm: dspy.LM, adapter: dspy.Adapter
) -> float:
    async def loop() -> float:
        await make()
        start = time.perf_counter()
        for _ in range(n):
            await make()
        return (time.perf_counter() - start) / n * 1000

    with dspy.context(lm=lm, adapter=adapter):
        return asyncio.run(loop())


def cases() -> dict[str, tuple[type[dspy.Signature], dict[str, Any]]]:
    spec = load_task("chat")
    item = pairwise_items(4)[1]
    checklist = [f"Does the response address point {k} of the instruction?" for k in range(5)]
    return {
        "concepts": (sig.ExtractConcepts, {"task": spec.task, "kind": "response", "text": item.response_a}),
        "judgment": (
            sig.PairwiseJudgment,
            {
                "task": spec.task,
                "criteria": spec.criteria,
                "instruction": item.instruction,
                "response_a": item.response_a,
                "response_b": item.response_b,
                "checklist_a": checklist,
                "checklist_b": checklist,
            },
        ),
    }


def measure(n: int) -> list[tuple[str, str, float, float]]:
    lm, engine = simulated_backbone(base_latency=0.0, per_prompt_token=0.0, per_output_token=0.0)
    adapters = {"chat": dspy.ChatAdapter(), "json": dspy.JSONAdapter()}
    rows: list[tuple[str, str, float, float]] = []
    for name, (signature, inputs) in cases().items():
        stage = stage_of(adapters["chat"].format(signature, demos=[], inputs=inputs)[0]["content"])
        values = answer(stage, {k: str(v) for k, v in inputs.items()})
        got: dict[str, dict[str, float]] = {}
        for key, adapter in adapters.items():
            completion = render(values, json_mode=key == "json")
            module = Concepts() if name == "concepts" else VerdictJudgment()
            got[key] = _layers(signature, inputs, adapter, completion, module, lm, engine, n)
        for layer in ("format", "parse", "engine", "predict", "stage"):
            rows.append((name, layer, got["chat"][layer], got["json"][layer]))
    rows.append(
        ("pairwise", "judge", *(_judge_ms(lm, engine, a, max(8, n // 10)) for a in adapters.values()))
    )
    return rows


def _layers(
    signature: type[dspy.Signature],
    inputs: dict[str, Any],
    adapter: dspy.Adapter,
    completion: str,
    module: dspy.Module,
    lm: dspy.LM,
    engine: Any,
    n: int,
) -> dict[str, float]:
    predict = dspy.Predict(signature)
    messages = adapter.format(signature, demos=[], inputs=inputs)
    # What the engine receives: the system message and the conversation, as lm15 objects expose them.
    request = SimpleNamespace(
        system=messages[0]["content"],
        model=lm.model,
        messages=[SimpleNamespace(text=m["content"]) for m in messages[1:]],
    )
    return {
        "format": per_call_ms(lambda: adapter.format(signature, demos=[], inputs=inputs), n),
        "parse": per_call_ms(lambda: adapter.parse(signature, completion), n),
        "engine": per_call_ms(lambda: engine.prepare(request), n),
        "predict": async_per_call_ms(lambda: predict.acall(**inputs), n, lm, adapter),
        "stage": async_per_call_ms(lambda: module.acall(**inputs), n, lm, adapter),
    }


def _judge_ms(lm: dspy.LM, engine: Any, adapter: dspy.Adapter, n_items: int) -> float:
    items = pairwise_items(n_items, per_instruction=1)
    engine.reset()

    async def loop() -> float:
        judge = PairwiseJudge("chat")
        start = time.perf_counter()
        for item in items:
            await judge.acall(**item.inputs())
        return time.perf_counter() - start

    with dspy.context(lm=lm, adapter=adapter):
        seconds = asyncio.run(loop())
    return seconds / engine.calls * 1000


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=200, help="calls timed per cell")
    args = p.parse_args(argv)
    print(
        f"python {platform.python_version()}, dspy {dspy.__version__}, {os.cpu_count()} CPUs; "
        f"instant simulated backbone, {args.n} calls per cell"
    )
    print(f"{'signature':<10} {'layer':<8} {'ChatAdapter ms':>14} {'JSONAdapter ms':>14}")
    for name, layer, chat, json_ms in measure(args.n):
        print(f"{name:<10} {layer:<8} {chat:>14.3f} {json_ms:>14.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
