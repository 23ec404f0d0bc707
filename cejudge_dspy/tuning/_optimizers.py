"""The optimizers behind `tuning.optimize`: construction, GEPA's progress and checkpoints.

GEPA gets the feedback metric, the reflection LM and a private checkpoint dir (_checkpoint.py);
MIPROv2 runs zero-shot unless demos are asked for; SIMBA's minibatch is capped at the training split
(it asserts bsize <= |train|).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dspy

from cejudge_dspy.tuning._budget import (
    GEPA_MINIBATCH,
    LEVELS,
    MIPRO_N,
    SIMBA_BSIZE,
    SIMBA_CANDIDATES,
    SIMBA_STEPS,
    Budget,
    CallEstimate,
    gepa_metric_calls,
)
from cejudge_dspy.tuning._checkpoint import Checkpoint

Progress = Callable[[str, int, "int | None"], None]  # (phase, done, total)


def instructions(program: dspy.Module) -> dict[str, str]:
    return {name: p.signature.instructions for name, p in program.named_predictors()}


def with_instructions(program: dspy.Module, candidate: dict[str, str]) -> dspy.Module:
    new = program.deepcopy()
    for name, pred in new.named_predictors():
        if name in candidate:
            pred.signature = pred.signature.with_instructions(candidate[name])
    return new


class GEPAWatcher:
    """GEPA callback: reports budget use and remembers the best fully evaluated candidate."""

    def __init__(self, on_progress: Progress | None, total: int) -> None:
        self.on_progress, self.total = on_progress, total
        self.best: tuple[float, int, dict[str, str]] | None = None

    def on_budget_updated(self, event: dict[str, Any]) -> None:
        if self.on_progress:
            self.on_progress("optimize", int(event["metric_calls_used"]), self.total)

    def on_valset_evaluated(self, event: dict[str, Any]) -> None:
        if event["num_examples_evaluated"] == event["total_valset_size"] and (
            self.best is None or event["average_score"] > self.best[0]
        ):
            self.best = (float(event["average_score"]), int(event["candidate_idx"]), dict(event["candidate"]))


def checkpoint_best(checkpoint: Checkpoint | None) -> tuple[float, int, dict[str, str]] | None:
    """The best fully evaluated candidate in GEPA's checkpoint, which also covers earlier sessions.

    Read only through `Checkpoint.load`, which unpickles nothing whose signature does not check."""
    if checkpoint is None or not checkpoint.exists():
        return None
    try:
        state = checkpoint.load()
        subscores = state["prog_candidate_val_subscores"]
        scored = [
            (sum(s.values()) / len(s), i)
            for i, s in enumerate(subscores)
            if s and len(s) == len(subscores[0])
        ]
    except Exception:  # an unreadable checkpoint must not turn Ctrl-C into a crash
        return None
    if not scored:
        return None
    score, idx = max(scored, key=lambda t: (t[0], -t[1]))  # a tie goes to the earlier (seed) program
    return score, idx, dict(state["program_candidates"][idx])


def build_optimizer(
    name: str,
    *,
    budget: Budget,
    demos: int,
    metric: Any,
    feedback: Any,
    lm: dspy.LM,
    reflection_lm: dspy.LM,
    seed: int,
    num_threads: int,
    checkpoint: Checkpoint | None,
    watcher: GEPAWatcher,
    reflect: list[dspy.Example],
    val: list[dspy.Example],
    options: dict[str, Any],
) -> tuple[Callable[[dspy.Module], dspy.Module], dict[str, Any]]:
    """The configured optimizer as `compile(student) -> program`, plus its JSON-able settings."""
    level = budget if isinstance(budget, str) else None
    if name == "gepa":
        settings: dict[str, Any] = {
            "max_metric_calls": gepa_metric_calls(level, len(val)) if level else budget,
            "reflection_minibatch_size": GEPA_MINIBATCH,
            "seed": seed,
            **options,
        }
        gepa = dspy.GEPA(
            metric=feedback,
            reflection_lm=reflection_lm,
            num_threads=num_threads,
            # gepa's run dir is the private one; the checkpoint signs each state gepa saves there.
            log_dir=str(checkpoint.dir) if checkpoint else None,
            gepa_kwargs={"callbacks": [c for c in (checkpoint, watcher) if c is not None]},
            **settings,
        )
        return (lambda s: gepa.compile(s, trainset=reflect, valset=val)), settings
    if name == "mipro":
        settings = {
            "auto": level,
            "num_candidates": None if level else MIPRO_N[0],
            "seed": seed,
            "max_bootstrapped_demos": demos,
            "max_labeled_demos": 0,
            **options,
        }
        mipro = dspy.MIPROv2(
            metric=metric,
            prompt_model=reflection_lm,
            task_model=lm,
            num_threads=num_threads,
            metric_threshold=1.0 if demos else None,
            verbose=False,
            **settings,
        )
        run: dict[str, Any] = (
            {}
            if level
            else {"num_trials": budget, "minibatch": len(val) > 35, "minibatch_size": min(35, len(val))}
        )
        settings.update(run)
        return (lambda s: mipro.compile(s, trainset=reflect, valset=val, **run)), settings
    bsize = min(SIMBA_BSIZE, len(reflect))
    steps = SIMBA_STEPS[LEVELS[level]] if level else budget
    settings = {
        "bsize": bsize,
        "num_candidates": SIMBA_CANDIDATES,
        "max_steps": steps,
        "max_demos": demos,
        **options,
    }
    # SIMBA shows the metric's feedback to its rule writer as "reward info".
    simba = dspy.SIMBA(metric=feedback, prompt_model=reflection_lm, num_threads=num_threads, **settings)
    return (lambda s: simba.compile(s, trainset=reflect, seed=seed)), {**settings, "seed": seed}


def counting(
    metric: Callable[..., Any], on_progress: Progress | None, estimate: CallEstimate
) -> Callable[..., Any]:
    """The metric, reporting program runs as optimizer progress (GEPA reports through its callback)."""
    done = [0]

    def counted(
        gold: Any, pred: Any, trace: Any = None, pred_name: str | None = None, pred_trace: Any = None
    ) -> Any:
        if pred_name is None:  # GEPA's per-stage feedback calls re-score a run already counted
            done[0] += 1
            if on_progress and estimate.optimizer != "gepa":
                on_progress("optimize", done[0], estimate.program_runs)
        return metric(gold, pred, trace, pred_name, pred_trace)

    counted.__name__ = getattr(metric, "__name__", "metric")
    return counted
