"""Instruction tuning of a task's CE-Judge program with GEPA, MIPROv2 (zero-shot) or SIMBA.

`optimize` scores the dev split before and after; the dev split is never shown to the optimizer
(GEPA and MIPROv2 select candidates on the last third of the training split instead). It returns an
`OptimizeReport` (report.py); `methods.save_program` writes the program with its manifest. The LM-call
estimate and its formula live in budget.py, the metrics in metrics.py, the dev and anchor passes in
dev.py. `DevScore`, `OptimizeReport`, `evaluate_dev` and `training_anchors` stay importable from here.

Stop and resume: GEPA checkpoints into `log_dir` each iteration and resumes from it when rerun with
the same split. On Ctrl-C the best candidate so far (GEPA's, from its callbacks or checkpoint) is
returned with `source="best-so-far"`; MIPROv2 and SIMBA expose none, so the base program comes back
with `source="base"`. The dev split is then not re-scored.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

import dspy

from cejudge_dspy.errors import BackboneError, InputError
from cejudge_dspy.judges import program_for_task
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.tuning._budget import OPTIMIZERS, Budget, estimate_calls, parse_budget, val_size
from cejudge_dspy.tuning._dev import DevScore, evaluate_dev, training_anchors
from cejudge_dspy.tuning._gain import held_out_gain

# `optimize` looks `metric_for` up here, in this module's globals: tests wrap it to see the anchors it binds.
from cejudge_dspy.tuning._metrics import metric_for
from cejudge_dspy.tuning._optimizers import (
    GEPAWatcher,
    Progress,
    build_optimizer,
    checkpoint_best,
    counting,
    instructions,
    prepare_log_dir,
    with_instructions,
)
from cejudge_dspy.tuning._report import OptimizeReport


def optimize(
    task: str | TaskSpec,
    trainset: list[dspy.Example],
    devset: list[dspy.Example],
    *,
    optimizer: str = "gepa",
    budget: Budget | str = "light",
    demos: int = 0,
    reflection_lm: dspy.LM | None = None,
    seed: int = 42,
    program: str | Path = "base",
    on_progress: Progress | None = None,
    lm: dspy.LM | None = None,
    num_threads: int = 1,
    log_dir: str | Path | None = None,
    optimizer_options: dict[str, Any] | None = None,
) -> OptimizeReport:
    """Tune the instructions of `task`'s program (`program`: "base", "auto" or a saved path) on `trainset`.

    `lm` defaults to the LM in `dspy.context`/`dspy.configure`, `reflection_lm` to `lm`. Instruction
    only unless `demos` > 0 (MIPROv2/SIMBA). `optimizer_options` go to the optimizer's constructor.
    """
    spec, budget = load_task(task), parse_budget(budget)
    if optimizer not in OPTIMIZERS:
        raise InputError(
            f"unknown optimizer {optimizer!r}; choose {', '.join(OPTIMIZERS)}", field="optimizer"
        )
    if demos < 0 or (demos and optimizer == "gepa"):
        raise InputError(
            "GEPA tunes instructions only; use --optimizer mipro or simba for demos"
            if demos > 0
            else "must be >= 0",
            field="demos",
        )
    if not trainset or not devset:
        raise InputError("optimize needs a non-empty train and dev split", field="trainset")
    unlabelled = next((ex for ex in [*trainset, *devset] if ex.get("label") is None), None)
    if unlabelled is not None:
        raise InputError(
            "has no gold label; optimize needs labelled items", item=unlabelled.get("id"), field="label"
        )
    lm = lm or dspy.settings.lm
    if lm is None:
        raise BackboneError("no judge LM: pass lm=... or run inside dspy.context(lm=...)")
    reflection_lm = reflection_lm or lm
    started = time.monotonic()
    n_val = val_size(len(trainset))
    # Candidates are selected on the tail of train; tiny splits reuse all of train for both.
    reflect, val = (trainset, trainset) if n_val == len(trainset) else (trainset[:-n_val], trainset[-n_val:])
    if optimizer == "simba":
        reflect, val = trainset, []
    estimate = estimate_calls(spec, trainset, devset, optimizer=optimizer, budget=budget, demos=demos)
    student = program_for_task(spec, program)
    logs = Path(log_dir) if log_dir and optimizer == "gepa" else None
    fingerprint = {
        "task": spec.name,
        "task_version": spec.version,
        "program": str(program),
        "seed": seed,
        "train": [ex.get("id") for ex in reflect],
        "val": [ex.get("id") for ex in val],
    }
    resumed = logs is not None and prepare_log_dir(logs, fingerprint)
    watcher = GEPAWatcher(on_progress, estimate.program_runs)

    def score_dev(candidate: dspy.Module, phase: str) -> DevScore:
        # `metric` is bound below, once the anchors are known, and before the first dev pass.
        # The same dev split, metric and threads before and after tuning: only the program differs.
        return evaluate_dev(
            candidate, devset, spec, metric, num_threads=num_threads, on_progress=on_progress, phase=phase
        )

    with dspy.context(lm=lm):
        # Pointwise: the starting program's scores of the training items anchor the ranking term of the
        # metric (ranking.py); they are fixed before any candidate is scored.
        anchors = (
            training_anchors(student, trainset, spec, num_threads=num_threads, on_progress=on_progress)
            if spec.mode == "pointwise"
            else []
        )
        metric = metric_for(spec, trainset, anchors=anchors)
        feedback = metric_for(spec, trainset, feedback=True, anchors=anchors)
        before = score_dev(student, "dev-before")
        shared = getattr(student, "shared", None)
        if shared is not None:  # dev results must not ride along into every candidate's deepcopy
            shared.clear()
        compile_, settings = build_optimizer(
            optimizer,
            budget=budget,
            demos=demos,
            metric=counting(metric, on_progress, estimate),
            feedback=counting(feedback, on_progress, estimate),
            lm=lm,
            reflection_lm=reflection_lm,
            seed=seed,
            num_threads=num_threads,
            log_dir=logs,
            watcher=watcher,
            reflect=reflect,
            val=val,
            options=dict(optimizer_options or {}),
        )
        source: Literal["optimized", "best-so-far", "base"] = "optimized"
        try:
            tuned = compile_(student)
        except KeyboardInterrupt:
            bests = [b for b in (watcher.best, checkpoint_best(logs)) if b is not None and b[1] != 0]
            if bests:
                tuned, source = with_instructions(student, max(bests, key=lambda b: b[0])[2]), "best-so-far"
            else:
                tuned, source = student, "base"
        after = None
        if source == "optimized":
            try:
                after = score_dev(tuned, "dev-after")
            except KeyboardInterrupt:  # keep the tuned program; only its dev score is lost
                after = None
    old, new = instructions(student), instructions(tuned)
    held_out = None
    if after is not None:
        golds = [ex.label for ex in devset]
        held_out = held_out_gain(spec, golds, before.predictions, after.predictions, seed=seed)
    return OptimizeReport(
        task=spec.name,
        task_version=spec.version,
        optimizer=optimizer,
        budget=budget,
        demos=demos,
        seed=seed,
        settings=settings,
        estimate=estimate,
        program=tuned,
        source=source,
        dev_before=before,
        dev_after=after,
        sizes={
            "train": len(trainset),
            "reflect": len(reflect),
            "val": len(val),
            "dev": len(devset),
            **({"anchors": len(anchors)} if spec.mode == "pointwise" else {}),
        },
        changed_stages=[k for k in new if new[k] != old.get(k)],
        held_out=held_out,
        seconds=time.monotonic() - started,
        log_dir=str(logs) if logs else None,
        resumed=resumed,
    )
