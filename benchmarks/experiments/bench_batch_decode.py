"""Decode throughput of the embedded model by the number of sequences decoded together.

    python -m benchmarks.experiments.bench_batch_decode  # 1, 2, 4 and 8 sequences, 48 steps each (~1 min)
    python -m benchmarks.experiments.bench_batch_decode --seqs 1,4 --steps 96

Each sequence reads the same short prompt, then every step decodes one greedy token per sequence in a
single llama.cpp call, through the batched engine's own runtime (backbones/llama_runtime.py). Printed:
tokens per second in all and steps per second, and the ratio to one sequence. This is the measurement
behind the batched engine's default of 4 calls in flight (backbones/batch_engine.py).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cejudge_dspy.backbones.llamacpp import resolve_gguf
from cejudge_dspy.backbones.llamacpp._runtime import LlamaRuntime

PROMPT = [{"role": "user", "content": "Write a long story about a cat and a dog who travel to Paris."}]


def tokens_per_second(llama: object, n_seq: int, steps: int) -> float:
    runtime = LlamaRuntime(llama, kv_cells=4096, n_seq=max(n_seq, 2), n_batch=512, n_threads=2)
    try:
        prompt, _ = runtime.prompt(PROMPT)
        last = []
        for seq in range(n_seq):
            entries = [(t, i, seq, i == len(prompt) - 1) for i, t in enumerate(prompt)]
            assert runtime.decode(entries) == 0
            last.append(int(np.argmax(runtime.logits(len(entries) - 1))))
        start = time.perf_counter()
        for step in range(steps):
            assert runtime.decode([(last[s], len(prompt) + step, s, True) for s in range(n_seq)]) == 0
            last = [int(np.argmax(runtime.logits(s))) for s in range(n_seq)]
        return n_seq * steps / (time.perf_counter() - start)
    finally:
        runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seqs", default="1,2,4,8", help="numbers of sequences, comma-separated")
    parser.add_argument("--steps", type=int, default=48, help="decode steps per measurement")
    args = parser.parse_args()
    from llama_cpp import Llama

    llama = Llama(model_path=str(resolve_gguf()), n_ctx=64, n_batch=8, n_threads=2, verbose=False)
    base = None
    for n_seq in (int(s) for s in args.seqs.split(",")):
        rate = tokens_per_second(llama, n_seq, args.steps)
        base = base or rate
        print(
            f"{n_seq} sequences: {rate:5.1f} tokens/s in all, {rate / n_seq:5.1f} steps/s, "
            f"{rate / base:.2f}x one sequence",
            flush=True,
        )


if __name__ == "__main__":
    main()
