"""Label-free summaries (issue #48): items without a gold label get verdict shares (pairwise) or a score
distribution (pointwise) with intervals, per language, and no accuracy or correlation; a partly labelled
run says how many items its metric scored. Intervals are checked against statsmodels-free references:
scipy's Wilson interval computed by hand, and the percentile bootstrap the package uses elsewhere."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cejudge_dspy.data import Item
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.metrics import summarize
from cejudge_dspy.metrics._label_free import wilson_share
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task


def pair(i: int, verdict: str | None, label: str | None = None, language: str = "en") -> Record:
    item = Item(
        id=f"p{i}",
        mode="pairwise",
        instruction="q",
        response_a="a",
        response_b="b",
        language=language,
        label=label,
    )
    result = (
        JudgeResult(mode="pairwise", status="ok", verdict=verdict)  # type: ignore[arg-type]
        if verdict
        else JudgeResult(mode="pairwise", status="unparsed", error="no verdict", error_stage="verdict")
    )
    return Record(f"p{i}", "chat", "cejudge", result.status, item, result)


def scored(i: int, score: float | None, language: str = "de") -> Record:
    item = Item(id=f"s{i}", mode="pointwise", instruction="src", response="tgt", language=language)
    result = (
        JudgeResult(mode="pointwise", status="ok", score=score)
        if score is not None
        else JudgeResult(mode="pointwise", status="unparsed", error="no score", error_stage="score")
    )
    return Record(f"s{i}", "literary", "cejudge", result.status, item, result)


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval by its formula (Wilson 1927), independent of scipy's implementation."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_five_unlabelled_pairs_get_verdict_shares_and_no_accuracy() -> None:
    rows = [pair(i, v) for i, v in enumerate(["A", "A", "A", "B", "tie"])]
    summary = summarize(rows, load_task("chat"), n_resamples=200)
    assert "overall" not in summary and summary["per_language"] == {} and summary["average"] is None
    free = summary["label_free"]
    assert free["n_items"] == 5
    overall = free["overall"]
    assert overall["counts"] == {"items": 5, "judged": 5, "unparsed": 0, "errors": 0}
    for label, k in (("A", 3), ("B", 1), ("tie", 1)):
        share = overall[label]
        assert share["value"] == pytest.approx(k / 5) and share["n"] == 5
        assert (share["ci_low"], share["ci_high"]) == pytest.approx(wilson(k, 5), abs=1e-9)
    assert free["per_language"]["en"]["A"] == overall["A"]


def test_shares_are_per_language_and_unparsed_verdicts_are_counted_not_shared() -> None:
    rows = [pair(0, "A", language="de"), pair(1, None, language="de"), pair(2, "B", language="ko")]
    free = summarize(rows, load_task("chat"), n_resamples=0)["label_free"]
    assert set(free["per_language"]) == {"de", "ko"}
    de = free["per_language"]["de"]
    assert de["counts"] == {"items": 2, "judged": 1, "unparsed": 1, "errors": 0}
    assert de["A"]["value"] == 1.0 and de["B"]["value"] == 0.0
    assert free["per_language"]["ko"]["B"]["value"] == 1.0


def test_nothing_judged_is_undefined_with_a_reason() -> None:
    share = wilson_share(0, 0, "share_A").to_dict()
    assert share["value"] is None and share["reason"] == "no judged items"


def test_a_partly_labelled_run_scores_the_labelled_items_and_shares_the_rest() -> None:
    rows = [pair(0, "A", "A"), pair(1, "B", "A"), pair(2, "A", "B"), pair(3, "A"), pair(4, "B")]
    summary = summarize(rows, load_task("chat"), n_resamples=0)
    overall = summary["overall"]
    assert overall["n"] == 3 and overall["value"] == pytest.approx(1 / 3)
    assert overall["counts"]["scored"] == 3 and overall["counts"]["no_label"] == 2
    free = summary["label_free"]
    assert free["n_items"] == 2 and free["overall"]["A"]["value"] == 0.5


def test_pointwise_label_free_gives_the_score_distribution() -> None:
    scores = [3.0, 5.0, 5.0, 6.0, 2.0, 7.0]
    rows = [scored(i, s) for i, s in enumerate(scores)] + [scored(9, None)]
    summary = summarize(rows, load_task("literary"), n_resamples=500, seed=7)
    assert "overall" not in summary and summary["per_language"] == {}
    de = summary["label_free"]["per_language"]["de"]
    assert de["counts"] == {"items": 7, "judged": 6, "unparsed": 1, "errors": 0}
    mean = de["mean"]
    assert mean["value"] == pytest.approx(np.mean(scores)) and mean["n"] == 6
    # The percentile bootstrap over the judged scores, resampled as bootstrap_ci does it (seeded rows).
    idx = np.random.default_rng(7).integers(0, 6, size=(500, 6))
    means = np.asarray(scores)[idx].mean(axis=1)
    assert (mean["ci_low"], mean["ci_high"]) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))
    assert de["sd"] == pytest.approx(np.std(scores, ddof=1))
    assert de["quartiles"]["median"] == pytest.approx(5.0) and de["quartiles"]["min"] == 2.0
    assert de["histogram"] == {"2": 1, "3": 1, "5": 2, "6": 1, "7": 1}


def test_few_scores_get_no_bootstrap_interval() -> None:
    free = summarize([scored(0, 4.0), scored(1, 6.0)], load_task("literary"))["label_free"]
    assert free["overall"]["mean"]["value"] == 5.0 and free["overall"]["mean"]["ci_low"] is None


def test_a_fully_labelled_run_has_no_label_free_part() -> None:
    rows = [pair(i, v, "A") for i, v in enumerate(["A", "B", "A"])]
    assert "label_free" not in summarize(rows, load_task("chat"), n_resamples=0)
