"""What `evaluate` checks before anything is written (a typo never leaves a run behind): the run's own
options, its run directory, and a backbone spec with its options, key and method."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.errors import InputError
from cejudge_dspy.evaluate._options import CONFIDENCE_CHOICES, EvaluateOptions, check_bound


def check_options(options: EvaluateOptions) -> None:
    """The run's own options, one line each, before anything runs: numbers in bounds, a run directory that
    can be one, a shard, a Ray run without a panel and with a cluster that answers."""
    if not options.task:
        raise InputError("is required for evaluate", option="task")
    for name in ("concurrency", "bootstrap", "limit", "first", "abstain_below"):
        check_bound(name, getattr(options, name))
    if options.limit is not None and options.first is not None:
        raise InputError(
            "and first are exclusive: a sample of N, or the first N in file order", option="limit"
        )
    if options.confidence not in CONFIDENCE_CHOICES:
        raise InputError(
            f"must be one of {', '.join(CONFIDENCE_CHOICES)}, got {options.confidence!r}", option="confidence"
        )
    if options.shard is not None:
        k, n = options.shard
        if not 1 <= k <= n:
            raise InputError(f"expected (K, N) with 1 <= K <= N, got {options.shard}", option="shard")
    if options.out is not None:
        check_out(Path(options.out) if str(options.out).strip() else None)
    if options.ray is not None:
        if options.panel is not None:
            raise InputError("judges one judge per run; run a panel without ray", option="ray")
        check_bound("ray_actors", options.ray.actors)
        check_bound("ray_cpus_per_actor", options.ray.cpus_per_actor)
        from cejudge_dspy.evaluate._cluster import check_ray_address

        check_ray_address(options.ray.address)  # before the run directory opens: nothing left behind


def check_out(out: Path | None, option: str = "out") -> None:
    """A run directory is an existing directory, or a path whose missing folders are created (like
    `mkdir -p`, as runs.lock does); a file, a device such as /dev/null, a path under a file or a folder this
    process cannot write is one line before anything is written, and so is an empty name (None: `--out ""`
    would otherwise mean the default directory, silently)."""
    if out is None:
        raise InputError("is empty; name a run directory, or leave it out for the default", option=option)
    for path in (out, *out.parents):
        if not os.path.lexists(path):
            continue
        if path == out and not path.is_dir():
            raise InputError(f"{out} exists and is not a directory; name a run directory", option=option)
        if not path.is_dir():
            raise InputError(f"{out} cannot be made: {path} is not a directory", option=option)
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(f"{out} cannot be written: {path} is not writable", option=option)
        return


def check_api_key(lm: Any, api_key: str | None, api_base: str | None) -> None:
    """An `openai/` model with no key to send: DSPy's native route fails on the first call, which comes
    after the run directory opened. A local OpenAI-compatible server (api_base) may take no key."""
    from cejudge_dspy.errors import BackboneError

    if not isinstance(lm, str) or not lm.strip().startswith("openai/"):
        return
    if not (api_key or api_base or os.environ.get("OPENAI_API_KEY")):
        raise BackboneError(
            f"backbone '{lm.strip()}' has no API key; pass --api-key or set OPENAI_API_KEY "
            "(or --api-base for a local OpenAI-compatible server)"
        )


def check_backbone_spec(backbone: BackboneOptions, method: str) -> None:
    """The backbone and its settings, checked without loading a model (backbones.check_backbone), its
    API key, and whether the method can run on that backbone at all (`likelihood` scores texts)."""
    from cejudge_dspy.backbones import check_backbone
    from cejudge_dspy.judges import check_method_backbone

    check_backbone(backbone.lm, **backbone.kwargs())
    check_api_key(backbone.lm, backbone.api_key, backbone.api_base)
    check_method_backbone(method, backbone.lm, backbone.api_base)
