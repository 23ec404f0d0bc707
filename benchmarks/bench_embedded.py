"""The embedded judge's speed, before and after: one run, the same real items, three configurations.

    python -m benchmarks.bench_embedded                      # 4 pairwise + 3 pointwise items (~25 min idle)
    python -m benchmarks.bench_embedded --pairwise 2 --pointwise 1 --json bench.json
    python -m benchmarks.bench_embedded --variant directions=i2r   # another column: today's with one option
    python -m benchmarks.bench_embedded --concurrency 4   # also per judgment with 4 items in flight

`before` is the configuration the project shipped until this benchmark: the paper's pairwise judgment
for every pair (both orders), the pointwise judgment writing its checklist answers, the serial engine
without a prompt-state cache, no response-language check. `after` is today's default: graded pairwise
judgment (close pairs left to the likelihood tie-breaker), the response-language and likelihood checks,
the judge's own reference translation for pointwise items and their judgment without written checklist
answers, on the batched engine (backbones/batch_engine.py: calls in flight decode together, finished
sequences keep their prefixes, and an on-disk store holds one state per stage prefix).
`serial` is today's program on the serial engine (`--parallel 1`, the default until 2 December 2026:
one call at a time, with its prompt-state cache, prefix_cache.py, and on-disk store, state_store.py):
the difference between `serial` and `after` is what batching adds. All run the same prompts otherwise
(stage output budgets included), with DSPy's response cache off, interleaved item by item so that a
change in machine load hits all alike. Items: the README's German example, then the first pairwise items of
../shared/data/pairwise_en_dev.jsonl and translation items of translation_da_dev.jsonl.

Every judgment runs on a fresh engine (nothing in RAM), as each `cejudge judge` is a new process. The
stores are this run's own (a temporary directory) and are warmed first by one untimed judgment per
task and configuration on an item outside the measured ones, as any earlier use of the package would
have left them; `--cold` skips that, so the first measured item pays for its store.

`--variant KEY=VALUE` (repeatable) adds a configuration: today's default with those program options
(the judges' keyword arguments, e.g. `directions=i2r`, `concepts=false`), or engine options with an `lm.`
prefix (`make_lm`'s keyword arguments, e.g. `lm.draft=true`), judged in the same interleaving.

Printed: per configuration and stage, calls, prompt tokens, prompt tokens llama.cpp actually
evaluated (the rest came from a reused prefix), output tokens and seconds; per item, seconds and
calls; the speed-up per pairwise and per pointwise judgment; and how many verdicts and scores changed.
`--record` appends the same as tables (items, stages, judgments, and with `--concurrency` the groups),
dated, with the host and versions, to docs/measurements/data/bench_embedded.json, which
docs/measurements/bench-embedded.md shows (record.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy

from benchmarks.bench_together import report_together, run_together
from benchmarks.record import Cell, Table, add_record_argument, record
from cejudge_dspy.backbones import make_lm, preferred_adapter
from cejudge_dspy.backbones._simulated_answers import stage_of as simulated_stage
from cejudge_dspy.judges import build_program

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
README_ITEM = {
    "id": "readme/de/capital",
    "instruction": "Was ist die Hauptstadt von Frankreich? Antworte mit einem Wort.",
    "response_a": "Paris",
    "response_b": "London",
    "language": "de",
    "label": "A",
}
# Untimed judgments that warm the run's store, one per task (outside the measured items).
WARM_UP = {
    "chat": {
        "instruction": "Wie viel ist zwei plus zwei? Antworte mit einer Zahl.",
        "response_a": "4",
        "response_b": "5",
        "language": "de",
    },
    "literary": {
        "instruction": "Der alte Fischer saß jeden Abend am Hafen.",
        "response": "Every evening the old fisherman sat at the harbour.",
        "language": "de",
        "response_language": "en",
    },
}
CONFIGS: dict[str, dict[str, Any]] = {
    "before": {
        "lm": {"prompt_cache_bytes": 0, "parallel": 1},
        "program": {"judgment": "pairwise", "language_check": False, "reference": False, "answers": True},
    },
    # Today's default program on the serial engine (`--parallel 1`): what batching adds, against `after`.
    "serial": {"lm": {"parallel": 1}, "program": {}},
    "after": {"lm": {}, "program": {}},
}


def stage_of(system: str) -> str:
    """The stage a request belongs to, read from the output fields its system prompt names as the
    simulated backbone reads them, in words (`checklist r2i`, `reference translation`)."""
    stage = simulated_stage(system)
    return "other" if stage.startswith("other:") else stage.replace("_", " ")


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


def with_variant(options: list[str]) -> dict[str, dict[str, Any]]:
    """CONFIGS, plus today's default with `KEY=VALUE` program options when any are given."""
    if not options:
        return dict(CONFIGS)
    program: dict[str, Any] = {}
    lm: dict[str, Any] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key or key == "lm.":
            raise SystemExit(f"bench_embedded.py: --variant {option!r}: expected KEY=VALUE")
        parsed = {"true": True, "false": False}.get(value.lower(), value)
        if key.startswith("lm."):  # an engine option (make_lm's keyword), e.g. lm.draft=true
            lm[key[3:]] = int(parsed) if isinstance(parsed, str) and parsed.isdigit() else parsed
        else:
            program[key] = parsed
    return {**CONFIGS, ", ".join(options): {"lm": lm, "program": program}}


def run(
    n_pairwise: int, n_pointwise: int, cold: bool = False, configs: dict[str, dict[str, Any]] = CONFIGS
) -> dict[str, Any]:
    pairwise, pointwise = load_items(n_pairwise, n_pointwise)
    calls: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
    rows: list[dict[str, Any]] = []
    for task, items in (("chat", pairwise), ("literary", pointwise)):
        if not items:
            continue
        programs = {n: build_program(task, "cejudge", **cfg["program"]) for n, cfg in configs.items()}
        if not cold:  # every configuration with a store warms its own (the engines' formats differ)
            for name, cfg in configs.items():
                if name != "before":
                    judge_fresh(programs[name], WARM_UP[task], cfg["lm"])
        for item in items:
            for name, cfg in configs.items():
                pred, seconds, log, drafts = judge_fresh(programs[name], item, cfg["lm"])
                calls[name] += log
                result = pred.result
                rows.append(
                    {"config": name, "task": task, "id": item["id"], "label": item["label"],
                     "seconds": seconds, "calls": len(log), "status": result.status,
                     "verdict": result.verdict, "score": result.score,
                     "argmax": result.argmax.verdict if result.argmax else None, "drafts": drafts}
                )  # fmt: skip
                print(
                    f"{name[:16]:16} {task:8} {item['id'][:40]:40} {seconds:6.1f} s  {len(log):2d} calls  "
                    f"verdict {result.verdict} score {result.score}",
                    flush=True,
                )
    return {"rows": rows, "calls": calls, "configs": list(configs)}


def judge_fresh(
    program: dspy.Module, item: dict[str, Any], lm_options: dict[str, Any]
) -> tuple[dspy.Prediction, float, list[dict[str, Any]], list[int] | None]:
    """One judgment on a new engine (loaded before the clock starts), with its calls and, with
    prompt-lookup drafts, [tokens kept, tokens drafted]."""
    lm = make_lm("embedded", cache=False, **lm_options)
    meter = Meter(lm)
    try:
        with dspy.context(lm=lm, adapter=preferred_adapter("embedded")):
            pred, seconds = asyncio.run(judge(program, item))
        scheduler = getattr(meter.engine, "_scheduler", None)
        drafts = None
        if scheduler is not None and scheduler.drafted:  # prompt-lookup drafts (lm.draft=true)
            print(f"  drafts: {scheduler.accepted} of {scheduler.drafted} tokens kept", flush=True)
            drafts = [scheduler.accepted, scheduler.drafted]
        return pred, seconds, meter.calls, drafts
    finally:
        lm.engine.close()


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
    names = data.get("configs", list(CONFIGS))
    for task in ("chat", "literary"):
        by = {n: [r for r in rows if r["task"] == task and r["config"] == n] for n in names}
        if not by["before"]:
            continue
        mean = {n: sum(r["seconds"] for r in rs) / len(rs) for n, rs in by.items()}
        kind = "pairwise (both orders)" if task == "chat" else "pointwise"
        key = "verdict" if task == "chat" else "score"
        for name in names[1:]:
            print(f"{kind:24} before {mean['before']:6.1f} s/item · {name} {mean[name]:6.1f} s/item · "
                  f"speed-up {mean['before'] / mean[name]:.2f}x (n = {len(by['before'])})")  # fmt: skip
            for base in ("before", "serial") if name not in ("before", "serial") else ("before",):
                if base in by:
                    print(f"{'':24} {agreement(by[base], by[name], key)} ({name} against {base})")
        if task == "chat":
            right = ", ".join(
                f"{n} {sum(r['verdict'] == r['label'] for r in rs)}/{len(rs)}" for n, rs in by.items()
            )
            print(f"{'':24} right: {right}")


STAGES = ["stage", "calls", "prompt tok", "evaluated", "output tok", "seconds"]


def tables(data: dict[str, Any]) -> list[Table]:
    """What `report` prints, as data: the items, each configuration's stages, the judgments (and the
    groups judged at once, with `--concurrency`)."""
    items: list[list[Cell]] = [
        [
            r["config"],
            r["task"],
            f"`{r['id']}`",
            round(r["seconds"], 3),
            r["calls"],
            r["status"],
            r["verdict"],
            r["score"],
            r.get("drafts"),
        ]  # fmt: skip
        for r in data["rows"]
    ]
    out = [
        Table(
            ["config", "task", "item", "seconds", "calls", "status", "verdict", "score", "drafts kept"],
            items,
            ["", "", "", "{:.1f}", "", "", "", "{:.3f}", "{} of {}"],
            "per item, one at a time",
        )  # fmt: skip
    ]
    for name, log in data["calls"].items():
        stages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for c in log:
            stages[c["stage"]].append(c)
        rows: list[list[Cell]] = [
            [
                stage,
                len(cs),
                *(sum(c[k] for c in cs) for k in ("prompt", "evaluated", "output")),
                round(sum(c["seconds"] for c in cs), 3),
            ]  # fmt: skip
            for stage, cs in sorted(stages.items())
        ]
        out.append(Table(STAGES, rows, ["", "", "", "", "", "{:.1f}"], f"{name}: per stage (all items)"))
    out.append(judgments_table(data))
    return out


def judgments_table(data: dict[str, Any]) -> Table:
    """Per task and configuration: seconds per judgment against `before`, and what changed."""
    rows, names = data["rows"], data.get("configs", list(CONFIGS))
    out: list[list[Cell]] = []
    for task in ("chat", "literary"):
        by = {n: [r for r in rows if r["task"] == task and r["config"] == n] for n in names}
        if not by.get("before"):
            continue
        mean = {n: sum(r["seconds"] for r in rs) / len(rs) for n, rs in by.items() if rs}
        key = "verdict" if task == "chat" else "score"
        for name in names[1:]:
            bases = ("before", "serial") if name not in ("before", "serial") else ("before",)
            notes = [f"{agreement(by[b], by[name], key)} (against {b})" for b in bases if b in by]
            if task == "chat":
                notes.append(f"right {sum(r['verdict'] == r['label'] for r in by[name])}/{len(by[name])}")
            kind = "pairwise (both orders)" if task == "chat" else "pointwise"
            before, now = round(mean["before"], 3), round(mean[name], 3)
            speed_up = round(mean["before"] / mean[name], 4)
            out.append([kind, name, before, now, speed_up, len(by["before"]), "; ".join(notes)])
    columns = ["judgment", "config", "before s/item", "s/item", "speed-up", "n", "what changed"]
    return Table(columns, out, ["", "", "{:.1f}", "{:.1f}", "{:.2f}x", "", ""], "per judgment, one at a time")


def agreement(old: list[dict[str, Any]], new: list[dict[str, Any]], key: str) -> str:
    """How many verdicts (or scores) two configurations share on the same items, and by how much scores
    moved: faster must not mean different without saying so."""
    pairs = list(zip(old, new, strict=True))
    line = f"{key}s unchanged {sum(a[key] == b[key] for a, b in pairs)}/{len(pairs)}"
    scores = [(a[key], b[key]) for a, b in pairs if isinstance(a[key], float) and isinstance(b[key], float)]
    moved = [abs(x - y) for x, y in scores]
    return line + (f", largest score change {max(moved):.2f}" if moved else "")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pairwise", type=int, default=4, help="pairwise items, the README example first")
    parser.add_argument("--pointwise", type=int, default=3, help="translation items (en-de, ru-en)")
    parser.add_argument("--json", type=Path, default=None, help="write every call and item here")
    parser.add_argument("--cold", action="store_true", help="no warm-up: the store starts empty")
    parser.add_argument(
        "--concurrency", type=int, default=1, metavar="N",
        help="also judge the items N at a time on one engine, as evaluate --concurrency N does",
    )  # fmt: skip
    parser.add_argument(
        "--variant", action="append", default=[], metavar="KEY=VALUE",
        help="also judge with today's default plus this program option (repeatable)",
    )  # fmt: skip
    add_record_argument(parser, "bench_embedded")
    args = parser.parse_args(argv)
    configs = with_variant(args.variant)
    with tempfile.TemporaryDirectory(prefix="bench-states-") as states:
        os.environ["CEJUDGE_PROMPT_STATES"] = states  # this run's own store, never the user's
        data = run(args.pairwise, args.pointwise, cold=args.cold, configs=configs)
        if args.concurrency > 1:
            pairwise, pointwise = load_items(args.pairwise, args.pointwise)
            tasks = {"chat": pairwise, "literary": pointwise}
            data["together"] = {
                "n": args.concurrency,
                "rows": run_together(tasks, configs, args.concurrency, Meter),
            }
    report(data)
    if "together" in data:
        report_together(data["together"]["rows"], data["configs"], data["together"]["n"])
    if args.json:
        args.json.write_text(json.dumps(data, indent=1), encoding="utf-8")
    together = [together_table(data["together"])] if "together" in data else []
    record(args, "bench_embedded", [*tables(data), *together], argv)


def together_table(together: dict[str, Any]) -> Table:
    """The groups of `n` items judged at once: one row per group and configuration."""
    rows: list[list[Cell]] = [
        [
            r["config"],
            r["task"],
            len(r["ids"]),
            round(r["seconds"], 3),
            round(r["seconds"] / len(r["ids"]), 3),
            ", ".join(f"`{i}`" for i in r["ids"]),
        ]  # fmt: skip
        for r in together["rows"]
    ]
    columns = ["config", "task", "items at once", "seconds", "s per judgment", "items"]
    title = f"{together['n']} items at once (as `cejudge evaluate --concurrency {together['n']}`)"
    return Table(columns, rows, ["", "", "", "{:.1f}", "{:.1f}", ""], title)


if __name__ == "__main__":
    main()
