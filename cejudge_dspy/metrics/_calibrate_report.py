"""`calibrate(run)`: how well a pairwise run's p(A) is calibrated and the tie band that fits its items
best (run it on a dev split), and for any run with a confidence the selective-judging section; what
`cejudge calibrate RUN` prints. It reads the run and writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import Option
from cejudge_dspy.metrics._calibration import calibrate_run
from cejudge_dspy.metrics._compare import load_run
from cejudge_dspy.metrics._selective import CONFIDENCES, selective_summary
from cejudge_dspy.tasks import load_task

# Confidence bins over [0.5, 1]: beyond 100 a bin is narrower than 0.005 and holds next to no item.
MAX_BINS = 100
ABSTAIN_BELOW = Option(flag="--abstain-below", help="", kind="number", low=0, high=1, what="a confidence")


def calibrate(
    run: str | Path, *, bins: int = 5, confidence: str = "auto", abstain_below: float | None = None
) -> dict[str, Any]:
    """The calibration report of the run directory `run`: `run`, `task`, the reliability bins and the
    chosen tie band (pairwise runs with p(A) and gold labels), and `selective` (None when no record has
    a confidence and no threshold was asked for). A run with neither is one line saying why."""
    path = Path(run)
    if not path.is_dir():
        raise InputError(f"{path} is not a run directory", option="run")
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_BINS:
        raise InputError(f"must be from 1 to {MAX_BINS} (confidence bins), got {bins}", option="bins")
    if abstain_below is not None and (problem := ABSTAIN_BELOW.problem(abstain_below)) is not None:
        raise InputError(problem, option="abstain_below")
    if confidence not in CONFIDENCES:
        raise InputError(f"must be one of {', '.join(CONFIDENCES)}, got {confidence!r}", option="confidence")
    config, records = load_run(path)
    task = config.get("task") or (records[0].task if records else None)
    if not task:
        raise InputError(f"{path}: neither run.json nor a record names the task", option="run")
    spec = load_task(task)
    selective = selective_summary(records, spec.mode, confidence=confidence, abstain_below=abstain_below)
    if selective["n"] == selective["n_without_confidence"] and abstain_below is None:
        selective = None
    head = {"run": str(path), "task": spec.name}
    if spec.mode != "pairwise":
        if selective is None:
            raise InputError(
                f"{path} judges the pointwise task '{spec.name}' and no record has a confidence (a score "
                "distribution); calibrate reads pairwise p(A), or a pointwise run's token probabilities"
            )
        return head | {"selective": selective}
    report = calibrate_run(records, n_bins=bins)
    choice = report["tie_band_on_these_items"]
    if not choice["n"] and selective is not None and selective["n"] > selective["n_without_confidence"]:
        # No p(A), but another confidence (a panel's agreement): the selective section alone.
        return head | {"selective": selective}
    if not choice["n"]:
        statuses = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report["probabilities"].items())
        raise InputError(
            f"{path}: no record has p(A) and a gold A, B or tie label (probabilities: {statuses or 'none'}); "
            "rerun on a backbone that returns token probabilities"
        )
    return head | report | {"selective": selective}
