"""The embedded judge's speed, before and after: one run, the same real items, two configurations.

    python benchmarks/bench_embedded.py                      # 4 pairwise + 3 pointwise items (~20 min idle)
    python benchmarks/bench_embedded.py --pairwise 2 --pointwise 1 --json bench.json

`before` is the configuration the project shipped until this benchmark: the paper's pairwise judgment
for every pair (both orders), no prompt-state cache, no response-language check. `after` is today's
default: graded pairwise judgment (the pairwise judgment only as tie-breaker), the prompt-state cache
(backbones/prefix_cache.py) and the response-language check. Both run the same prompts otherwise
(stage output budgets included), with DSPy's response cache off, interleaved item by item so that a
change in machine load hits both alike. Items: the README's German example, then the first pairwise
items of ../shared/data/pairwise_en_dev.jsonl and translation items of translation_da_dev.jsonl.

Printed: per configuration and stage, calls, prompt tokens, prompt tokens llama.cpp actually
evaluated (the rest came from a reused prefix), output tokens and seconds; per item, seconds and
calls; the speed-up per pairwise and per pointwise judgment; and how many verdicts and scores changed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.backbones.spec import make_lm, preferred_adapter
from cejudge_dspy.methods import build_program

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
README_ITEM = {
    "id": "readme/de/capital",
    "instruction": "Was ist die Hauptstadt von Frankreich? Antworte mit einem Wort.",
    "response_a": "Paris",
    "response_b": "London",
    "language": "de",
    "label": "A",
}
CONFIGS: dict[str, dict[str, Any]] = {
    "before": {"lm": {"prompt_cache_bytes": 0}, "program": {"judgment": "pairwise", "language_check": False}},
    "after": {"lm": {}, "program": {}},
}
_OUTPUTS = re.compile(r"`(\w+)`")


def stage_of(system: str) -> str:
    """The stage a request belongs to, from the output fields its system prompt names."""
    head = system.split("All interactions", 1)[0]
    outputs = _OUTPUTS.findall(head.split("Your output fields are:", 1)[-1])
    for field, stage in (
        ("concepts", "concepts"),
        ("english", "translate"),
        ("fulfils", "grade"),
        ("verdict", "verdict"),
        ("score", "score"),
    ):
        if field in outputs:
            return stage
    if "checklist" in outputs:
        return "checklist r2i" if "`instruction_concepts`" in head else "checklist i2r"
    return "other"


class Meter:
    """Reads an embedded LM's engine call log (recorded inside its lock, so concurrent stage calls of one
    item do not blur it): per call its stage, prompt and evaluated tokens, output tokens and seconds."""

    def __init__(self, lm: dspy.LM) -> None:
        self.engine = lm._engine_spec
        self.engine.call_log = []
        self.engine.load()

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [{**c, "stage": stage_of(c["system"])} for c in self.engine.call_log]


def load_items(n_pairwise: int, n_pointwise: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    pairwise = [README_ITEM]
    with open(DATA / "pairwise_en_dev.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    for row in [r for r in rows if r.get("label") in ("A", "B")][: max(n_pairwise - 1, 0)]:
        pairwise.append(
            {"id": row["id"], "instruction": row["prompt"], "response_a": row["response_a"],
             "response_b": row["response_b"], "language": "en", "label": row["label"]}
        )  # fmt: skip
    pointwise = []
    with open(DATA / "translation_da_dev.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    chosen = [r for r in rows if r["language_pair"] == "en-de"][: (n_pointwise + 1) // 2]
    chosen += [r for r in rows if r["language_pair"] == "ru-en"][: n_pointwise // 2]
    for row in chosen:
        source, target = row["language_pair"].split("-")
        pointwise.append(
            {"id": row["id"], "instruction": row["source"], "response": row["translation"],
             "language": source, "response_language": target, "label": row["human_score"]}
        )  # fmt: skip
    return pairwise, pointwise


async def judge(program: dspy.Module, item: dict[str, Any]) -> tuple[dspy.Prediction, float]:
    inputs = {k: v for k, v in item.items() if k not in ("id", "label")}
    start = time.perf_counter()
    pred = await program.acall(**inputs)
    return pred, time.perf_counter() - start


def run(n_pairwise: int, n_pointwise: int) -> dict[str, Any]:
    pairwise, pointwise = load_items(n_pairwise, n_pointwise)
    lms = {name: make_lm("embedded", cache=False, **cfg["lm"]) for name, cfg in CONFIGS.items()}
    meters = {name: Meter(lm) for name, lm in lms.items()}
    rows: list[dict[str, Any]] = []
    for task, items in (("chat", pairwise), ("literary", pointwise)):
        programs = {n: build_program(task, "cejudge", **cfg["program"]) for n, cfg in CONFIGS.items()}
        for item in items:
            for name in CONFIGS:
                first = len(meters[name].calls)
                with dspy.context(lm=lms[name], adapter=preferred_adapter("embedded")):
                    pred, seconds = asyncio.run(judge(programs[name], item))
                result = pred.result
                rows.append(
                    {"config": name, "task": task, "id": item["id"], "label": item["label"],
                     "seconds": seconds, "calls": len(meters[name].calls) - first, "status": result.status,
                     "verdict": result.verdict, "score": result.score,
                     "argmax": result.argmax.verdict if result.argmax else None}
                )  # fmt: skip
                calls_made = rows[-1]["calls"]
                print(
                    f"{name:6} {task:8} {item['id'][:40]:40} {seconds:6.1f} s  {calls_made:2d} calls  "
                    f"verdict {result.verdict} score {result.score}",
                    flush=True,
                )
    return {"rows": rows, "calls": {name: m.calls for name, m in meters.items()}}


def report(data: dict[str, Any]) -> None:
    rows, calls = data["rows"], data["calls"]
    for name, log in calls.items():
        print(f"\n== {name}: per stage (all items)")
        header = ("stage", "calls", "prompt tok", "evaluated", "output tok", "seconds")
        widths = (15, 5, 10, 10, 10, 8)
        print(
            " ".join(
                f"{h:{w}}" if i == 0 else f"{h:>{w}}"
                for i, (h, w) in enumerate(zip(header, widths, strict=True))
            )
        )
        stages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for c in log:
            stages[c["stage"]].append(c)
        for stage, cs in sorted(stages.items()):
            print(f"{stage:15} {len(cs):5d} {sum(c['prompt'] for c in cs):10d} "
                  f"{sum(c['evaluated'] for c in cs):10d} {sum(c['output'] for c in cs):10d} "
                  f"{sum(c['seconds'] for c in cs):8.1f}")  # fmt: skip
    print("\n== per judgment")
    for task in ("chat", "literary"):
        by = {n: [r for r in rows if r["task"] == task and r["config"] == n] for n in CONFIGS}
        if not by["before"]:
            continue
        mean = {n: sum(r["seconds"] for r in rs) / len(rs) for n, rs in by.items()}
        kind = "pairwise (both orders)" if task == "chat" else "pointwise"
        print(f"{kind:24} before {mean['before']:6.1f} s/item · after {mean['after']:6.1f} s/item · "
              f"speed-up {mean['before'] / mean['after']:.2f}x (n = {len(by['before'])})")  # fmt: skip
        key = "verdict" if task == "chat" else "score"
        same = sum(a[key] == b[key] for a, b in zip(by["before"], by["after"], strict=True))
        right = ", ".join(
            f"{n} {sum(r['verdict'] == r['label'] for r in rs)}/{len(rs)}" for n, rs in by.items()
        )
        right = right if task == "chat" else "n/a"
        print(f"{'':24} {key}s unchanged {same}/{len(by['before'])}; right: {right}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pairwise", type=int, default=4, help="pairwise items, the README example first")
    parser.add_argument("--pointwise", type=int, default=3, help="translation items (en-de, ru-en)")
    parser.add_argument("--json", type=Path, default=None, help="write every call and item here")
    args = parser.parse_args()
    data = run(args.pairwise, args.pointwise)
    report(data)
    if args.json:
        args.json.write_text(json.dumps(data, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
