"""Everything `cejudge evaluate` checks before it writes or judges anything, and the run's identity.

Options are checked first (one line each), then the backbone spec (no model is loaded), then the program
(method, translator, saved program and manifest), then the data. Only then does a run directory open, so a
typo never leaves a run.json behind. `run_identity` is what `run.json` records and a resume compares.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._common import (
    adapter_choice,
    backbone_options,
    check_api_key,
    check_bounds,
    repeat_penalty,
)
from cejudge_dspy.cli._program_args import judge_options
from cejudge_dspy.cli._run_args import BOOTSTRAP, CONCURRENCY, FIRST, LIMIT
from cejudge_dspy.cli._selective import ABSTAIN_BELOW
from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import TaskSpec

# The run's numeric flags (_run_args.py's, --abstain-below; the backbone's are _common.BACKBONE_BOUNDS,
# the judge's JudgeOptions').
RUN_BOUNDS = (CONCURRENCY, BOOTSTRAP, LIMIT, FIRST, ABSTAIN_BELOW)


def check_options(args: argparse.Namespace) -> None:
    """Numeric flags out of range are one line each, and so is an --out that cannot be a run directory,
    before anything runs."""
    check_bounds(args, RUN_BOUNDS)
    judge_options(args).check_bounds()
    if getattr(args, "out", None) is not None:
        check_out(Path(args.out) if args.out.strip() else None)


def check_out(out: Path | None, flag: str = "--out") -> None:
    """A run directory is an existing directory, or a path whose missing folders are created (like
    `mkdir -p`, as runs.lock does); a file, a device such as /dev/null, a path under a file or a folder this
    process cannot write is one line before anything is written, and so is an empty name (None: `--out ""`
    would otherwise mean the default directory, silently)."""
    if out is None:
        raise InputError("is empty; name a run directory, or leave --out out for the default", field=flag)
    for path in (out, *out.parents):
        if not os.path.lexists(path):
            continue
        if path == out and not path.is_dir():
            raise InputError(f"{out} exists and is not a directory; name a run directory", field=flag)
        if not path.is_dir():
            raise InputError(f"{out} cannot be made: {path} is not a directory", field=flag)
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(f"{out} cannot be written: {path} is not writable", field=flag)
        return


def check_program_options(args: argparse.Namespace, spec: TaskSpec) -> None:
    """An option for a method or task it does not apply to is one line, not silently ignored
    (JudgeOptions.check)."""
    judge_options(args).check(spec)


def check_lm(args: argparse.Namespace) -> None:
    """The backbone flags, checked without loading a model (see backbones.check_backbone), and whether the
    method can run on that backbone at all (judges.check_method_backbone: `likelihood` scores texts)."""
    from cejudge_dspy.backbones import check_backbone
    from cejudge_dspy.judges import check_method_backbone

    check_backbone(args.lm, **backbone_options(args))
    check_api_key(args)
    check_method_backbone(args.method, args.lm, args.api_base)


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
    from cejudge_dspy.backbones import is_local

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
        # llama.cpp's sampler setting: only local GGUF models have one.
        "repeat_penalty": repeat_penalty(args) if is_local(args.lm) else None,
        # The prompt format as asked (auto, chat, json); what it resolved to is in each record's features.
        "adapter": adapter_choice(args),
        # A panel's members (cli/_panel.py sets it, with `method` "panel"); one judge: None.
        "panel": None,
        **judge_options(args).identity(spec),
        "data": str(Path(args.data).expanduser().resolve()) if args.data else None,
        "data_sha256": data_sha256,
        # How items are named (runs.LATER_KEYS has the scheme before it): a local file's `id` column
        # when it has one, else <file stem>/<row index>.
        "id_scheme": "id column",
        "fields": fields,
        "constants": constants,
        "languages": sorted(args.language) if args.language else None,
        "subsets": sorted(args.subset) if args.subset else None,
        "limit": args.limit,
        "first": getattr(args, "first", None),
        "seed": args.seed,
        "shard": args.shard,
        "preset": getattr(args, "preset", None),
        "headline": getattr(args, "headline", None),
    }
