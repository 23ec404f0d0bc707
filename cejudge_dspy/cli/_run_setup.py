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
from cejudge_dspy.cli._program_args import judge_options
from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import TaskSpec

# (flag, attribute, smallest allowed value, what it is)
_BOUNDS = (
    ("--concurrency", "concurrency", 1, "items in flight"),
    ("--bootstrap", "bootstrap", 0, "bootstrap resamples (0: no intervals)"),
    ("--limit", "limit", 1, "items"),
    ("--max-tokens", "max_tokens", 1, "tokens"),
    ("--temperature", "temperature", 0.0, "a sampling temperature"),
)


def check_options(args: argparse.Namespace) -> None:
    """Numeric flags out of range are one line each, before anything runs."""
    for flag, attr, low, what in _BOUNDS:
        value = getattr(args, attr, None)
        if value is not None and value < low:
            raise InputError(f"must be at least {low} ({what}), got {value}", field=flag)
    judge_options(args).check_bounds()


def check_program_options(args: argparse.Namespace, spec: TaskSpec) -> None:
    """An option for a method or task it does not apply to is one line, not silently ignored
    (JudgeOptions.check)."""
    judge_options(args).check(spec)


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
    """Everything that changes a run's records (runs.IDENTITY_KEYS; the judge's options come from
    JudgeOptions), plus where the data is and, not compared on resume, the preset the options came from
    and the run's headline metric."""
    return {
        "task": spec.name,
        "task_version": spec.version,
        "method": args.method,
        "program": program,
        # judges.prompt_fingerprint: the stages' prompts, so an upgrade that edits one never resumes this run.
        "prompts": prompts,
        "lm": args.lm,
        "api_base": args.api_base,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "constrained": bool(args.constrained),
        # llama.cpp's sampler setting: only local GGUF models have one.
        "repeat_penalty": repeat_penalty(args) if is_local(args.lm) else None,
        **judge_options(args).identity(spec),
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
