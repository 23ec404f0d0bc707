"""`evaluate` after its checks: the pending items judged (in this process with a live display, or on
Ray), then the run summarized, summary.json written and the tables printed.

_evaluate.py checks every option and input and opens the run directory under its lock before it calls
`judge_and_summarize`, so nothing here can still be refused by a typo. `ItemProgram` routes each item's
stage progress to the live display.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._common import announce_program, backbone
from cejudge_dspy.cli._evaluate_ray import judge_with_ray
from cejudge_dspy.cli._selective import warn_without_confidence
from cejudge_dspy.data import Item


def judge_and_summarize(
    args: argparse.Namespace,
    spec: Any,
    program: Any,
    items: list[Item],
    records: list[Any],
    out: Path,
    config: dict[str, Any],
) -> int:
    """Judge the items not yet in `records`, summarize the run, write summary.json and print its tables;
    returns the exit code."""
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.evaluate import judge_items, pending_items
    from cejudge_dspy.metrics import summarize
    from cejudge_dspy.runs import RESULTS, SUMMARY, read_records, read_timing, run_timing, write_summary

    started = time.time()
    todo = pending_items(items, records)
    err = console(stderr=True)
    err.print(
        f"{len(items)} items, {len(items) - len(todo)} already in {out / RESULTS}, {len(todo)} to judge"
    )
    members = getattr(args, "members", None)  # a panel's (cli/_panel.py), or None for one judge
    if members is None:
        announce_program(
            err, config["program"], spec.name if args.method == "cejudge" else None, args.program
        )
    else:
        err.print(f"panel: {len(members)} members ({', '.join(m.name for m in members)})", markup=False)
    if todo and args.ray is not None:
        judge_with_ray(args, spec, todo, out, config, err)
    elif todo:
        from cejudge_dspy.cli._progress import RunDisplay, live

        display = RunDisplay(f"{spec.name} · {config['method']}", len(todo))

        def tick(record: Any) -> None:
            display.on_record(record.id, record.status)

        from cejudge_dspy.cli._panel import panel_backbone

        lm = backbone(args, display) if members is None else panel_backbone(args, members, display)
        with live(err, display, transient=False), lm:
            asyncio.run(
                judge_items(
                    todo,
                    ItemProgram(program, todo, display.on_stage),
                    out / RESULTS,
                    task=spec.name,
                    method=config["method"],
                    concurrency=args.concurrency,
                    on_record=tick,
                )
            )
            display.update("")
    final = read_records(out / RESULTS) if todo else records  # nothing judged: what the resume read
    summary = summarize(
        final,
        spec,
        n_resamples=args.bootstrap,
        seed=args.seed,
        abstain_below=args.abstain_below,
        confidence=args.confidence,
    )
    warn_without_confidence(err, summary)
    summary["run"] = config
    summary["features"] = _features(err, args, final)
    if members is not None:
        from cejudge_dspy.metrics import panel_summary

        summary["panel"] = panel_summary(final, spec, n_resamples=args.bootstrap, seed=args.seed)
    if todo or read_timing(out / SUMMARY) is None:
        summary["timing"] = run_timing(read_timing(out / SUMMARY), started, time.time())
    else:  # nothing was judged in this session: the run's timing stays what it was
        summary["timing"] = read_timing(out / SUMMARY)
    write_summary(out / SUMMARY, summary)
    print_run_tables(summary, spec.mode)
    console().print(f"results: {out / RESULTS} · summary: {out / SUMMARY}")
    ids = {i.id for i in items}  # built once: once per record, a 4,000-record resume took seconds
    return _exit_code(err, [r for r in final if r.id in ids])


def print_run_tables(summary: dict[str, Any], mode: str) -> None:
    """The run's tables on stdout: the summary, dimensions, decision rules, reliability, calibration, the
    risk-coverage of selective judging, and a panel's; `evaluate` and `merge --members` print the same."""
    from cejudge_dspy.cli.display import (
        console,
        decision_rules_table,
        dimension_tables,
        panel_tables,
        reliability_table,
        selective_table,
        summary_table,
    )

    stdout = console()
    stdout.print(summary_table(summary))
    if (dims := dimension_tables(summary)) is not None:
        stdout.print(dims)
    if (rules := decision_rules_table(summary)) is not None:
        stdout.print(rules)
    if (calibration := summary.get("decision_rules", {}).get("calibration")) and calibration["n"]:
        stdout.print(reliability_table(calibration))
    if (selective := summary.get("selective")) and selective["n"] > selective["n_without_confidence"]:
        stdout.print(selective_table(selective, mode))
    for table in panel_tables(summary["panel"], summary["metric"]) if summary.get("panel") else []:
        stdout.print(table)


def _features(err: Any, args: argparse.Namespace, records: list[Any]) -> dict[str, bool | None]:
    """What the backbone gave the run (judges.combined_features), and one stderr line when it lacked any;
    a panel's run: one line per member whose backbone lacked any (its records' `members`)."""
    from cejudge_dspy.judges import combined_features, missing_features

    features = combined_features([r.features for r in records])
    per_member: dict[str, list[Any]] = {}
    for r in records:
        for m in r.members or []:
            per_member.setdefault(m["name"], []).append(m.get("features"))
    lacking = {f"member {k}": combined_features(v) for k, v in per_member.items()} or {
        f"backbone {args.lm}": features
    }
    for who, had in lacking.items():
        if missing := missing_features(had):
            err.print(
                f"{who} gave this run no {', '.join(missing)} (see each record's features; "
                "`cejudge backbones check` asks a server what it gives)",
                soft_wrap=True,
                markup=False,
            )
    return features


def _exit_code(err: Any, records: list[Any]) -> int:
    """1 when every item of the run errored (a configuration fault, not a result), else 0."""
    errors = [r for r in records if r.status == "error"]
    if records and len(errors) == len(records):
        err.print(f"error: every item failed ({len(errors)}); the first: {errors[0].error}", soft_wrap=True)
        return 1
    if errors:
        err.print(f"warning: {len(errors)} items failed; rerun the same command to retry them")
    return 0


class ItemProgram:
    """The judge program, with each item's stage progress sent to `on_stage(item_id, event)`.

    The runner calls `acall(**item.inputs())`; the item is found again by its inputs (items with the same
    inputs take turns), and its progress callback is set inside the item's own task."""

    def __init__(self, program: Any, items: list[Item], on_stage: Any) -> None:
        self.program = program
        self.on_stage = on_stage
        self.ids: dict[str, list[str]] = {}
        for item in items:
            self.ids.setdefault(self._key(item.inputs()), []).append(item.id)

    @staticmethod
    def _key(inputs: dict[str, Any]) -> str:
        return json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)

    async def acall(self, **inputs: Any) -> Any:
        from cejudge_dspy.usage import on_progress

        waiting = self.ids.get(self._key(inputs)) or ["item"]
        item_id = waiting.pop(0) if len(waiting) > 1 else waiting[0]
        with on_progress(lambda event: self.on_stage(item_id, event)):
            return await self.program.acall(**inputs)
