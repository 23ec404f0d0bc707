"""Probe: does the embedded backbone's own likelihood of a translation rank translations better than its
judgments do? (issue 18: the pointwise floor the LLM judgment misses on the 1.5B model)

    python -m benchmarks.experiments.likelihood_probe  # obvious set + translation_da_dev, ~9 min idle
    python -m benchmarks.experiments.likelihood_probe --limit 40 \
        --data ../shared/data/translation_da_dev.jsonl

Not a judge: the measurement behind `likelihood_check.py` (and the place to re-choose its floor). For
each translation it asks the packaged GGUF model (llama.cpp, in-process, nothing generated) for the log
probability of every token of the translation, given a chat prompt that asks to translate the source
into the target language (the GGUF's own chat template), plus the end-of-turn token that closes it, with
the check's own code (`AnswerScorer`, `translation_messages`). The signals are the mean token log
probability (Prism-src / GPTScore style) and the minimum. Printed per file and language pair: Spearman
and Kendall tau-b against the intended or human score, with n; then how many translations fall below
the check's floor, and each quality's range on the obvious set.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from scipy.stats import kendalltau, spearmanr

from cejudge_dspy.backbones.llamacpp import resolve_gguf
from cejudge_dspy.backbones.llamacpp._answer_scorer import SCORER_N_CTX, AnswerScorer
from cejudge_dspy.judges._likelihood import MEAN_FLOOR, translation_messages

HERE = Path(__file__).resolve().parents[1]  # benchmarks/
DEFAULT_FILES = (
    HERE / "obvious" / "pointwise.jsonl",
    HERE.parents[1] / "shared" / "data" / "translation_da_dev.jsonl",
)


def scorer() -> AnswerScorer:
    """The packaged model as likelihood_check scores with it: a small-context instance with every logit."""
    from llama_cpp import Llama

    return AnswerScorer(
        Llama(model_path=str(resolve_gguf()), n_ctx=SCORER_N_CTX, logits_all=True, verbose=False)
    )


def rows_of(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def measure(scorer: AnswerScorer, path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = rows_of(path)[:limit] if limit else rows_of(path)
    out = []
    for row in rows:
        source_lang, target_lang = row["language_pair"].split("-")
        messages = translation_messages(row["source"], source_lang, target_lang)
        start = time.perf_counter()
        lps = scorer.logprobs(messages, row["translation"])
        out.append(
            {"id": row["id"], "pair": row["language_pair"],
             "gold": row.get("intended_score", row.get("human_score")), "quality": row.get("quality"),
             "mean": sum(lps) / len(lps), "min": min(lps), "tokens": len(lps),
             "seconds": time.perf_counter() - start}
        )  # fmt: skip
    return out


def report(name: str, rows: list[dict[str, Any]]) -> None:
    groups = {"all": rows} | {
        p: [r for r in rows if r["pair"] == p] for p in sorted({r["pair"] for r in rows})
    }
    print(f"\n== {name}: {len(rows)} translations, {sum(r['seconds'] for r in rows) / len(rows):.1f} s each")
    print(
        f"{'pairs':8} {'n':>4}  {'mean logprob: spearman':>24} {'kendall':>8}  "
        f"{'min logprob: spearman':>23} {'kendall':>8}"
    )
    for group, rs in groups.items():
        if len(rs) < 3 or len({r["gold"] for r in rs}) < 2:
            continue
        gold = [r["gold"] for r in rs]
        cells = []
        for key in ("mean", "min"):
            values = [r[key] for r in rs]
            cells += [spearmanr(gold, values).statistic, kendalltau(gold, values).statistic]
        print(f"{group:8} {len(rs):4d}  {cells[0]:24.3f} {cells[1]:8.3f}  {cells[2]:23.3f} {cells[3]:8.3f}")
    # What likelihood_check would decide: below the floor means the lowest level without a judgment.
    flagged = [r for r in rows if r["mean"] < MEAN_FLOOR]
    lowest = min(r["mean"] for r in rows)
    kinds = sorted({str(r["quality"] or r["gold"]) for r in flagged})
    print(
        f"below the check's floor {MEAN_FLOOR:g}: {len(flagged)} of {len(rows)} "
        f"({', '.join(kinds) or 'none'}); lowest mean {lowest:.2f}"
    )
    for quality in sorted({r["quality"] for r in rows if r["quality"]}):
        means = [r["mean"] for r in rows if r["quality"] == quality]
        print(f"  {quality:15} mean logprob {min(means):6.2f} .. {max(means):6.2f} (n {len(means)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, action="append", help="translation JSONL (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="first N rows of each file")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    args = parser.parse_args()
    scorer_ = scorer()
    everything = {}
    for path in args.data or [p for p in DEFAULT_FILES if p.exists()]:
        everything[str(path)] = measure(scorer_, path, args.limit)
        report(path.name, everything[str(path)])
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
