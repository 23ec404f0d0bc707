"""A distributed run's worker (`evaluate._worker.JudgeWorker`, built here without Ray) judges in the adapter
the driver's `--adapter` names: it reaches the workers in the recipe's BackboneOptions."""

from __future__ import annotations

import pickle
from typing import Literal

import pytest

from cejudge_dspy.backbones import BackboneOptions, adapter_name
from cejudge_dspy.evaluate import RunRecipe
from cejudge_dspy.evaluate._worker import JudgeWorker


@pytest.mark.parametrize(("adapter", "expected"), [("auto", "chat"), ("json", "json")])
def test_a_worker_judges_in_the_run_s_adapter(adapter: Literal["auto", "json"], expected: str) -> None:
    recipe = RunRecipe(
        task="chat", task_version=1, method="direct", program="base", program_label="base",
        backbone=BackboneOptions(lm="simulated:0", adapter=adapter),
    )  # fmt: skip
    assert adapter_name(JudgeWorker(recipe).context["adapter"]) == expected


def test_a_recipe_carries_its_backbone_options_pickled_and_names_their_secrets() -> None:
    """Ray pickles the recipe to each worker: the BackboneOptions arrive as they were, and the API key and
    the credentials in the server URL are the secrets the driver redacts from every record."""
    backbone = BackboneOptions(
        lm="hosted_vllm/M", api_base="http://user:pw@127.0.0.1:9/v1", api_key="sk-123", temperature=0.5
    )
    recipe = RunRecipe(
        task="chat", task_version=1, method="direct", program="base", program_label="base", backbone=backbone
    )
    again = pickle.loads(pickle.dumps(recipe))
    assert again == recipe and again.backbone == backbone
    assert "sk-123" in recipe.secrets and "pw" in " ".join(recipe.secrets)
