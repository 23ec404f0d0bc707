"""What asking for token probabilities costs on the embedded backbone: the same judgment calls, with and
without `logprobs`, timed call by call in one run (issue 12).

    python -m benchmarks.experiments.bench_logprobs  # ~8 min idle: 1 pairwise + 1 pointwise item
    python -m benchmarks.experiments.bench_logprobs --rounds 3 --json logprobs.json

First the default CE-Judge program judges the README's German pairwise example and one translation of
../shared/data/translation_da_dev.jsonl; every request of a judgment stage (grade, verdict, score: the
calls that ask for logprobs) is captured. Then each captured request is replayed with the top-10
logprobs asked for and without them, the two variants alternating which goes first per round. Before
every replayed call llama.cpp's state is reset and the prompt-state cache is off, so both variants read
the whole prompt: the difference is the logits processor (backbones/top_logprobs.py) and the
conversion of its steps to DSPy's shape. The engine's output text is compared too: recording the
logits must not change what is generated.

Printed: per call, prompt and output tokens, seconds with and without, and whether the texts match;
then the totals and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

import dspy

from benchmarks.bench_embedded import judge, load_items
from cejudge_dspy.backbones import make_lm, preferred_adapter
from cejudge_dspy.judges import build_program


def capture(lm: dspy.LM) -> list[Any]:
    """Judge the two items; return the requests that asked for logprobs (the judgment calls)."""
    engine = lm._engine_spec
    captured: list[Any] = []
    complete = engine.complete

    def recording(request: Any) -> Any:
        if request.config.logprobs is not None:
            captured.append(request)
        return complete(request)

    engine.complete = recording
    try:
        pairwise, pointwise = load_items(1, 1)  # bench_embedded's items: the README example, one en-de row
        for task, item in (("chat", pairwise[0]), ("literary", pointwise[0])):
            program = build_program(task, "cejudge")
            with dspy.context(lm=lm, adapter=preferred_adapter("embedded")):
                asyncio.run(judge(program, item))
    finally:
        engine.complete = complete
    return captured


def timed(engine: Any, request: Any, logprobs: bool) -> dict[str, Any]:
    """One call from a reset llama.cpp state (no reused prefix), with or without logprobs."""
    config = dataclasses.replace(request.config, logprobs=10 if logprobs else None)
    engine._llama.reset()
    engine.call_log = []
    start = time.perf_counter()
    response = engine.complete(dataclasses.replace(request, config=config))
    seconds = time.perf_counter() - start
    log = engine.call_log[-1]
    text = "".join(getattr(p, "text", "") for p in response.message.parts)
    return {"seconds": seconds, "prompt": log["prompt"], "evaluated": log["evaluated"],
            "output": log["output"], "text": text}  # fmt: skip


def run(rounds: int) -> list[dict[str, Any]]:
    # No prompt-state cache: each timed call reads its whole prompt, as the first item of a run does.
    lm = make_lm("embedded", cache=False, prompt_cache_bytes=0)
    requests = capture(lm)
    engine = lm._engine_spec
    rows = []
    for i, request in enumerate(requests):
        with_lp: list[dict[str, Any]] = []
        without: list[dict[str, Any]] = []
        for r in range(rounds):
            order = (True, False) if r % 2 == 0 else (False, True)
            for asks in order:
                (with_lp if asks else without).append(timed(engine, request, asks))
        row = {
            "call": i + 1,
            "prompt": with_lp[0]["prompt"],
            "evaluated": statistics.median(c["evaluated"] for c in with_lp + without),
            "output_with": statistics.median(c["output"] for c in with_lp),
            "output_without": statistics.median(c["output"] for c in without),
            "seconds_with": statistics.median(c["seconds"] for c in with_lp),
            "seconds_without": statistics.median(c["seconds"] for c in without),
            "same_text": all(c["text"] == without[0]["text"] for c in with_lp + without),
        }
        rows.append(row)
        print(
            f"call {row['call']}: prompt {row['prompt']} tok (evaluated {row['evaluated']:.0f}), output "
            f"{row['output_with']:.0f} / {row['output_without']:.0f} tok, {row['seconds_with']:.2f} s with "
            f"logprobs / {row['seconds_without']:.2f} s without, same text: {row['same_text']}",
            flush=True,
        )
    return rows


def report(rows: list[dict[str, Any]], rounds: int) -> None:
    n = len(rows)
    with_s = sum(r["seconds_with"] for r in rows)
    without_s = sum(r["seconds_without"] for r in rows)
    out_with = sum(r["output_with"] for r in rows)
    out_without = sum(r["output_without"] for r in rows)
    prompt = sum(r["prompt"] for r in rows)
    print(f"\n== {n} judgment calls, median of {rounds} rounds each, llama.cpp state reset before each")
    print(f"{'':22} {'with logprobs':>14} {'without':>10}")
    print(f"{'prompt tokens/call':22} {prompt / n:14.0f} {prompt / n:10.0f}")
    print(f"{'output tokens/call':22} {out_with / n:14.1f} {out_without / n:10.1f}")
    print(f"{'seconds/call':22} {with_s / n:14.2f} {without_s / n:10.2f}")
    ms = 1000 * (with_s - without_s) / max(out_with, 1)
    print(f"ratio with/without: {with_s / without_s:.3f}x ({ms:+.1f} ms per output token); "
          f"identical output text in {sum(r['same_text'] for r in rows)}/{n} calls")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=2, help="timed repeats per call and variant")
    parser.add_argument("--json", type=Path, default=None, help="write the per-call rows here")
    args = parser.parse_args()
    rows = run(args.rounds)
    report(rows, args.rounds)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
