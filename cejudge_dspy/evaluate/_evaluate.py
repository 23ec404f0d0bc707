"""`evaluate`: judge a task's items into a run directory and measure the run, the same call for a Python
user and for `cejudge evaluate`.

The sequence: every option and input checked before anything is written (a typo never leaves a run
behind), the run's identity, the run directory opened under its lock (a rerun with the same identity
resumes), the pending items judged (in this process, or on Ray), the run summarized and summary.json
written. It writes as it goes (`judge_items`), so Ctrl-C or a crash loses at most the items in flight.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from cejudge_dspy.data import Item
from cejudge_dspy.errors import check_names
from cejudge_dspy.evaluate._checks import check_backbone_spec, check_options
from cejudge_dspy.evaluate._groups import group_key
from cejudge_dspy.evaluate._identity import run_identity
from cejudge_dspy.evaluate._options import (
    EvaluateOptions,
    EvaluateProgress,
)
from cejudge_dspy.runs import Record, pending_items
from cejudge_dspy.tasks import TaskSpec


@dataclass(frozen=True)
class Evaluation:
    """A finished `evaluate` call: where the run is, what it is (`config`, run.json's identity), the
    records of the items asked for, and the summary written to summary.json."""

    out: Path
    config: dict[str, Any]
    records: list[Record]
    summary: dict[str, Any]
    judged: int  # items judged by this call (the rest were in the run already)

    @property
    def results_path(self) -> Path:
        from cejudge_dspy.runs import RESULTS

        return self.out / RESULTS

    @property
    def summary_path(self) -> Path:
        from cejudge_dspy.runs import SUMMARY

        return self.out / SUMMARY

    @property
    def errors(self) -> list[Record]:
        """Records whose item failed with an exception (a rerun retries them)."""
        return [r for r in self.records if r.status == "error"]


def evaluate(
    options: EvaluateOptions | None = None, /, *, progress: EvaluateProgress | None = None, **values: Any
) -> Evaluation:
    """Judge a task's items into a run directory, summarize the run and write summary.json.

    `evaluate(task="chat", data="dev.jsonl", backbone="simulated:0", out="runs/dev")`, or an `EvaluateOptions`
    (keyword arguments given beside it replace its fields). An unknown keyword is refused with the nearest
    known one. `progress` (an `EvaluateProgress`) hears the run as it goes."""
    if options is None:
        options = EvaluateOptions.create(**values)
    elif values:
        check_names(values, [f.name for f in fields(EvaluateOptions)], "evaluate option")
        options = replace(options, **values)
    progress = progress or EvaluateProgress()
    from cejudge_dspy.data import field_mapping
    from cejudge_dspy.evaluate._prompts_memo import memo_key, prompts_of, remember
    from cejudge_dspy.files import paused_gc
    from cejudge_dspy.runs import item_ids, lock, prepare_run_dir

    # Building the program (DSPy's imports), reading the data and the run and summarizing it make millions
    # of objects without cycles: the cyclic collector waits meanwhile (files.paused_gc); judging has it.
    with paused_gc():
        spec, program, panel, label = _program(options)
        # One judge's program is built only when needed: its prompt fingerprint may be in the run
        # directory's memo (a rerun with nothing left to judge). A panel is built at once (its members);
        # a new run (--force-new) builds it too. Built or not, the program's own errors come before the
        # data's, as they always have.
        memo = not (panel or options.force_new)
        key = memo_key(spec, options.judge.method, label, options.judge.program_kwargs()) if memo else None
        prompts, from_memo = prompts_of(options.run_dir, key, program)
        items = select_items(options, spec)
    fields_, constants = field_mapping(spec, dict(options.fields), dict(options.constants))
    if line := unlabelled_note(spec, items, fields_.get("label")):
        progress.note(line)
    config = run_identity(
        spec,
        options.judge,
        program=label,
        backbone=options.run_backbone,
        data=options.data if options.items is None else None,
        data_sha256=data_fingerprint(options, spec),
        fields=fields_,
        constants=constants,
        prompts=prompts,
        languages=options.languages,
        subsets=options.subsets,
        limit=options.limit,
        first=options.first,
        seed=options.run_seed,
        shard=f"{options.shard[0]}/{options.shard[1]}" if options.shard else None,
        preset=options.preset,
        headline=options.headline,
    )
    if options.panel is not None:
        from cejudge_dspy.evaluate._panel import panel_identity

        config |= panel_identity(options.panel, panel, options.run_backbone)
    config["items"] = item_ids([i.id for i in items])  # what readers and merge check a run's records against
    out = options.run_dir
    with lock(out):
        with paused_gc():
            records = prepare_run_dir(out, config, force_new=options.force_new)
        if from_memo and pending_items(items, records):
            # Items are to be judged, so the program is built now, and its prompts must be the memo's: a
            # stage edited at run time, in this process, changes no file the memo's key covers. A
            # difference is refused as any other change of identity is, naming it.
            from cejudge_dspy.judges import prompt_fingerprint

            if (actual := prompt_fingerprint(program())) != prompts:
                # Refused where records were judged with the memo's prompts; else run.json is rewritten.
                config["prompts"] = actual
                records = prepare_run_dir(out, config, force_new=False)
                remember(out, key, actual)
        elif key and not from_memo:
            remember(out, key, prompts)
        return _judge_and_summarize(options, spec, program, items, records, out, config, progress)


def _program(options: EvaluateOptions) -> tuple[TaskSpec, Any, Any, str]:
    """The task, the program's builder (called when the program is needed; built once), a panel's members
    and the program's label in run.json, every option checked first: nothing is written before all of it
    (and the items) is, so a typo never leaves a run behind."""
    from cejudge_dspy.judges import run_program_identity
    from cejudge_dspy.tasks import load_task

    check_options(options)
    spec = load_task(options.task)
    panel = None
    if options.panel is None:
        options.judge.check(spec)
        check_backbone_spec(options.run_backbone, options.judge.method)
        program = _builder(spec.name, options)
        label = run_program_identity(spec.name, options.judge.method, options.judge.program)
    else:
        from cejudge_dspy.evaluate._panel import build_panel, check_panel

        check_panel(spec, options.panel, options.run_backbone, options.panel_source)
        built, panel = build_panel(spec, options.panel, options.judge.tie_band, options.panel_source)
        program = functools.cache(lambda: built)
        label = "panel"
    return spec, program, panel, label


def unlabelled_note(spec: Any, items: Sequence[Any], label_column: str | None) -> str | None:
    """A note when items have no gold label (they get verdict shares or score distributions, not the task's
    metric), naming the declared label column a file lacked, so a forgotten `--field label=` is seen before
    the run, not after it."""
    unlabelled = sum(i.label is None for i in items)
    if not unlabelled:
        return None
    line = f"{unlabelled} of {len(items)} items have no gold label: they get no {spec.metric}"
    if unlabelled == len(items) and label_column:
        line += f" (the data has no '{label_column}' column; map yours with --field label=COLUMN)"
    return line


def shard_of(key: str, n: int) -> int:
    """Deterministic shard (0-based) of a key: the same on every machine and every run."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % n


def select_items(options: EvaluateOptions, spec: TaskSpec) -> list[Item]:
    """The items the options select: `items` as given, else read from `data` (`first` the first N in file
    order, `limit` the seeded, language-stratified sample, else all), then the shard's.

    An item's shard follows its group, else its instruction (`group_key`): items that share an instruction
    (MM-Eval prompts, LitEval sources) land in one shard, so its concepts and translation are computed once,
    as in a single run; shard sizes are less even than hashing ids would make them."""
    from cejudge_dspy.data import load_items

    if options.items is not None:
        items = list(options.items)
    else:
        items = load_items(
            spec,
            None if options.data is None else str(options.data),
            fields=dict(options.fields),
            constants=dict(options.constants),
            languages=list(options.languages) if options.languages else None,
            subsets=list(options.subsets) if options.subsets else None,
            limit=options.first or options.limit,
            seed=options.run_seed,
            first=options.first is not None,
        )
    if options.shard:
        k, n = options.shard
        items = [i for i in items if shard_of(group_key(i), n) == k - 1]
    return items


def data_fingerprint(options: EvaluateOptions, spec: TaskSpec) -> str:
    """What the data is (data.fingerprint); items given in Python: a SHA-256 over them."""
    from cejudge_dspy.data import fingerprint

    if options.items is None:
        return fingerprint(spec, None if options.data is None else str(options.data))
    rows = json.dumps([i.to_dict() for i in options.items], sort_keys=True, ensure_ascii=False, default=str)
    return "items:" + hashlib.sha256(rows.encode()).hexdigest()[:16]


def _judge_and_summarize(
    options: EvaluateOptions,
    spec: TaskSpec,
    program: Callable[[], Any],
    items: list[Item],
    records: list[Record],
    out: Path,
    config: dict[str, Any],
    progress: EvaluateProgress,
) -> Evaluation:
    """Judge the items not yet in `records`, summarize the run and write summary.json."""
    from cejudge_dspy.files import paused_gc
    from cejudge_dspy.metrics import summarize
    from cejudge_dspy.runs import RESULTS, SUMMARY, read_records, read_timing, run_timing, write_summary

    started = time.time()
    todo = pending_items(items, records)
    progress.note(
        f"{len(items)} items, {len(items) - len(todo)} already in {out / RESULTS}, {len(todo)} to judge"
    )
    if options.panel is None:
        for line in program_notes(config["program"], spec.name, options.judge):
            progress.note(line)
    else:
        names = ", ".join(m.name for m in options.panel)
        progress.note(f"panel: {len(options.panel)} members ({names})")
    if todo and options.ray is not None:
        _judge_on_ray(options, spec, todo, out, config, progress)
    elif todo:
        from cejudge_dspy.backbones import use_backbone
        from cejudge_dspy.evaluate._runner import judge_items

        if options.panel is None:
            backbone = use_backbone(options.lm, on_status=progress.status, **options.run_backbone.kwargs())
        else:
            from cejudge_dspy.evaluate._panel import panel_backbone

            backbone = panel_backbone(options.panel, options.run_backbone, progress.status)
        with progress.judging(f"{spec.name} · {config['method']}", len(todo)), backbone:
            asyncio.run(
                judge_items(
                    todo,
                    ItemProgram(program(), todo, progress.stage),
                    out / RESULTS,
                    task=spec.name,
                    method=config["method"],
                    concurrency=options.concurrency,
                    on_record=progress.record,
                )
            )
            progress.status("")
    with paused_gc():
        final = read_records(out / RESULTS) if todo else records  # nothing judged: what the resume read
        summary = summarize(
            final,
            spec,
            n_resamples=options.bootstrap,
            seed=options.run_seed,
            abstain_below=options.abstain_below,
            confidence=options.confidence,
        )
    if line := without_confidence(summary):
        progress.note(line)
    summary["run"] = config
    summary["features"] = _features(progress, options.lm, final)
    if options.panel is not None:
        from cejudge_dspy.metrics import panel_summary

        summary["panel"] = panel_summary(final, spec, n_resamples=options.bootstrap, seed=options.run_seed)
    if todo or read_timing(out / SUMMARY) is None:
        summary["timing"] = run_timing(read_timing(out / SUMMARY), started, time.time())
    else:  # nothing was judged in this session: the run's timing stays what it was
        summary["timing"] = read_timing(out / SUMMARY)
    write_summary(out / SUMMARY, summary)
    asked = {i.id for i in items}
    return Evaluation(out, config, [r for r in final if r.id in asked], summary, len(todo))


def program_notes(label: str, task: str, judge: Any) -> list[str]:
    """That a tuned program judges, or why `program="auto"` passed over a tuned file."""
    if label != "base":
        return [f"program: {label} (tuned; --program base for the hand-written one)"]
    from cejudge_dspy.judges import auto_choice

    if judge.method == "cejudge" and judge.program == "auto" and (why := auto_choice(task)[1]):
        return [f"program: base ({why})"]
    return []


def without_confidence(summary: dict[str, Any]) -> str | None:
    """The warning when a threshold met records without any confidence (all abstained)."""
    selective = summary.get("selective") or {}
    blind = selective.get("n") and selective["n_without_confidence"] == selective["n"]
    if "abstain_below" in selective and blind:
        return (
            "warning: no item has a confidence (token probabilities or panel agreement), so "
            "--abstain-below left every judged item to a person"
        )
    return None


def _features(progress: EvaluateProgress, lm: str, records: Sequence[Record]) -> dict[str, bool | None]:
    """What the backbone gave the run (judges.combined_features), and one note when it lacked any; a
    panel's run: one note per member whose backbone lacked any (its records' `members`)."""
    from cejudge_dspy.judges import combined_features, missing_features

    features = combined_features([r.features for r in records])
    per_member: dict[str, list[Any]] = {}
    for r in records:
        for m in r.members or []:
            per_member.setdefault(m["name"], []).append(m.get("features"))
    lacking = {f"member {k}": combined_features(v) for k, v in per_member.items()} or {
        f"backbone {lm}": features
    }
    for who, had in lacking.items():
        if missing := missing_features(had):
            progress.note(
                f"{who} gave this run no {', '.join(missing)} (see each record's features; "
                "`cejudge backbones check` asks a server what it gives)"
            )
    return features


def _judge_on_ray(
    options: EvaluateOptions,
    spec: TaskSpec,
    todo: list[Item],
    out: Path,
    config: dict[str, Any],
    progress: EvaluateProgress,
) -> None:
    """Judge `todo` on Ray into `out`/results.jsonl. Ray is not part of the run's identity: its records
    equal a local run's up to timing, so a run started with Ray resumes without it and the other way."""
    import math

    from cejudge_dspy.evaluate._cluster import ray_cluster
    from cejudge_dspy.evaluate._distributed import judge_on_ray
    from cejudge_dspy.evaluate._ray_progress import RayProgress
    from cejudge_dspy.evaluate._worker import RunRecipe
    from cejudge_dspy.runs import RESULTS

    ray, judge = options.ray, options.judge
    assert ray is not None
    recipe = RunRecipe(
        task=spec.name,
        task_version=spec.version,
        method=judge.method,
        program=judge.program,
        program_label=config["program"],
        prompts=config.get("prompts"),
        backbone=options.run_backbone,
        options=judge.program_kwargs(),
        concurrency=options.concurrency,
    )
    counts = RayProgress()
    progress.workers(counts.workers)
    # A local instance just big enough for the actors asked for (default: this machine's CPUs).
    local_cpus = math.ceil(ray.actors * ray.cpus_per_actor) if ray.actors else None

    def tick(record: Record, worker: str) -> None:
        progress.record(record)

    with progress.judging(f"{spec.name} · {judge.method} · ray", len(todo)):
        progress.status(f"connecting to Ray ({ray.address})" if ray.address != "local" else "starting Ray")
        with ray_cluster(ray.address, num_cpus=local_cpus):
            progress.status("starting the workers (each builds the judge and checks the program)")
            asyncio.run(
                judge_on_ray(
                    todo,
                    recipe,
                    out / RESULTS,
                    options=ray,
                    progress=counts,
                    on_record=tick,
                    on_ready=progress.ready,
                )
            )
    progress.note(f"ray: {counts.describe()}")


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


def _builder(task: str, options: EvaluateOptions) -> Callable[[], Any]:
    """`run_program(task, options=options.judge)`, built on its first call and kept."""

    @functools.cache
    def build() -> Any:
        from cejudge_dspy.judges import run_program

        return run_program(task, options=options.judge)

    return build
