"""Probe: how often does the embedded backbone's own likelihood pick the right response of a pair?

    python -m benchmarks.experiments.likelihood_pairs  # the 60 obvious pairs (~5 min)
    python -m benchmarks.experiments.likelihood_pairs --data ../shared/data/pairwise_en_dev.jsonl --limit 20

The measurement behind the graded judgment's likelihood tie-breaker (methods/cejudge/tiebreak.py), with
its own code (`likelihood_preference` on the packaged GGUF model, scored as the default batched engine
does, or `--engine serial` by its `AnswerScorer` instance): each response scored
as the model's answer to the instruction (one user turn), mean token log probability with the end of its
turn; the pair goes to the more likely response. Not a judge: the tie-breaker uses it only for pairs whose
grades are within the grade margin. Prints per pair the two means and p(A), then how many pairs it got
right, per `subset` (kind) when the file has one; `--out` keeps the rows as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cejudge_dspy.backbones import make_lm
from cejudge_dspy.backbones.llamacpp import resolve_gguf
from cejudge_dspy.backbones.llamacpp._answer_scorer import SCORER_N_CTX, AnswerScorer
from cejudge_dspy.judges.cejudge._tiebreak import likelihood_preference

HERE = Path(__file__).resolve().parents[1]  # benchmarks/


def scorer(engine: str) -> Callable[[list[dict[str, str]], str], list[float]]:
    """The packaged model as the tie-breaker scores with it: on the default (batched) engine a scoring job
    of its scheduler; on the serial engine a small-context instance with every logit."""
    if engine == "batched":
        lm_engine = make_lm("embedded", cache=False)._engine_spec
        lm_engine.load()
        return lm_engine.answer_logprobs
    from llama_cpp import Llama

    return AnswerScorer(
        Llama(model_path=str(resolve_gguf()), n_ctx=SCORER_N_CTX, logits_all=True, verbose=False)
    ).logprobs


def measure(path: Path, limit: int | None, engine: str = "batched") -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        rows = [r for r in (json.loads(line) for line in f if line.strip()) if r.get("label") in ("A", "B")]
    rows = rows[:limit] if limit else rows
    score = scorer(engine)
    out = []
    for row in rows:
        start = time.perf_counter()
        pref = likelihood_preference(score, row["prompt"], row["response_a"], row["response_b"])
        out.append(
            {"id": row["id"], "subset": row.get("subset"), "label": row["label"], "picked": pref.verdict}
            | pref.to_dict()
            | {"seconds": round(time.perf_counter() - start, 2)}
        )
        why = f" ({pref.reason})" if pref.reason else ""
        print(f"{row['id']:50} gold {row['label']} picked {pref.verdict} p(A) {pref.p_a} "
              f"means {pref.mean_a} / {pref.mean_b}{why}", flush=True)  # fmt: skip
    return out


def report(rows: list[dict[str, Any]]) -> None:
    by: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        by[r["subset"] or "all"].append(r["picked"] == r["label"])
    for kind, right in sorted(by.items()):
        print(f"{kind:24} right {sum(right)}/{len(right)}")
    scored = [r for r in rows if r["picked"] is not None]
    print(f"{'all':24} right {sum(r['picked'] == r['label'] for r in rows)}/{len(rows)} "
          f"(unscored {len(rows) - len(scored)})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=HERE / "obvious" / "pairwise.jsonl")
    parser.add_argument("--limit", type=int, default=None, help="the first N pairs with a gold A or B")
    parser.add_argument("--out", type=Path, default=None, help="write the rows here (JSON lines)")
    parser.add_argument(
        "--engine", choices=("batched", "serial"), default="batched", help="whose scorer (default: batched)"
    )
    args = parser.parse_args()
    rows = measure(args.data, args.limit, args.engine)
    report(rows)
    if args.out:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
