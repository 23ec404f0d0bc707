"""A distributed run's worker (`evaluate._worker.JudgeWorker`, built here without Ray) judges in the adapter
the driver's `--adapter` names: it reaches the workers in the recipe's backbone options."""

from __future__ import annotations

import pytest

from cejudge_dspy.backbones import adapter_name
from cejudge_dspy.evaluate import RunRecipe
from cejudge_dspy.evaluate._worker import JudgeWorker


@pytest.mark.parametrize(("options", "expected"), [({}, "chat"), ({"adapter": "json"}, "json")])
def test_a_worker_judges_in_the_run_s_adapter(options: dict[str, str], expected: str) -> None:
    recipe = RunRecipe(
        task="chat", task_version=1, method="direct", program="base", program_label="base",
        lm="simulated:0", lm_options=options,
    )  # fmt: skip
    assert adapter_name(JudgeWorker(recipe).context["adapter"]) == expected
