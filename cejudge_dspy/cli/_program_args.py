"""The program flags of `cejudge judge` and `cejudge evaluate`: the method, its options and CE-Judge's
ablations, and the options a run's program is built with (the same on the driver and on every worker)."""

from __future__ import annotations

import argparse
from typing import Any

from cejudge_dspy.judges.cejudge import DEFAULT_TIE_BREAKER, TIE_BREAKERS
from cejudge_dspy.judges.verdicts import DEFAULT_GRADE_MARGIN, DEFAULT_TIE_BAND


def add_program_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("program")
    g.add_argument("--task", default=None, help="declared task (see `cejudge tasks`)")
    g.add_argument("--method", default="cejudge", help="cejudge (default), direct, checkeval, geval")
    g.add_argument("--translator", default="llm", help="llm (offline default), google, none")
    g.add_argument(
        "--orders",
        default="both",
        choices=("both", "single"),
        help="pairwise: judge A/B and B/A (default) or only A/B as the paper did",
    )
    g.add_argument(
        "--decision",
        default="probability",
        choices=("probability", "argmax"),
        help="what decides a verdict or score: the judge's token probabilities (default; the argmax where a "
        "backbone gives none, said once) or its argmax answer; records keep both",
    )
    g.add_argument(
        "--tie-band",
        type=float,
        default=DEFAULT_TIE_BAND,
        help=f"pairwise, --decision probability: a tie when p(A) is within half this of 0.5 "
        f"(default {DEFAULT_TIE_BAND}; `cejudge calibrate DEV_RUN` picks one)",
    )
    g.add_argument(
        "--judgment",
        default="graded",
        choices=("graded", "pairwise"),
        help="CE-Judge pairwise: grade each response on its own and let the pairwise judgment (both "
        "orders) decide only pairs whose grades tie (graded, default), or the paper's pairwise judgment "
        "for every pair",
    )
    g.add_argument(
        "--grade-margin",
        type=float,
        default=DEFAULT_GRADE_MARGIN,
        help=f"--judgment graded, --decision probability: the gap between the two expected grades that "
        f"the grades must exceed to decide a pair without the tie-breaker (default {DEFAULT_GRADE_MARGIN}; "
        "0: any difference)",
    )
    g.add_argument(
        "--tie-breaker",
        default=DEFAULT_TIE_BREAKER,
        choices=TIE_BREAKERS,
        help="--judgment graded: what decides a pair whose expected grades are within --grade-margin: the "
        "backbone's likelihood of each response as its own answer (default; local GGUF backbones, the "
        "grades alone elsewhere) or the pairwise judgment in both orders",
    )
    g.add_argument(
        "--reference",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="CE-Judge: the judge first writes its own short answer to the instruction (pairwise, --judgment "
        "graded: both grades read it) or its own translation of the source (pointwise translation items: the "
        "judgment reads it); one more LM call per item. Default: on for pointwise, off for pairwise (README, "
        '"The embedded judge on obvious items")',
    )
    g.add_argument(
        "--program",
        default="auto",
        help="auto (tuned program from optimized/ when present), base, or a saved program path",
    )
    add_ablation_args(p)


def add_ablation_args(p: argparse.ArgumentParser) -> None:
    """CE-Judge's design choices as switches (defaults: the method as designed; see README "Ablations")."""
    g = p.add_argument_group("ablations (CE-Judge)")
    g.add_argument(
        "--no-concepts",
        action="store_true",
        help="no concepts stage: both checklist directions are written without concepts",
    )
    g.add_argument(
        "--directions",
        default="both",
        choices=("both", "r2i", "i2r"),
        help="checklist directions: both (default), only response->instruction (r2i) or only "
        "instruction->response (i2r)",
    )
    g.add_argument(
        "--judge-on",
        default="original",
        choices=("original", "translated"),
        help="the texts the judgment reads: the originals (default) or their English translations",
    )
    g.add_argument(
        "--answers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="pointwise: the judgment writes its answers to the checklist before its feedback (the paper's "
        "step); default off since 3 December 2026: it reads the checklist and answers it for itself (fewer "
        'tokens, the same scores; README "Ablations")',
    )
    g.add_argument(
        "--language-check",
        default=None,
        choices=("on", "off"),
        help="pointwise tasks that declare it: give a response surely in the wrong language the lowest "
        "level without an LLM call (default on)",
    )
    g.add_argument(
        "--likelihood-check",
        default=None,
        choices=("on", "off"),
        help="pointwise translation tasks that declare it, on local GGUF backbones: give a translation the "
        "backbone finds implausible for its source (word salad) the lowest level without an LLM judgment "
        "(default on)",
    )


def program_options(args: argparse.Namespace) -> dict[str, Any]:
    """The method options a run's program is built with (the same on the driver and on every worker)."""
    return {
        "translator": args.translator,
        "orders": args.orders,
        "decision": getattr(args, "decision", "probability"),
        "tie_band": getattr(args, "tie_band", DEFAULT_TIE_BAND),
        "judgment": getattr(args, "judgment", "graded"),
        "grade_margin": getattr(args, "grade_margin", DEFAULT_GRADE_MARGIN),
        "tie_breaker": getattr(args, "tie_breaker", DEFAULT_TIE_BREAKER),
        "reference": getattr(args, "reference", None),
        "concepts": not getattr(args, "no_concepts", False),
        "directions": getattr(args, "directions", "both"),
        "judge_on": getattr(args, "judge_on", "original"),
        "answers": bool(getattr(args, "answers", None)),
        "language_check": getattr(args, "language_check", None) != "off",
        "likelihood_check": getattr(args, "likelihood_check", None) != "off",
    }
