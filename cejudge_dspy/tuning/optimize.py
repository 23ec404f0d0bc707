"""Instruction tuning of a task's CE-Judge program with GEPA, MIPROv2 (zero-shot) or SIMBA.

`optimize` scores the dev split before and after; the dev split is never shown to the optimizer
(GEPA and MIPROv2 select candidates on the last third of the training split instead). It returns an
`OptimizeReport`; `methods.save_program` writes the program with its manifest. The LM-call
estimate and its formula live in budget.py, the metrics in metrics.py.

Stop and resume: GEPA checkpoints into `log_dir` each iteration and resumes from it when rerun with
the same split. On Ctrl-C the best candidate so far (GEPA's, from its callbacks or checkpoint) is
returned with `source="best-so-far"`; MIPROv2 and SIMBA expose none, so the base program comes back
with `source="base"`. The dev split is then not re-scored.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import dspy

from cejudge_dspy.errors import BackboneError, InputError
from cejudge_dspy.methods.registry import program_for_task
from cejudge_dspy.methods.runtime import judging_run
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.tuning.budget import (
    OPTIMIZERS,
    Budget,
    CallEstimate,
    estimate_calls,
    parse_budget,
    val_size,
)
from cejudge_dspy.tuning.gain import held_out_gain
from cejudge_dspy.tuning.metrics import (
    metric_for,
    pairwise_concordance,
    result_of,
)
from cejudge_dspy.tuning.optimizers import (
    GEPAWatcher,
    Progress,
    build_optimizer,
    checkpoint_best,
    counting,
    instructions,
    prepare_log_dir,
    with_instructions,
)
from cejudge_dspy.tuning.ranking import Anchor


@dataclass(frozen=True)
class DevScore:
    metric: float  # mean per-item optimizer metric, 0..1
    n: int
    unparsed: int
    corpus: float | None = None  # accuracy (pairwise) or concordance (pointwise) over the split
    corpus_name: str = ""
    # Per dev item, in split order: its id and the program's verdict or score (None when unparsed); the
    # held-out comparison pairs them, and the manifest keeps them so the decision can be checked.
    ids: tuple[str, ...] = ()
    predictions: tuple[Any, ...] = ()


@dataclass
class OptimizeReport:
    task: str
    task_version: int
    optimizer: str
    budget: Budget
    demos: int
    seed: int
    settings: dict[str, Any]
    estimate: CallEstimate
    program: dspy.Module
    source: Literal["optimized", "best-so-far", "base"]
    dev_before: DevScore
    dev_after: DevScore | None
    sizes: dict[str, int]
    changed_stages: list[str] = field(default_factory=list)
    # The held-out comparison (gain.held_out_gain): whether this program may replace the starting one.
    held_out: dict[str, Any] | None = None
    seconds: float = 0.0
    log_dir: str | None = None
    resumed: bool = False  # GEPA continued from a checkpoint in log_dir

    @property
    def interrupted(self) -> bool:
        return self.source != "optimized"

    def manifest(self, *, task_lm: str, reflection_lm: str, data: str | None) -> dict[str, Any]:
        """The manifest fields this run knows (save_program adds stages, dspy version and time)."""
        return {
            "task": self.task,
            "task_version": self.task_version,
            "source": self.source,
            "backbones": {"task": task_lm, "reflection": reflection_lm},
            "optimizer": {
                "name": self.optimizer,
                "budget": self.budget,
                "demos": self.demos,
                "settings": self.settings,
            },
            "seed": self.seed,
            "splits": self.sizes,
            "data": data,
            "changed_stages": self.changed_stages,
            # Wall time of this invocation; a resumed run (GEPA checkpoint, LM cache) takes seconds.
            "seconds": round(self.seconds, 1),
            "resumed": self.resumed,
            "dev": {
                "before": asdict(self.dev_before),
                "after": asdict(self.dev_after) if self.dev_after else None,
            },
            "held_out": self.held_out,
        }


def evaluate_dev(
    program: dspy.Module,
    devset: list[dspy.Example],
    spec: TaskSpec,
    metric: Callable[..., float],
    *,
    num_threads: int = 1,
    on_progress: Progress | None = None,
    phase: str = "dev",
) -> DevScore:
    """Score `program` on `devset`; unparsed items score 0 and never abort the run."""
    from cejudge_dspy.evaluation.metrics import accuracy

    done = [0]

    def counted(gold: Any, pred: Any, trace: Any = None) -> float:
        done[0] += 1
        if on_progress:
            on_progress(phase, done[0], len(devset))
        return metric(gold, pred, trace)

    evaluate = dspy.Evaluate(
        devset=devset,
        metric=counted,
        num_threads=num_threads,
        display_progress=False,
        max_errors=len(devset) + 1,
        failure_score=0.0,
        provide_traceback=False,
    )
    with judging_run():  # a dev pass is a judging run (methods/runtime.py)
        result = evaluate(program)
    golds, preds = [ex for ex, _, _ in result.results], [p for _, p, _ in result.results]
    parsed = [r for p in preds if (r := result_of(p)) is not None and r.ok]
    if spec.mode == "pairwise":
        verdicts = [r.verdict if (r := result_of(p)) is not None and r.ok else None for p in preds]
        corpus, name = accuracy(verdicts, [ex.label for ex in golds]).value, "accuracy"
    else:
        corpus, name = pairwise_concordance(golds, preds), "concordance"
    by_id = {ex.get("id"): p for ex, p, _ in result.results}
    values = []
    for ex in devset:
        r = result_of(by_id.get(ex.get("id")))
        values.append(None if r is None or not r.ok else (r.verdict if spec.mode == "pairwise" else r.score))
    return DevScore(
        result.score / 100,
        len(devset),
        len(devset) - len(parsed),
        None if math.isnan(corpus) else corpus,
        name,
        ids=tuple(str(ex.get("id")) for ex in devset),
        predictions=tuple(values),
    )


def training_anchors(
    program: dspy.Module,
    trainset: list[dspy.Example],
    spec: TaskSpec,
    *,
    num_threads: int = 1,
    on_progress: Progress | None = None,
) -> list[Anchor]:
    """The training items as `program` scores them (unparsed ones left out): the ranking metric's anchors."""
    scored = evaluate_dev(
        program, trainset, spec, metric_for(spec, trainset), num_threads=num_threads,
        on_progress=on_progress, phase="anchors",
    )  # fmt: skip
    return [
        Anchor(item_id, float(ex.label), float(score))
        for item_id, ex, score in zip(scored.ids, trainset, scored.predictions, strict=True)
        if score is not None
    ]


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
