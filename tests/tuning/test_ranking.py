"""The ranking term of the pointwise tuning metric (cejudge_dspy/tuning/_ranking.py), on hand-computed
anchors."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from cejudge_dspy import tuning
from cejudge_dspy.backbones import make_lm
from cejudge_dspy.data import Item
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.tuning._ranking import RANK_WEIGHT, Anchor, against_anchors, describe

# Three training items as the starting program scored them: human 10 / 50 / 90, judge 3.0 / 4.0 / 5.0.
ANCHORS = [Anchor("t1", 10, 3.0), Anchor("t2", 50, 4.0), Anchor("t3", 90, 5.0)]


def gold(label: float, item_id: str = "x") -> dspy.Example:
    return dspy.Example(label=label, id=item_id)


def scored(score: float) -> dspy.Prediction:
    return JudgeResult(mode="pointwise", status="ok", score=score).to_prediction()


def test_an_item_is_scored_by_the_anchors_it_is_ordered_right_against() -> None:
    # Human 60 sits between 50 and 90: a judge score between 4.0 and 5.0 is right against all three.
    right = against_anchors("x", 60, 4.5, ANCHORS)
    assert right is not None and (right.value, right.compared) == (1.0, 3)
    # 2.0 puts it below items people rated lower (10 and 50): right only against 90.
    low = against_anchors("x", 60, 2.0, ANCHORS)
    assert low is not None and low.value == pytest.approx(1 / 3)
    assert [a.id for a in low.too_low] == ["t1", "t2"] and low.too_high == ()
    # A tie with an anchor's score counts half; an anchor with the same human score is not compared.
    tied = against_anchors("x", 50, 4.0, [*ANCHORS, Anchor("t4", 70, 4.0)])
    assert tied is not None and tied.compared == 3 and tied.value == pytest.approx((1 + 1 + 0.5) / 3)
    # The item itself (a training item) is never its own anchor; nothing comparable gives None.
    assert against_anchors("t2", 50, 4.0, ANCHORS).compared == 2  # type: ignore[union-attr]
    assert against_anchors("x", 50, 1.0, [Anchor("t2", 50, 4.0)]) is None


def test_the_feedback_names_the_misordered_anchors() -> None:
    high = against_anchors("x", 20, 6.0, ANCHORS)
    assert high is not None
    text = describe(high)
    assert "ordered right against 0.33 of 3" in text
    assert "Scored above items people rated higher: human 50 / judge 4.00, human 90 / judge 5.00." in text


def test_the_pointwise_metric_weighs_ranking_first_and_closeness_second() -> None:
    closeness = 1 - abs(4.5 - (1 + 6 * (60 - 10) / 80)) / 6  # the gold 60 on 10..90 is 4.75 on 1..7
    value = tuning.pointwise_metric(
        gold(60), scored(4.5), scale=(1, 7), label_range=(10, 90), anchors=ANCHORS
    )
    assert value == pytest.approx(RANK_WEIGHT * 1.0 + (1 - RANK_WEIGHT) * closeness)
    # Without anchors (or none comparable) the metric is closeness alone, as before.
    assert tuning.pointwise_metric(gold(60), scored(4.5), scale=(1, 7), label_range=(10, 90)) == (
        pytest.approx(closeness)
    )
    # A middle score for every item: closeness is fair, the ranking term is not.
    flat = [tuning.pointwise_metric(gold(g), scored(4.0), scale=(1, 7), anchors=ANCHORS) for g in (30, 70)]
    ranked = [
        tuning.pointwise_metric(gold(g), scored(s), scale=(1, 7), anchors=ANCHORS)
        for g, s in ((30, 3.5), (70, 4.5))
    ]
    assert sum(ranked) > sum(flat)
    fb = tuning.pointwise_feedback(gold(60), scored(2.0), scale=(1, 7), label_range=(10, 90), anchors=ANCHORS)
    assert "Scored below items people rated lower" in fb.feedback and "0.75 x ranking 0.33" in fb.feedback


def test_metric_for_binds_the_anchors() -> None:
    train = [gold(v, f"t{i}") for i, v in enumerate((10, 50, 90))]
    metric = tuning.metric_for("literary", train, anchors=ANCHORS)
    assert metric.anchors == tuple(ANCHORS)
    assert metric(gold(60), scored(4.5)) == pytest.approx(
        tuning.pointwise_metric(gold(60), scored(4.5), scale=(1, 7), label_range=(10, 90), anchors=ANCHORS)
    )


def test_optimize_anchors_the_metric_on_the_starting_programs_training_scores() -> None:
    """A real (simulated-backbone) GEPA run: the anchors are every training item, scored before tuning."""
    items = [
        Item(
            id=f"lit/{i}",
            mode="pointwise",
            instruction=f"Der Satz Nummer {i} ist kurz.",
            response=f"Sentence number {i} is short.",
            label=float(10 * i),
            language="de",
            response_language="en",
        )
        for i in range(1, 10)
    ]
    train, dev = [i.to_example() for i in items[:6]], [i.to_example() for i in items[6:]]
    seen: list[Any] = []
    lm = make_lm("simulated:0", cache=False)
    original = tuning.optimize.__globals__["metric_for"]

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("anchors"))
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(tuning.optimize.__globals__, "metric_for", spy)
        report = tuning.optimize("literary", train, dev, optimizer="gepa", budget=4, lm=lm)
    anchors = [a for a in seen if a]
    assert report.sizes["anchors"] == 6 and anchors
    assert {a.id for a in anchors[0]} == {ex.id for ex in train}
    assert all(1 <= a.score <= 7 for a in anchors[0])
