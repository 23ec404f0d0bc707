"""CE-Judge end to end on the real embedded model: four obvious pairwise items and one pointwise item.

Slow (a minute or two each on 2 CPU cores). In CI (CI=true) a missing embedded backbone is a failure,
not a skip: CI installs the `embedded` extra, so its absence means the install step broke.
"""

from __future__ import annotations

import json

import pytest

from cejudge_dspy.backbones import use_backbone
from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge
from tests import support

# The embedded model (tests/conftest.py): skipped without it, a failure in CI.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("embedded_model")]


OBVIOUS = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
# Four obvious pairs in two languages (benchmarks/obvious/): a translation, an off-topic answer, a refusal.
FOUR = ("obvious/en/translation-1", "obvious/en/on-topic-1", "obvious/de/on-topic-1", "obvious/de/refusal-1")


def _obvious(item_id: str) -> dict[str, str]:
    rows = [json.loads(line) for line in OBVIOUS.read_text(encoding="utf-8").splitlines()]
    return next(r for r in rows if r["id"] == item_id)


@pytest.mark.parametrize("item_id", FOUR)
def test_obvious_pairs_are_judged_right_in_both_orders(item_id: str) -> None:
    """The quality floor of the default configuration: the right response wins whichever is shown first.

    A pair the grades decide was never shown as a pair, so its verdict holds in both orders; a pair the
    pairwise judgment decided must be right in each order it was shown in."""
    row = _obvious(item_id)
    with use_backbone("embedded", cache=False):
        pred = PairwiseJudge("chat")(
            instruction=row["prompt"],
            response_a=row["response_a"],
            response_b=row["response_b"],
            language=row["language"],
        )
    result = pred.result
    assert result.status == "ok", result.error
    assert set(result.grades) == {"a", "b"} and result.checklists["a"] and result.checklists["b"]
    assert result.verdict == row["label"], (result.grades, result.probabilities)
    assert all(o.verdict == row["label"] for o in result.orders), result.orders
    # 3 concepts, translations of non-English texts, 4 checklists, 2 grades (+2 verdicts if the grades tie).
    assert result.usage.calls >= 9 and result.usage.prompt_tokens > 0


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
    # By default the judgment read the judge's own English translation of the source: into English, the
    # one stage 2 wrote for the checklists (one call, no separate reference stage).
    reference = result.details["reference"]
    assert reference["error"] is None and reference["stage"] == "translate"
    assert reference["answer"] == result.translations["instruction"] != ""
    assert result.usage.by_stage["Translate"] == 1 and "ReferenceTranslation" not in result.usage.by_stage
    assert result.usage.calls >= 6
