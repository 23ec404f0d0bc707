"""What saving and restoring one prompt state costs, with llama-cpp-python's own methods and with
`lean_states` (backbones/prefix_cache.py), on the embedded model; and whether the next answer changes.

    python -m benchmarks.experiments.bench_state_copy  # a 600-token prompt, 3 rounds each (~1 min idle)

The prompt-state cache saves a state after every call and restores one before most calls. Stock
llama-cpp-python copies the whole logits buffer (n_batch x vocabulary floats) both ways; the engine's
lean methods copy one row of it. Printed: median seconds to save and to load, stock and lean, the
ratios, and the answer to one prompt after a restore both ways (it must be the same text).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from llama_cpp import Llama

from cejudge_dspy.backbones.llamacpp import resolve_gguf
from cejudge_dspy.backbones.llamacpp._prefix_cache import lean_states

PROMPT = "Summarise in one sentence: " + "The old fisherman sat by the harbour every evening. " * 50


def timed(llama: Any, rounds: int) -> tuple[float, float, Any]:
    saves, loads = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        state = llama.save_state()
        saves.append(time.perf_counter() - start)
        start = time.perf_counter()
        llama.load_state(state)
        loads.append(time.perf_counter() - start)
    return statistics.median(saves), statistics.median(loads), state


def answer_after_restore(llama: Any, state: Any) -> str:
    llama.load_state(state)
    out = llama.create_completion(PROMPT, max_tokens=24, temperature=0.0, seed=42)
    return out["choices"][0]["text"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    llama = Llama(model_path=str(resolve_gguf()), n_ctx=8192, verbose=False)
    tokens = llama.tokenize(PROMPT.encode())
    llama.eval(tokens)
    stock_save, stock_load, stock_state = timed(llama, args.rounds)
    stock_answer = answer_after_restore(llama, stock_state)
    llama.reset()
    llama.eval(tokens)
    lean_states(llama)
    lean_save, lean_load, lean_state = timed(llama, args.rounds)
    lean_answer = answer_after_restore(llama, lean_state)
    stock_mb, lean_mb = stock_state.scores.nbytes / 1e6, lean_state.scores.nbytes / 1e6
    print(f"state of {len(tokens)} tokens: llama.cpp state {lean_state.llama_state_size / 1e6:.1f} MB; "
          f"logits copied: stock {stock_mb:.0f} MB, lean {lean_mb:.1f} MB")  # fmt: skip
    print(f"save: stock {stock_save:.3f} s, lean {lean_save:.3f} s, {stock_save / lean_save:.1f}x")
    print(f"load: stock {stock_load:.3f} s, lean {lean_load:.3f} s, {stock_load / lean_load:.1f}x")
    same = "the same" if stock_answer == lean_answer else "DIFFERENT"
    print(f"answer after a restore: {same}: {lean_answer!r}")


if __name__ == "__main__":
    main()
