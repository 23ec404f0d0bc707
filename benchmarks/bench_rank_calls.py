"""LM calls per comparison when N systems answer the same prompts: CE-Judge's shared work in `cejudge rank`.

    python -m benchmarks.bench_rank_calls                    # 3, 6 and 10 systems, 4 prompts, both judgments
    python -m benchmarks.bench_rank_calls --systems 3,6 --prompts 2

Each row ranks N synthetic systems' answers to P German prompts (all pairs, `rank.rank` with CE-Judge on task
`chat`) on the simulated backbone with no latency and DSPy's cache off, so every call the judge asks for is
issued and counted, and a call is counted by what it works on (the progress label each stage call carries,
which the simulated engine logs): the prompt (its concepts and its English), one answer (its concepts,
English, both checklists and, graded, its grade) or the comparison itself (the pairwise judgment in both
orders). Shared work is per program and run, so each prompt-side stage should be called once per prompt and
each answer-side stage once per answer, however many comparisons they enter; `alone` is what one comparison
costs judged by a fresh program (every stage of both answers and the prompt), the cost per comparison
without sharing.

`graded` is the default judgment (each answer graded on its own; where two grades are equal and the
backbone cannot score a text for the likelihood tie-breaker, as the simulated one cannot, the pairwise
judgment decides in both orders); `pairwise` is the paper's judgment, both answers shown at once in both
orders, for every comparison. The counts are deterministic; no time is measured.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.backbones import simulated_backbone
from cejudge_dspy.data import Item
from cejudge_dspy.judges import run_program
from cejudge_dspy.rank import Answer, RankOptions, SystemAnswers, all_pairs, comparison_item, rank

SIDES = ("prompt", "answer", "pairwise")


def synthetic_answers(n_systems: int, n_prompts: int, language: str = "de") -> SystemAnswers:
    """P prompts in `language`, each answered by N systems with distinct texts."""
    table = {}
    for p in range(n_prompts):
        instruction = f"Frage {p}: Erkläre bitte, warum der Himmel am Abend manchmal rot erscheint ({p})."
        for s in range(n_systems):
            response = f"System {s} antwortet auf Frage {p}: Licht wird gestreut, Variante {s * 7 + p}."
            item = Item(
                id=f"q{p}/sys{s}",
                mode="pointwise",
                instruction=instruction,
                response=response,
                language=language,
                response_language=language,
            )
            table[(f"q{p}", f"sys{s}")] = Answer(f"q{p}", f"sys{s}", item)
    return SystemAnswers(
        tuple(f"sys{s}" for s in range(n_systems)), tuple(f"q{p}" for p in range(n_prompts)), table
    )


def side(which: str | None) -> str:
    """What a call works on, from its progress label: the instruction, one answer (A or B), or the pair."""
    if which == "instruction":
        return "prompt"
    if which in ("A", "B"):
        return "answer"
    return "pairwise"


def count_calls(n_systems: int, n_prompts: int, judgment: str = "graded") -> dict[str, Any]:
    """Rank N systems on P prompts (all pairs) and count the LM calls by side and stage; plus the calls of
    one comparison judged alone by a fresh program."""
    answers = synthetic_answers(n_systems, n_prompts)
    lm, engine = simulated_backbone(cache=False, base_latency=0.0, per_prompt_token=0.0, per_output_token=0.0)
    with tempfile.TemporaryDirectory() as tmp, dspy.context(lm=lm):
        summary = rank(
            "chat",
            answers,
            Path(tmp) / "run",
            program=run_program("chat", judgment=judgment),
            options=RankOptions(bootstrap=0),
        )
    by_stage = Counter((side(c.which), c.stage) for c in engine.log)
    comparisons = summary["comparisons"]["scheduled"]
    alone_lm, alone_engine = simulated_backbone(
        cache=False, base_latency=0.0, per_prompt_token=0.0, per_output_token=0.0
    )
    first = comparison_item(answers, all_pairs(answers, seed=42)[0])
    with dspy.context(lm=alone_lm):
        run_program("chat", judgment=judgment)(**first.inputs())
    sides = {s: sum(n for (k, _), n in by_stage.items() if k == s) for s in SIDES}
    return {
        "systems": n_systems,
        "prompts": n_prompts,
        "answers": len(answers.answers),
        "comparisons": comparisons,
        "judged": summary["comparisons"]["judged"],
        "calls": len(engine.log),
        "sides": sides,
        "stages": {f"{k}/{stage}": n for (k, stage), n in sorted(by_stage.items())},
        "per_comparison": len(engine.log) / comparisons,
        "alone": len(alone_engine.log),
    }


def table(rows: list[dict[str, Any]], judgment: str) -> str:
    head = (
        f"judgment `{judgment}`\n\n"
        "| systems | prompts | answers | comparisons | prompt-side calls | answer-side calls "
        "| pairwise calls "
        "| calls / comparison | alone |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {r['systems']} | {r['prompts']} | {r['answers']} | {r['comparisons']} | {r['sides']['prompt']} "
        f"| {r['sides']['answer']} | {r['sides']['pairwise']} | {r['per_comparison']:.2f} | {r['alone']} |\n"
        for r in rows
    )
    stages = sorted({s for r in rows for s in r["stages"]})
    detail = "\n| stage | " + " | ".join(f"{r['systems']} systems" for r in rows) + " |\n|---|"
    detail += "---|" * len(rows) + "\n"
    detail += "".join(
        f"| {s} | " + " | ".join(str(r["stages"].get(s, 0)) for r in rows) + " |\n" for s in stages
    )
    return head + body + detail


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench_rank_calls", description=__doc__.split("\n\n")[0])
    p.add_argument("--systems", default="3,6,10", help="comma-separated system counts (default 3,6,10)")
    p.add_argument("--prompts", type=int, default=4, help="prompts per run (default 4)")
    p.add_argument("--judgments", default="graded,pairwise", help="CE-Judge judgments (default both)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    counts = [int(n) for n in args.systems.split(",")]
    for judgment in args.judgments.split(","):
        rows = [count_calls(n, args.prompts, judgment) for n in counts]
        print(table(rows, judgment))
    return 0


if __name__ == "__main__":
    sys.exit(main())
