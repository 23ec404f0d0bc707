"""Budgets, LM-call estimates and data splits for `tuning.optimize`.

`estimate_calls` is an upper bound (no retries, no shared-work savings), shown before a run starts:
    total = R x k_train + 2 x |dev| x k_dev + P  (+ |train| x k_train pointwise: the ranking anchors)
k: LM calls per item (pairwise 9 = 3 concepts + 4 checklists + 2 orders, +3 translations when not
English; pointwise 5 = 2 concepts + 2 checklists + 1 score, +1 per non-English text). The dev split is
run twice (before and after). R: program runs the optimizer's budget implies; P: its
reflection/prompt-model calls. |val| = |train| // 3 (all of train below 3 items):
    GEPA   R = max_metric_calls: the int budget, or for light/medium/heavy our own preset
           |val| x 2/4/8 + 2 x minibatch 3 x 3/10/30 proposals (see gepa_metric_calls);
           P = (R - |val|) / (2 x minibatch 3), one proposal per iteration at most
    MIPRO  R = (T + 1) |val|, or 35 T + |val| (T // 5 + 2) with minibatches (|val| > 50 auto, > 35 int),
           plus n x |reflect| bootstrap runs (|reflect| = |train| - |val|); T = the int budget or
           max(2 x 5 log2 n, 1.5 n), n = 6/12/18 (6 for int budgets); P = 3 x 5 n + |reflect| / 10 + 1
    SIMBA  R = S x B x (2C + 1) + (C + 1) |train| with S = 4/8/12 or the int budget, C = 6,
           B = min(32, |train|); P = S x C
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import dspy

from cejudge_dspy.data import is_english
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.tuning._choices import OPTIMIZERS

Budget = Literal["light", "medium", "heavy"] | int
LEVELS = {"light": 0, "medium": 1, "heavy": 2}
GEPA_N, MIPRO_N, SIMBA_STEPS = (6, 12, 18), (6, 12, 18), (4, 8, 12)
MIPRO_VAL_CAP, SIMBA_CANDIDATES, SIMBA_BSIZE, GEPA_MINIBATCH = (100, 300, 1000), 6, 32, 3
STAGES = 5  # predictors in a CE-Judge program
# GEPA presets are ours, in metric calls: full validation passes plus proposals tried on minibatches.
# DSPy's own `auto` presets size for hosted APIs (GEPA auto="light" on 6 items is ~1,800 program runs,
# ~13k LM calls: most of a day for a 1.5B model on 2 CPU cores); an int budget is always exact.
GEPA_PASSES, GEPA_PROPOSALS = (2, 4, 8), (3, 10, 30)


def gepa_metric_calls(level: str, n_val: int) -> int:
    """GEPA's max_metric_calls for a budget level: |val| x passes + 2 x minibatch x proposals."""
    i = LEVELS[level]
    return n_val * GEPA_PASSES[i] + 2 * GEPA_MINIBATCH * GEPA_PROPOSALS[i]


@dataclass(frozen=True)
class CallEstimate:
    optimizer: str
    program_runs: int
    calls_per_train_item: float
    calls_per_dev_item: float
    dev_runs: int
    prompt_calls: int
    total: int

    def describe(self) -> str:
        return (
            f"~{self.total:,} LM calls: {self.program_runs:,} program runs x {self.calls_per_train_item:.1f} "
            f"+ {self.dev_runs} dev runs x {self.calls_per_dev_item:.1f} + {self.prompt_calls:,} "
            f"{'reflection' if self.optimizer == 'gepa' else 'prompt-model'} calls"
        )


def parse_budget(value: str | int) -> Budget:
    if isinstance(value, int) or str(value).strip().isdigit():
        if int(value) < 1:
            raise InputError("must be light, medium, heavy or a positive integer", field="budget")
        return int(value)
    if value not in LEVELS:
        raise InputError(f"{value!r} is not light, medium, heavy or a positive integer", field="budget")
    return value  # type: ignore[return-value]


def calls_per_item(spec: TaskSpec, example: Any) -> int:
    lang = getattr(example, "language", "en") or "en"
    foreign = not is_english(lang)
    if spec.mode == "pairwise":
        return 9 + 3 * foreign
    response_lang = getattr(example, "response_language", None) or lang
    return 5 + foreign + (not is_english(response_lang))


def _mean_calls(spec: TaskSpec, items: Sequence[Any] | int) -> tuple[int, float]:
    if isinstance(items, int):  # sizes only: assume non-English (the upper bound)
        return items, float(calls_per_item(spec, dspy.Example(language="xx")))
    return len(items), sum(calls_per_item(spec, ex) for ex in items) / max(len(items), 1)


def val_size(n_train: int) -> int:
    """Candidate-selection items carved from the training split (all of it when it is tiny)."""
    return n_train if n_train < 3 else max(1, n_train // 3)


def estimate_calls(
    task: str | TaskSpec,
    trainset: Sequence[Any] | int,
    devset: Sequence[Any] | int,
    *,
    optimizer: str = "gepa",
    budget: Budget = "light",
    demos: int = 0,
) -> CallEstimate:
    """Upper-bound LM calls for a run (formula in the module docstring)."""
    spec, budget = load_task(task), parse_budget(budget)
    n_train, k_train = _mean_calls(spec, trainset)
    n_dev, k_dev = _mean_calls(spec, devset)
    level = LEVELS.get(budget) if isinstance(budget, str) else None
    val = val_size(n_train)
    n_reflect = n_train - val if val < n_train else n_train
    if optimizer == "gepa":
        runs = budget if level is None else gepa_metric_calls(str(budget), val)
        prompts = math.ceil(max(runs - val, 0) / (2 * GEPA_MINIBATCH))
    elif optimizer == "mipro":
        n = MIPRO_N[level] if level is not None else MIPRO_N[0]
        trials = int(max(2 * STAGES * math.log2(n), 1.5 * n)) if level is not None else int(budget)
        val = min(val, MIPRO_VAL_CAP[level]) if level is not None else val
        minibatch = val > (50 if level is not None else 35)
        runs = 35 * trials + val * (trials // 5 + 2) if minibatch else (trials + 1) * val
        runs += n * n_reflect  # demo sets are bootstrapped for the proposer even when zero-shot
        # per candidate and stage: program summary, module summary, instruction; plus data summaries
        prompts = 3 * n * STAGES + math.ceil(n_reflect / 10) + 1
    elif optimizer == "simba":
        steps = SIMBA_STEPS[level] if level is not None else int(budget)
        c, b = SIMBA_CANDIDATES, min(SIMBA_BSIZE, n_train)
        runs, prompts = steps * b * (2 * c + 1) + (c + 1) * n_train, steps * c
    else:
        raise InputError(
            f"unknown optimizer {optimizer!r}; choose {', '.join(OPTIMIZERS)}", field="optimizer"
        )
    # Pointwise runs score the training items once with the starting program (the metric's anchors).
    anchors = n_train * k_train if spec.mode == "pointwise" else 0
    total = math.ceil(runs * k_train + 2 * n_dev * k_dev + prompts + anchors)
    return CallEstimate(optimizer, int(runs), k_train, k_dev, 2 * n_dev, int(prompts), total)


def split_items(
    items: Sequence[Any], n_train: int, n_dev: int, seed: int = 42
) -> tuple[list[dspy.Example], list[dspy.Example], dict[str, int]]:
    """Shuffle labelled items with `seed` and cut train then dev; unlabelled items and gold ties
    (which carry no signal for the pairwise metric) are dropped and counted."""
    kept, dropped = [], {"unlabelled": 0, "gold_tie": 0}
    for item in items:
        if item.label is None:
            dropped["unlabelled"] += 1
        elif item.mode == "pairwise" and str(item.label).lower() == "tie":
            dropped["gold_tie"] += 1
        else:
            kept.append(item)
    if len(kept) < n_train + n_dev:
        raise DataError(
            f"only {len(kept)} labelled items (dropped {dropped}) for --train {n_train} "
            f"--dev {n_dev}; lower them or point --data at more items"
        )
    random.Random(seed).shuffle(kept)
    return (
        [i.to_example() for i in kept[:n_train]],
        [i.to_example() for i in kept[n_train : n_train + n_dev]],
        dropped,
    )
