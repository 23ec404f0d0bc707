"""Instruction tuning of a task's CE-Judge program with GEPA, MIPROv2 (zero-shot) or SIMBA.

`optimize` scores the dev split before and after; the dev split is never shown to the optimizer
(GEPA and MIPROv2 select candidates on the last third of the training split instead). It returns an
`OptimizeReport` (_report.py); `judges.save_program` writes the program with its manifest. The LM-call
estimate and its formula live in _budget.py, the metrics in _metrics.py, the dev and anchor passes in
_dev.py, the argument checks, the split of train and GEPA's log dir in _plan.py. `cejudge_dspy.tuning`
exports `optimize` with `DevScore`, `OptimizeReport` and `evaluate_dev`.

Stop and resume: GEPA checkpoints each iteration (privately, signed: _checkpoint.py, keyed by
`log_dir`) and resumes from it when rerun with the same `log_dir` and split. On Ctrl-C the best
candidate so far (GEPA's, from its callbacks or checkpoint) is returned with `source="best-so-far"`;
MIPROv2 and SIMBA expose none, so the base program comes back with `source="base"`. The dev split
is then not re-scored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import dspy

from cejudge_dspy.errors import BackboneError
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.tuning._budget import Budget, parse_budget
from cejudge_dspy.tuning._checkpoint import Checkpoint
from cejudge_dspy.tuning._dev import DevScore, evaluate_dev, training_anchors
from cejudge_dspy.tuning._gain import held_out_gain

# `_anchored_metrics` looks `metric_for` up here, in this module's globals: tests wrap it (through
# `optimize.__globals__`) to see the anchors it binds.
from cejudge_dspy.tuning._metrics import metric_for
from cejudge_dspy.tuning._optimizers import (
    GEPAWatcher,
    Progress,
    build_optimizer,
    checkpoint_best,
    counting,
    instructions,
    with_instructions,
)
from cejudge_dspy.tuning._plan import Plan, check_arguments, plan_run
from cejudge_dspy.tuning._ranking import Anchor
from cejudge_dspy.tuning._report import OptimizeReport

_Source = Literal["optimized", "best-so-far", "base"]


@dataclass
class _Tuned:
    """What the tuning pass produced: the program, where it came from, and the scores around it."""

    program: dspy.Module
    source: _Source
    settings: dict[str, Any]
    anchors: list[Anchor]
    before: DevScore
    after: DevScore | None  # None when the dev split was not re-scored


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
    check_arguments(optimizer, demos, trainset, devset)
    lm = _judge_lm(lm)
    reflection_lm = reflection_lm or lm
    started = time.monotonic()
    plan = plan_run(
        spec,
        budget,
        trainset,
        devset,
        optimizer=optimizer,
        demos=demos,
        seed=seed,
        program=program,
        log_dir=log_dir,
    )
    with dspy.context(lm=lm):
        tuned = _tune(
            plan,
            lm=lm,
            reflection_lm=reflection_lm,
            num_threads=num_threads,
            on_progress=on_progress,
            options=optimizer_options,
        )
    return _report(plan, tuned, started)


def _judge_lm(lm: dspy.LM | None) -> dspy.LM:
    lm = lm or dspy.settings.lm
    if lm is None:
        raise BackboneError("no judge LM: pass lm=... or run inside dspy.context(lm=...)")
    return lm


def _tune(
    plan: Plan,
    *,
    lm: dspy.LM,
    reflection_lm: dspy.LM,
    num_threads: int,
    on_progress: Progress | None,
    options: dict[str, Any] | None,
) -> _Tuned:
    """Score the dev split, run the optimizer, and score the dev split again if it ran to the end."""
    student = plan.student
    anchors, metric, feedback = _anchored_metrics(plan, num_threads, on_progress)
    score_dev = _dev_scorer(plan, metric, num_threads, on_progress)
    before = score_dev(student, "dev-before")
    shared = getattr(student, "shared", None)
    if shared is not None:  # dev results must not ride along into every candidate's deepcopy
        shared.clear()
    watcher = GEPAWatcher(on_progress, plan.estimate.program_runs)
    compile_, settings = build_optimizer(
        plan.optimizer,
        budget=plan.budget,
        demos=plan.demos,
        metric=counting(metric, on_progress, plan.estimate),
        feedback=counting(feedback, on_progress, plan.estimate),
        lm=lm,
        reflection_lm=reflection_lm,
        seed=plan.seed,
        num_threads=num_threads,
        checkpoint=plan.checkpoint,
        watcher=watcher,
        reflect=plan.reflect,
        val=plan.val,
        options=dict(options or {}),
    )
    tuned, source = _compile_or_best_so_far(compile_, student, watcher, plan.checkpoint)
    after = _rescored(score_dev, tuned) if source == "optimized" else None
    return _Tuned(tuned, source, settings, anchors, before, after)


def _anchored_metrics(
    plan: Plan, num_threads: int, on_progress: Progress | None
) -> tuple[list[Anchor], Any, Any]:
    """The anchors, the item metric and GEPA's feedback metric, both metrics bound to the same anchors."""
    # Pointwise: the starting program's scores of the training items anchor the ranking term of the
    # metric (_ranking.py); they are fixed before any candidate is scored.
    anchors = (
        training_anchors(
            plan.student, plan.trainset, plan.spec, num_threads=num_threads, on_progress=on_progress
        )
        if plan.spec.mode == "pointwise"
        else []
    )
    metric = metric_for(plan.spec, plan.trainset, anchors=anchors)
    feedback = metric_for(plan.spec, plan.trainset, feedback=True, anchors=anchors)
    return anchors, metric, feedback


def _dev_scorer(
    plan: Plan, metric: Any, num_threads: int, on_progress: Progress | None
) -> Callable[[dspy.Module, str], DevScore]:
    def score_dev(candidate: dspy.Module, phase: str) -> DevScore:
        # The same dev split, metric and threads before and after tuning: only the program differs.
        return evaluate_dev(
            candidate,
            plan.devset,
            plan.spec,
            metric,
            num_threads=num_threads,
            on_progress=on_progress,
            phase=phase,
        )

    return score_dev


def _rescored(score_dev: Callable[[dspy.Module, str], DevScore], tuned: dspy.Module) -> DevScore | None:
    """The tuned program's dev score; None on Ctrl-C, which keeps the program and loses only its score."""
    try:
        return score_dev(tuned, "dev-after")
    except KeyboardInterrupt:
        return None


def _compile_or_best_so_far(
    compile_: Callable[[dspy.Module], dspy.Module],
    student: dspy.Module,
    watcher: GEPAWatcher,
    checkpoint: Checkpoint | None,
) -> tuple[dspy.Module, _Source]:
    """The optimizer's program; on Ctrl-C the best candidate so far, else the starting program."""
    try:
        return compile_(student), "optimized"
    except KeyboardInterrupt:
        bests = [b for b in (watcher.best, checkpoint_best(checkpoint)) if b is not None and b[1] != 0]
        if bests:
            return with_instructions(student, max(bests, key=lambda b: b[0])[2]), "best-so-far"
        return student, "base"


def _report(plan: Plan, tuned: _Tuned, started: float) -> OptimizeReport:
    spec, before, after = plan.spec, tuned.before, tuned.after
    old, new = instructions(plan.student), instructions(tuned.program)
    held_out = None
    if after is not None:
        golds = [ex.label for ex in plan.devset]
        held_out = held_out_gain(spec, golds, before.predictions, after.predictions, seed=plan.seed)
    return OptimizeReport(
        task=spec.name,
        task_version=spec.version,
        optimizer=plan.optimizer,
        budget=plan.budget,
        demos=plan.demos,
        seed=plan.seed,
        settings=tuned.settings,
        estimate=plan.estimate,
        program=tuned.program,
        source=tuned.source,
        dev_before=before,
        dev_after=after,
        sizes={
            "train": len(plan.trainset),
            "reflect": len(plan.reflect),
            "val": len(plan.val),
            "dev": len(plan.devset),
            **({"anchors": len(tuned.anchors)} if spec.mode == "pointwise" else {}),
        },
        changed_stages=[k for k in new if new[k] != old.get(k)],
        held_out=held_out,
        seconds=time.monotonic() - started,
        log_dir=str(plan.logs) if plan.logs else None,
        resumed=plan.resumed,
    )
