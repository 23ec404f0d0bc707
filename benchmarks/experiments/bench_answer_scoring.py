"""The likelihood check's cost on each engine: a given text scored by a second `logits_all` model instance
(the serial engine's AnswerScorer) against a scoring job of the batched engine's own scheduler.

    python -m benchmarks.experiments.bench_answer_scoring  # the 36 obvious pointwise translations, ~4 min
    python -m benchmarks.experiments.bench_answer_scoring --limit 12

Both engines score the same translations with the check's own code (`check_likelihood`, the packaged
model), each on a fresh engine with its model loaded before the clock starts, as in a new `cejudge judge`
process. Printed per engine: the first call (which builds the serial engine's scorer instance) and the
mean of the rest, in seconds; the ratios; how far the two engines' mean token log probabilities lie apart
(the batched engine reads the text in other batch shapes, so the last bits differ); and whether every
check verdict (the -4.5 floor) agrees.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from cejudge_dspy.backbones import make_lm
from cejudge_dspy.judges.cejudge._likelihood_check import check_likelihood

DATA = Path(__file__).resolve().parents[1] / "obvious" / "pointwise.jsonl"
ENGINES = {"serial (second instance)": {"parallel": 1}, "batched (scheduler job)": {}}


def run(
    items: list[dict[str, str]], options: dict[str, int]
) -> tuple[list[float], list[float | None], list[str]]:
    lm = make_lm("embedded", cache=False, **options)
    engine = lm._engine_spec
    engine.load()
    seconds, means, verdicts = [], [], []
    try:
        for item in items:
            source_language, target_language = item["language_pair"].split("-")
            start = time.perf_counter()
            check = check_likelihood(
                engine.answer_logprobs, item["source"], item["translation"], source_language, target_language
            )
            seconds.append(time.perf_counter() - start)
            means.append(check.mean)
            verdicts.append(check.verdict)
    finally:
        engine.close()
    return seconds, means, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DATA, help="translations in the obvious set's schema")
    parser.add_argument("--limit", type=int, default=None, help="only the first N translations")
    args = parser.parse_args()
    items = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = items[: args.limit]
    results = {name: run(items, options) for name, options in ENGINES.items()}
    for name, (seconds, _, _) in results.items():
        rest = statistics.mean(seconds[1:])
        print(f"{name:26} first call {seconds[0]:5.2f} s · then {rest:5.2f} s per text (n = {len(seconds)})")
    (s_sec, s_mean, s_verdict), (b_sec, b_mean, b_verdict) = results.values()
    print(f"ratio serial / batched: first call {s_sec[0] / b_sec[0]:.2f}x, "
          f"then {statistics.mean(s_sec[1:]) / statistics.mean(b_sec[1:]):.2f}x, "
          f"all {sum(s_sec) / sum(b_sec):.2f}x")  # fmt: skip
    gaps = [abs(a - b) for a, b in zip(s_mean, b_mean, strict=True) if a is not None and b is not None]
    print(f"mean token log probability, |serial - batched|: mean {statistics.mean(gaps):.4f}, "
          f"largest {max(gaps):.4f} (n = {len(gaps)})")  # fmt: skip
    same = sum(a == b for a, b in zip(s_verdict, b_verdict, strict=True))
    print(f"check verdicts equal: {same}/{len(items)} (implausible: serial {s_verdict.count('implausible')}, "
          f"batched {b_verdict.count('implausible')})")  # fmt: skip


if __name__ == "__main__":
    main()
