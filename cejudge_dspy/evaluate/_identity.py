"""A run's identity: what `run.json` records and a resume compares (runs.IDENTITY_KEYS), built from typed
options. `evaluate` builds one per run, `consistency` one per child run, so both record a run alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.tasks import TaskSpec

# make_lm's defaults for the backbone options a run identity records (a caller's `lm_options` may omit them).
BACKBONE_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 1024, "adapter": "auto"}


def backbone_setting(lm_options: Mapping[str, Any], name: str) -> Any:
    """One backbone option as the run uses it: given, else make_lm's default."""
    if name == "repeat_penalty":
        from cejudge_dspy.backbones import DEFAULT_REPEAT_PENALTY

        given = lm_options.get("repeat_penalty")
        return DEFAULT_REPEAT_PENALTY if given is None else float(given)
    return lm_options.get(name, BACKBONE_DEFAULTS.get(name))


def run_identity(
    spec: TaskSpec,
    judge: JudgeOptions,
    *,
    program: str,
    lm: str,
    lm_options: Mapping[str, Any],
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
    from cejudge_dspy.backbones import is_local

    return {
        "task": spec.name,
        "task_version": spec.version,
        "method": judge.method,
        "program": program,
        # judges.prompt_fingerprint: the stages' prompts, so an upgrade that edits one never resumes this run.
        "prompts": prompts,
        "lm": lm,
        "api_base": lm_options.get("api_base"),
        "temperature": backbone_setting(lm_options, "temperature"),
        "max_tokens": backbone_setting(lm_options, "max_tokens"),
        "constrained": bool(lm_options.get("constrained")),
        # llama.cpp's sampler setting: only local GGUF models have one.
        "repeat_penalty": backbone_setting(lm_options, "repeat_penalty") if is_local(lm) else None,
        # The prompt format as asked (auto, chat, json); what it resolved to is in each record's features.
        "adapter": backbone_setting(lm_options, "adapter"),
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
