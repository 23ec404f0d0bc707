"""Probe: does the embedded backbone's own likelihood of a translation rank translations better than its
judgments do? (issue 18: the pointwise floor the LLM judgment misses on the 1.5B model)

    python benchmarks/likelihood_probe.py              # obvious set + translation_da_dev, ~9 min idle
    python benchmarks/likelihood_probe.py --data ../shared/data/translation_da_dev.jsonl --limit 40

Not a judge: a measurement for deciding whether one should be built. For each translation it asks the
packaged GGUF model (llama.cpp, in-process, temperature irrelevant: nothing is generated) for the log
probability of every token of the translation, given a chat prompt that asks to translate the source
into the target language (the GGUF's own chat template), plus the end-of-turn token that closes it. The
signals are the mean token log probability (Prism-src / GPTScore style) and the minimum. Printed per
file and language pair: Spearman and Kendall tau-b against the intended or human score, with n.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau, spearmanr

from cejudge_dspy.backbones.embedded import resolve_gguf
from cejudge_dspy.languages import language_name

HERE = Path(__file__).resolve().parent
DEFAULT_FILES = (
    HERE / "obvious" / "pointwise.jsonl",
    HERE.parents[1] / "shared" / "data" / "translation_da_dev.jsonl",
)


class Scorer:
    """Token log probabilities of a given assistant answer, from one forward pass over prompt + answer."""

    def __init__(self, n_ctx: int = 1024) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        # logits_all keeps one logits row per position: n_ctx x vocabulary floats (about 0.6 GB at 1024).
        self.llm = Llama(model_path=str(resolve_gguf()), n_ctx=n_ctx, logits_all=True, verbose=False)
        meta = self.llm.metadata
        eos = self.llm.detokenize([self.llm.token_eos()]).decode("utf-8", "ignore")
        self.template = Jinja2ChatFormatter(meta["tokenizer.chat_template"], eos_token=eos, bos_token="")

    def prompt_and_answer(self, messages: list[dict[str, str]], answer: str) -> tuple[str, str]:
        """The rendered prompt up to the answer, and the answer with the template's end-of-turn text: the
        template is rendered once with a marker as the assistant's content and cut there."""
        marker = "\u2063ANSWER\u2063"
        whole = self.template(messages=[*messages, {"role": "assistant", "content": marker}])
        text = whole.prompt
        # The formatter may add a generation prompt after the assistant turn; only its own turn counts.
        head, _, tail = text.partition(marker)
        end = tail.split("\n", 1)[0] if tail else ""
        return head, answer + end

    def logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        head, scored = self.prompt_and_answer(messages, answer)
        prompt = self.llm.tokenize(head.encode("utf-8"), add_bos=False, special=True)
        tokens = self.llm.tokenize(scored.encode("utf-8"), add_bos=False, special=True)
        self.llm.reset()
        self.llm.eval(prompt + tokens)
        logits = np.asarray(self.llm.scores[: len(prompt) + len(tokens)], dtype=np.float64)
        out = []
        for i, token in enumerate(tokens):
            row = logits[len(prompt) + i - 1]  # the position before a token predicts it
            top = row.max()
            out.append(float(row[token] - (top + math.log(np.exp(row - top).sum()))))
        return out


def rows_of(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def measure(scorer: Scorer, path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = rows_of(path)[:limit] if limit else rows_of(path)
    out = []
    for row in rows:
        source_lang, target_lang = row["language_pair"].split("-")
        messages = [
            {
                "role": "user",
                "content": f"Translate this {language_name(source_lang)} text into "
                f"{language_name(target_lang)}:\n\n{row['source']}",
            }
        ]
        start = time.perf_counter()
        lps = scorer.logprobs(messages, row["translation"])
        out.append(
            {"id": row["id"], "pair": row["language_pair"],
             "gold": row.get("intended_score", row.get("human_score")),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, action="append", help="translation JSONL (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="first N rows of each file")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    args = parser.parse_args()
    scorer = Scorer()
    everything = {}
    for path in args.data or [p for p in DEFAULT_FILES if p.exists()]:
        everything[str(path)] = measure(scorer, path, args.limit)
        report(path.name, everything[str(path)])
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
