"""A run's identity: what `run.json` records and a resume compares (runs.IDENTITY_KEYS), built from typed
options. `evaluate` builds one per run, `consistency` one per child run, so both record a run alike."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.tasks import TaskSpec


def run_identity(
    spec: TaskSpec,
    judge: JudgeOptions,
    *,
    program: str,
    backbone: BackboneOptions,
    data: str | Path | None,
    data_sha256: str,
    fields: dict[str, str],
    constants: dict[str, str],
    prompts: str | None = None,
    languages: Sequence[str] | None = None,
    subsets: Sequence[str] | None = None,
    limit: int | None = None,
    first: int | None = None,
    seed: int = 42,
    shard: str | None = None,
    preset: str | None = None,
    headline: str | None = None,
) -> dict[str, Any]:
    """Everything that changes a run's records (the judge's options come from JudgeOptions), plus where
    the data is and, not compared on resume, the preset the options came from and the run's headline
    metric."""
    return {
        "task": spec.name,
        "task_version": spec.version,
        "method": judge.method,
        "program": program,
        # judges.prompt_fingerprint: the stages' prompts, so an upgrade that edits one never resumes this run.
        "prompts": prompts,
        # The backbone's settings that change records (BackboneOptions.identity), in run.json's order.
        **backbone.identity(),
        # A panel's members (evaluate's panel_identity sets it, with `method` "panel"); one judge: None.
        "panel": None,
        **judge.identity(spec),
        "data": str(Path(data).expanduser().resolve()) if data else None,
        "data_sha256": data_sha256,
        # How items are named (runs.LATER_KEYS has the scheme before it): a local file's `id` column
        # when it has one, else <file stem>/<row index>.
        "id_scheme": "id column",
        "fields": fields,
        "constants": constants,
        "languages": sorted(languages) if languages else None,
        "subsets": sorted(subsets) if subsets else None,
        "limit": limit,
        "first": first,
        "seed": seed,
        "shard": shard,
        "preset": preset,
        "headline": headline,
    }
