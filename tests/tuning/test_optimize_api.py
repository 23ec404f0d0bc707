"""`cejudge_dspy.optimize(...)` is what `cejudge optimize` and optimize.py run: typed keyword arguments, its
plan told before anything is tuned (and cancellable), a typed `Optimization` back, on the simulated
backbone."""

from __future__ import annotations

from pathlib import Path

import pytest

import cejudge_dspy
from cejudge_dspy import BackboneOptions
from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import read_manifest
from cejudge_dspy.tuning import Optimization, OptimizePlan
from tests.support.bad_inputs import good_data


def test_optimize_is_on_the_package_face() -> None:
    assert "optimize" in dir(cejudge_dspy) and "BackboneOptions" in dir(cejudge_dspy)
    assert cejudge_dspy.optimize.__module__ == "cejudge_dspy.tuning._task"


def test_optimize_on_the_simulated_backbone_plans_tunes_and_saves(tmp_path: Path) -> None:
    planned: list[OptimizePlan] = []
    phases: set[str] = set()
    out = tmp_path / "chat.json"
    result = cejudge_dspy.optimize(
        "chat",
        data=good_data(tmp_path, 12),
        backbone=BackboneOptions(lm="simulated:0", cache=False, seed=7),
        budget=12,
        train=6,
        dev=4,
        out=out,
        save_anyway=True,  # the simulated backbone's canned answers leave nothing to gain
        on_plan=lambda plan: planned.append(plan) or True,
        on_progress=lambda phase, done, total: phases.add(phase),
    )
    assert isinstance(result, Optimization) and not result.cancelled and result.report is not None
    (plan,) = planned
    assert plan is result.plan and (len(plan.train), len(plan.dev)) == (6, 4) and plan.out == out
    assert plan.log_dir == tmp_path / "chat.gepa" and plan.estimate.total > 0
    assert {"dev-before", "optimize"} <= phases
    assert result.saved == out and out.is_file() and result.manifest_path is not None
    manifest = read_manifest(out)
    assert manifest["seed"] == 7 and manifest["backbones"]["task"] == "simulated/ce-judge"
    ids = manifest["split_ids"]
    assert len(ids["train"]) == 6 and len(ids["dev"]) == 4 and not set(ids["train"]) & set(ids["dev"])


def test_a_cancelled_plan_tunes_nothing_and_without_a_gain_nothing_is_saved(tmp_path: Path) -> None:
    data, out = good_data(tmp_path, 12), tmp_path / "chat.json"
    keywords = {"data": data, "backbone": "simulated:0", "budget": 12, "train": 6, "dev": 4, "out": out}
    cancelled = cejudge_dspy.optimize("chat", **keywords, on_plan=lambda plan: False)
    assert cancelled.cancelled and cancelled.why_not == "cancelled" and not out.exists()
    kept = cejudge_dspy.optimize("chat", **keywords)
    assert kept.saved is None and kept.why_not in (
        "no held-out gain",
        "the tuned program was not re-scored on the dev split",
    )
    assert not out.exists()


def test_optimize_refuses_an_unknown_keyword_and_a_bad_backbone_setting(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown optimize option 'budgte': did you mean 'budget'"):
        cejudge_dspy.optimize("chat", budgte=3)
    with pytest.raises(InputError, match=r"^temperature: must be at most 2"):
        cejudge_dspy.optimize("chat", backbone=BackboneOptions(lm="simulated:0", temperature=9))
