"""Scoring a program on a split: the dev score `optimize` reports before and after tuning, and the
training anchors of the pointwise ranking metric.

Both are one `dspy.Evaluate` pass inside a judging run, so they live apart from the optimizer loop
(_optimize.py) and from the report that carries their results (_report.py). An unparsed item scores 0
and never aborts a pass; its prediction is kept as None, so a held-out comparison can pair items.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dspy

from cejudge_dspy.judges import judging_run
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.tuning._feedback import result_of
from cejudge_dspy.tuning._metrics import metric_for, pairwise_concordance
from cejudge_dspy.tuning._optimizers import Progress
from cejudge_dspy.tuning._ranking import Anchor


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
    from cejudge_dspy.metrics import accuracy

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
    with judging_run():  # a dev pass is a judging run (`judges.judging_run`)
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
