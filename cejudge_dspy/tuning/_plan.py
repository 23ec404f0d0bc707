"""What an `optimize` call fixes before its first LM call (_optimize.py).

The arguments are checked, the training split is divided into the items the optimizer learns from and
those it selects candidates on, the LM calls are estimated, the starting program is loaded and GEPA's
log dir is prepared (its checkpoint lives privately, _checkpoint.py). The checkpoint keeps a
fingerprint of the task, starting program, seed and split, so a rerun resumes a checkpoint only when
it was written for the same items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dspy

from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import program_for_task
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.tuning._budget import OPTIMIZERS, Budget, CallEstimate, estimate_calls, val_size
from cejudge_dspy.tuning._checkpoint import Checkpoint, prepare


@dataclass(frozen=True)
class Plan:
    """What `plan_run` fixed; the tuning pass and the report read it."""

    spec: TaskSpec
    optimizer: str
    budget: Budget
    demos: int
    seed: int
    trainset: list[dspy.Example]
    devset: list[dspy.Example]
    reflect: list[dspy.Example]  # what the optimizer learns from
    val: list[dspy.Example]  # what it selects candidates on (never the dev split)
    estimate: CallEstimate
    student: dspy.Module  # the starting program
    logs: Path | None  # GEPA's log dir, as the user named it
    checkpoint: Checkpoint | None  # where GEPA's state really lives (private, signed)
    resumed: bool  # the checkpoint already held a state for this split


def check_arguments(
    optimizer: str, demos: int, trainset: list[dspy.Example], devset: list[dspy.Example]
) -> None:
    """Refuse an unknown optimizer, a demo count it cannot use, and empty or unlabelled splits."""
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


def selection_split(
    trainset: list[dspy.Example], optimizer: str
) -> tuple[list[dspy.Example], list[dspy.Example]]:
    """The training items the optimizer learns from, and those it selects candidates on (none for SIMBA)."""
    if optimizer == "simba":
        return trainset, []
    n_val = val_size(len(trainset))
    # Candidates are selected on the tail of train; tiny splits reuse all of train for both.
    return (trainset, trainset) if n_val == len(trainset) else (trainset[:-n_val], trainset[-n_val:])


def plan_run(
    spec: TaskSpec,
    budget: Budget,
    trainset: list[dspy.Example],
    devset: list[dspy.Example],
    *,
    optimizer: str,
    demos: int,
    seed: int,
    program: str | Path,
    log_dir: str | Path | None,
) -> Plan:
    """The run's plan for checked arguments; creates GEPA's log dir, refusing one of another split."""
    reflect, val = selection_split(trainset, optimizer)
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
    checkpoint, resumed = prepare(logs, fingerprint) if logs is not None else (None, False)
    return Plan(
        spec=spec,
        optimizer=optimizer,
        budget=budget,
        demos=demos,
        seed=seed,
        trainset=trainset,
        devset=devset,
        reflect=reflect,
        val=val,
        estimate=estimate,
        student=student,
        logs=logs,
        checkpoint=checkpoint,
        resumed=resumed,
    )
