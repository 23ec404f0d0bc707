"""CE-Judge end to end on the real embedded model: one pairwise and one pointwise item.

Slow (a minute or two each on 2 CPU cores). In CI (CI=true) a missing embedded backbone is a failure,
not a skip: CI installs the `embedded` extra, so its absence means the install step broke.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from cejudge_dspy.backbones import embedded
from cejudge_dspy.backbones.spec import use_backbone
from cejudge_dspy.methods.cejudge.judges import PairwiseJudge, PointwiseJudge

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def embedded_available() -> None:
    reason = None
    if importlib.util.find_spec("llama_cpp") is None:
        reason = "llama-cpp-python is not installed"
    elif embedded.packaged_parts() is None:
        reason = "the packaged model parts are not installed"
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must install cejudge-dspy[embedded]")
    if reason:
        pytest.skip(reason)


def test_pairwise_judgment_on_the_embedded_model() -> None:
    with use_backbone("embedded", cache=False):
        pred = PairwiseJudge("chat")(
            instruction="Was ist die Hauptstadt von Frankreich? Antworte mit einem Wort.",
            response_a="Paris",
            response_b="Berlin",
            language="de",
        )
    result = pred.result
    assert len(result.orders) == 2 and result.checklists["a"] and result.checklists["b"]
    if result.status == "ok":
        assert result.verdict in ("A", "B", "tie")
    else:  # a 1.5B model may still write an unparsable judgment: it must be recorded, never guessed
        assert result.verdict is None and result.error_stage == "VerdictJudgment" and "order" in result.error
        assert any(o.verdict for o in result.orders) or all(o.error for o in result.orders)
    assert "instruction" in result.translations  # the German question was translated for the checklists
    # 3 concepts + 3 translations + 4 checklists + 2 judgments, plus any format retries.
    assert result.usage.calls >= 12 and result.usage.prompt_tokens > 0


def test_pointwise_judgment_on_the_embedded_model() -> None:
    with use_backbone("embedded", cache=False):
        pred = PointwiseJudge("literary")(
            instruction="Der alte Mann ging langsam durch den Regen.",
            response="The old man walked slowly through the rain.",
            language="de",
            response_language="en",
        )
    result = pred.result
    assert result.status == "ok", result.error
    # The default decision is by token probabilities: the headline is the expected score over the scale's
    # levels, the model's own answer (a level) is kept beside it.
    assert result.decision == "probability" and result.probabilities.status == "ok"
    assert 1 <= result.score <= 7 and result.argmax.score in range(1, 8)
    assert abs(sum(result.probabilities.distribution.values()) - 1) < 1e-3
    assert result.feedback and result.checklists["response"]
    assert result.usage.calls >= 6
