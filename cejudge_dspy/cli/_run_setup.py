"""Everything `cejudge evaluate` checks before it writes or judges anything, and the run's identity.

Options are checked first (one line each), then the backbone spec (no model is loaded), then the program
(method, translator, saved program and manifest), then the data. Only then does a run directory open, so a
typo never leaves a run.json behind. `run_identity` is what `run.json` records and a resume compares.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cejudge_dspy.backbones import check_backbone, is_local
from cejudge_dspy.cli._common import backbone_options, repeat_penalty
from cejudge_dspy.errors import InputError
from cejudge_dspy.judges.cejudge import reference_default
from cejudge_dspy.tasks import TaskSpec

# (flag, attribute, smallest allowed value, what it is)
_BOUNDS = (
    ("--concurrency", "concurrency", 1, "items in flight"),
    ("--bootstrap", "bootstrap", 0, "bootstrap resamples (0: no intervals)"),
    ("--limit", "limit", 1, "items"),
    ("--max-tokens", "max_tokens", 1, "tokens"),
    ("--temperature", "temperature", 0.0, "a sampling temperature"),
    ("--tie-band", "tie_band", 0.0, "a width in probability"),
    ("--grade-margin", "grade_margin", 0.0, "a gap in expected grade"),
)


def graded_run(args: argparse.Namespace, spec: TaskSpec) -> bool:
    """Whether the run's program has a judgment choice: CE-Judge on a pairwise task."""
    return args.method == "cejudge" and spec.mode == "pairwise"


def referenced(args: argparse.Namespace, spec: TaskSpec) -> bool:
    """Whether the run's program can take --reference: CE-Judge's graded pairwise judgment, or its
    pointwise judge."""
    if args.method != "cejudge":
        return False
    return spec.mode == "pointwise" or getattr(args, "judgment", "graded") == "graded"


def english_reference(args: argparse.Namespace, spec: TaskSpec) -> str | None:
    """The stage whose text a pointwise CE-Judge run's judgment reads as its reference into English: stage 2's
    translation of the source when the LLM translates, else the reference stage's own (pointwise.py). None
    when the judgment writes no reference: --no-reference, or --judge-on translated (English texts)."""
    if spec.mode != "pointwise" or not referenced(args, spec) or not reference_of(args, spec):
        return None
    if getattr(args, "judge_on", "original") != "original":
        return None
    return "translate" if args.translator == "llm" else "reference translation"


def reference_of(args: argparse.Namespace, spec: TaskSpec) -> bool:
    """--reference / --no-reference, or the judge's default (on for pointwise, off for pairwise)."""
    chosen = getattr(args, "reference", None)
    return reference_default(spec.mode) if chosen is None else bool(chosen)


def check_options(args: argparse.Namespace) -> None:
    """Numeric flags out of range are one line each, before anything runs."""
    for flag, attr, low, what in _BOUNDS:
        value = getattr(args, attr, None)
        if value is not None and value < low:
            raise InputError(f"must be at least {low} ({what}), got {value}", field=flag)
    if getattr(args, "tie_band", 0.0) >= 1.0:
        raise InputError(f"must be below 1 (a width in probability), got {args.tie_band}", field="--tie-band")
    if getattr(args, "grade_margin", 0.0) > 1.0:
        raise InputError(
            f"must be at most 1 (a gap in expected grade), got {args.grade_margin}", field="--grade-margin"
        )


def language_checked(args: argparse.Namespace, spec: TaskSpec) -> bool:
    """Whether the run's program has a response-language check: CE-Judge on a task that declares it."""
    return args.method == "cejudge" and spec.mode == "pointwise" and spec.check_response_language


def likelihood_checked(args: argparse.Namespace, spec: TaskSpec) -> bool:
    """Whether the run's program has the translation-likelihood check: CE-Judge on a task declaring it."""
    return args.method == "cejudge" and spec.mode == "pointwise" and spec.check_translation_likelihood


def check_program_options(args: argparse.Namespace, spec: TaskSpec) -> None:
    """An ablation flag for a method or task it does not apply to is one line, not silently ignored."""
    ablated = [
        flag
        for flag, on in (
            ("--no-concepts", getattr(args, "no_concepts", False)),
            ("--directions", getattr(args, "directions", "both") != "both"),
            ("--judge-on", getattr(args, "judge_on", "original") != "original"),
        )
        if on
    ]
    if ablated and args.method != "cejudge":
        raise InputError(
            f"is an ablation of CE-Judge; --method {args.method} has no such stage", field=ablated[0]
        )
    if (answers := getattr(args, "answers", None)) is not None and not (
        args.method == "cejudge" and spec.mode == "pointwise"
    ):
        raise InputError(
            f"is for CE-Judge's pointwise judgment; task '{spec.name}' with --method {args.method} has none "
            "(the graded pairwise judgment writes no answers, the paper's pairwise judgment always does)",
            field="--answers" if answers else "--no-answers",
        )
    if getattr(args, "reference", None) is not None and not referenced(args, spec):
        raise InputError(
            f"needs CE-Judge with the graded judgment (pairwise) or a pointwise task; task '{spec.name}' "
            f"with --method {args.method} --judgment {getattr(args, 'judgment', 'graded')} has no stage to "
            "give it to",
            field="--reference" if args.reference else "--no-reference",
        )
    if getattr(args, "language_check", None) is not None and not language_checked(args, spec):
        raise InputError(
            f"task '{spec.name}' with --method {args.method} has no response-language check (CE-Judge on a "
            "pointwise task that declares check_response_language)",
            field="--language-check",
        )
    if getattr(args, "likelihood_check", None) is not None and not likelihood_checked(args, spec):
        raise InputError(
            f"task '{spec.name}' with --method {args.method} has no translation-likelihood check (CE-Judge "
            "on a pointwise task that declares check_translation_likelihood)",
            field="--likelihood-check",
        )


def check_lm(args: argparse.Namespace) -> None:
    """The backbone flags, checked without loading a model (see backbones.check_backbone)."""
    check_backbone(args.lm, **backbone_options(args))


def run_identity(
    args: argparse.Namespace,
    spec: TaskSpec,
    program: str,
    data_sha256: str,
    fields: dict[str, str],
    constants: dict[str, str],
    prompts: str | None = None,
) -> dict[str, Any]:
    """Everything that changes a run's records (evaluation.run_dir.IDENTITY_KEYS), plus where the data is
    and, not compared on resume, the preset the options came from and the run's headline metric."""
    cejudge = args.method == "cejudge"
    return {
        "task": spec.name,
        "task_version": spec.version,
        "method": args.method,
        "program": program,
        # methods.fingerprint: the stages' prompts, so an upgrade that edits one never resumes this run.
        "prompts": prompts,
        "lm": args.lm,
        "api_base": args.api_base,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "constrained": bool(args.constrained),
        # llama.cpp's sampler setting: only local GGUF models have one.
        "repeat_penalty": repeat_penalty(args) if is_local(args.lm) else None,
        "orders": args.orders,
        "decision": getattr(args, "decision", "probability"),
        "tie_band": getattr(args, "tie_band", 0.0),
        # Only CE-Judge's pairwise judge has a graded judgment; other runs record None.
        "judgment": getattr(args, "judgment", None) if graded_run(args, spec) else None,
        "grade_margin": getattr(args, "grade_margin", None) if graded_run(args, spec) else None,
        "tie_breaker": getattr(args, "tie_breaker", None) if graded_run(args, spec) else None,
        "reference": reference_of(args, spec) if referenced(args, spec) else None,
        "english_reference": english_reference(args, spec),
        "translator": args.translator,
        # The ablations: None for methods without CE-Judge's stages (see check_program_options).
        "concepts": not args.no_concepts if cejudge else None,
        "directions": args.directions if cejudge else None,
        "judge_on": args.judge_on if cejudge else None,
        "answers": bool(getattr(args, "answers", None)) if cejudge and spec.mode == "pointwise" else None,
        "language_check": args.language_check != "off" if language_checked(args, spec) else None,
        "likelihood_check": (
            getattr(args, "likelihood_check", None) != "off" if likelihood_checked(args, spec) else None
        ),
        "data": str(Path(args.data).expanduser().resolve()) if args.data else None,
        "data_sha256": data_sha256,
        "fields": fields,
        "constants": constants,
        "languages": sorted(args.language) if args.language else None,
        "subsets": sorted(args.subset) if args.subset else None,
        "limit": args.limit,
        "seed": args.seed,
        "shard": args.shard,
        "preset": getattr(args, "preset", None),
        "headline": getattr(args, "headline", None),
    }
