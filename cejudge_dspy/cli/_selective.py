"""The selective-judging flags shared by `evaluate` and `calibrate` (metrics/_selective.py): the
confidence an item's order comes from, and the threshold below which an item is left to a person.

Neither is part of a run's identity: they change what a summary reports, not what the judge asked the
LM, so `cejudge evaluate` with the same flags and a new `--abstain-below` resumes the run, judges
nothing, and rewrites summary.json with the new threshold."""

from __future__ import annotations

import argparse

from cejudge_dspy.evaluate import BOUNDS, CONFIDENCE_CHOICES

ABSTAIN_BELOW = BOUNDS["abstain_below"]


def add_selective_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--abstain-below",
        type=float,
        metavar="X",
        help="leave the items whose confidence is below X (or unknown) to a person: reported as "
        "`abstained`, counted and listed, out of the metrics; applied to the records when summarising, "
        f"so an existing run can be re-thresholded ({ABSTAIN_BELOW.describe()}; pairwise confidence "
        "|p(A) - 0.5| is at most 0.5)",
    )
    p.add_argument(
        "--confidence",
        choices=CONFIDENCE_CHOICES,
        default="auto",
        help="what orders items for selective judging: margin (pairwise |p(A) - 0.5|, pointwise the "
        "probability of the most likely level), agreement (a panel's, where records carry one), both "
        "(their product); auto (default): what the records carry",
    )
