"""Selective judging (metrics/_selective.py): risk-coverage worked out by hand on a known order, AURC
against a direct numpy computation (and, with ties, the mean over every order of the tied items),
abstaining in the summary's counts, panel agreement as a confidence, and pointwise Kendall by coverage."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.data import Item
from cejudge_dspy.judges.verdicts import JudgeResult, Probabilities
from cejudge_dspy.metrics import aurc, item_confidence, risk_coverage, selective_summary, summarize
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task
from tests.support.view_runs import write_run


def pair(
    rid: str, gold: str, p_a: float | None, *, agreement: float | None = None, lang: str = "en"
) -> Record:
    """A pairwise record decided by p(A) (A above 0.5, else B); p_a None: no probabilities."""
    probs = Probabilities(status="ok", p_a=p_a, confidence=max(p_a, 1 - p_a)) if p_a is not None else None
    verdict = "A" if p_a is None or p_a > 0.5 else "B"
    details = {"agreement": agreement} if agreement is not None else {}
    result = JudgeResult(
        mode="pairwise", status="ok", method="direct", verdict=verdict, probabilities=probs, details=details
    )
    item = Item(
        id=rid,
        mode="pairwise",
        instruction=f"q {rid}",
        response_a="a",
        response_b="b",
        language=lang,
        label=gold,
    )
    return Record(rid, "chat", "direct", "ok", item, result)  # type: ignore[arg-type]


# |p(A) - 0.5|: .4 right, .3 wrong, .2 right, .1 right, .05 wrong (p(A) .45 gives B against gold A).
KNOWN = [("k1", "A", 0.9), ("k2", "B", 0.8), ("k3", "B", 0.3), ("k4", "A", 0.6), ("k5", "A", 0.45)]


def known() -> list[Record]:
    return [pair(*row) for row in KNOWN]


def test_risk_coverage_by_hand_on_a_known_order() -> None:
    table = risk_coverage(known(), "pairwise", "margin")
    # In confidence order: right, wrong, right, right, wrong.
    assert [row["n"] for row in table["curve"]] == [1, 2, 3, 4, 5]
    assert [row["value"] for row in table["curve"]] == pytest.approx([1, 1 / 2, 2 / 3, 3 / 4, 3 / 5])
    assert [row["threshold"] for row in table["curve"]] == pytest.approx([0.4, 0.3, 0.2, 0.1, 0.05])
    assert [row["optimal"] for row in table["curve"]] == pytest.approx([1, 1, 1, 3 / 4, 3 / 5])
    # Risk 0, 1/2, 1/3, 1/4, 2/5; the oracle's 0, 0, 0, 1/4, 2/5.
    assert table["aurc"] == pytest.approx((0 + 1 / 2 + 1 / 3 + 1 / 4 + 2 / 5) / 5)
    assert table["optimal_aurc"] == pytest.approx((1 / 4 + 2 / 5) / 5)
    assert table["excess_aurc"] == pytest.approx((1 / 2 + 1 / 3) / 5)
    assert table["area"] == pytest.approx(1 - table["aurc"]) and table["n_without_confidence"] == 0


def _reference_aurc(correct: np.ndarray, confidence: np.ndarray) -> float:
    """The textbook step computation: sort by confidence (highest first), mean of the running error rate."""
    order = np.argsort(-confidence, kind="stable")
    errors = np.cumsum(~correct[order])
    return float(np.mean(errors / np.arange(1, len(correct) + 1)))


def test_aurc_matches_a_direct_numpy_computation_without_ties() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(1, 60))
        confidence = rng.permutation(n) / n  # distinct values: no ties
        correct = rng.random(n) < 0.7
        got = aurc(correct.tolist(), confidence.tolist())
        assert got["aurc"] == pytest.approx(_reference_aurc(correct, confidence))
        oracle = _reference_aurc(correct, correct.astype(float))  # every right item first
        assert got["optimal_aurc"] == pytest.approx(oracle)


def test_tied_confidences_take_the_mean_over_every_order_of_the_tied_items() -> None:
    confidence = [0.3, 0.2, 0.2, 0.2, 0.1, None, None]
    correct = [True, False, True, True, False, True, False]
    by_order = []
    tied, unknown = [1, 2, 3], [5, 6]
    for a in itertools.permutations(tied):
        for b in itertools.permutations(unknown):
            order = [0, *a, 4, *b]
            errors = np.cumsum([not correct[i] for i in order])
            by_order.append(np.mean(errors / np.arange(1, 8)))
    assert aurc(correct, confidence)["aurc"] == pytest.approx(float(np.mean(by_order)))
    # Input order does not matter: the same items shuffled give the same AURC.
    shuffled = [3, 6, 0, 5, 1, 4, 2]
    same = aurc([correct[i] for i in shuffled], [confidence[i] for i in shuffled])
    assert same["aurc"] == pytest.approx(float(np.mean(by_order)))


def test_the_curve_keeps_tied_items_together() -> None:
    records = [pair("t1", "A", 0.9), pair("t2", "A", 0.7), pair("t3", "B", 0.7), pair("t4", "A", None)]
    table = risk_coverage(records, "pairwise", "margin", steps=4)
    # 25% falls on t1; 50% inside the tie of t2 (right) and t3 (wrong, p(A) .7 says A): both kept.
    assert [row["n"] for row in table["curve"]] == [1, 3, 4]
    assert [row["threshold"] for row in table["curve"]] == pytest.approx([0.4, 0.2, None])
    assert table["curve"][1]["value"] == pytest.approx(2 / 3) and table["n_without_confidence"] == 1


def test_abstaining_counts_the_items_and_leaves_them_out_of_the_metric() -> None:
    extra = [
        pair("k6", "B", None),  # no probabilities: no confidence, abstained
        Record("k7", "chat", "direct", "unparsed", pair("k7", "A", 0.9).item, None),  # stays unparsed
        pair("k8", "A", 0.4, lang="de"),  # .1, wrong, alone in its language: abstained
    ]
    spec = load_task("chat")
    summary = summarize(known() + extra, spec, n_resamples=0, abstain_below=0.15)
    selective = summary["selective"]
    assert selective["abstained"] == ["k4", "k5", "k6", "k8"] and summary["n_abstained"] == 4
    assert selective["abstain_below"] == 0.15 and selective["confidence"] == "margin"
    assert summary["overall"]["value"] == pytest.approx(2 / 3)  # k1, k3 right, k2 wrong
    assert summary["overall"]["counts"] == {
        "items": 8, "scored": 3, "unparsed": 1, "gold_ties": 0, "errors": 0, "no_label": 0, "abstained": 4
    }  # fmt: skip
    de = summary["per_language"]["de"]  # every item abstained: the row stays, its metric undefined
    assert de["value"] is None and de["counts"]["abstained"] == 1
    # A confidence equal to the threshold is kept (below means strictly below).
    at = summarize(known(), spec, n_resamples=0, abstain_below=0.1)
    assert at["selective"]["abstained"] == ["k5"]
    # Without a threshold nothing is abstained and the counts keep their shape.
    plain = summarize(known(), spec, n_resamples=0)
    assert "n_abstained" not in plain and "abstained" not in plain["overall"]["counts"]
    assert plain["selective"]["aurc"] == pytest.approx(risk_coverage(known(), "pairwise", "margin")["aurc"])
    assert "abstained" not in plain["selective"]


def test_panel_agreement_is_a_confidence_where_records_carry_it() -> None:
    records = [pair("a1", "A", 0.9, agreement=1 / 3), pair("a2", "A", 0.6, agreement=1.0)]
    assert selective_summary(records, "pairwise")["confidence"] == "both"
    assert item_confidence(records[0], "both") == pytest.approx(0.4 / 3)
    assert item_confidence(records[1], "both") == pytest.approx(0.1)
    assert item_confidence(records[0], "agreement") == pytest.approx(1 / 3)
    curve = risk_coverage(records, "pairwise", "agreement")["curve"]
    assert [row["threshold"] for row in curve] == pytest.approx([1.0, 1 / 3])  # a2 first by agreement
    bare = [pair("b1", "A", None, agreement=0.5), pair("b2", "B", None, agreement=2.0)]  # 2.0: not a share
    assert selective_summary(bare, "pairwise")["confidence"] == "agreement"
    assert item_confidence(bare[1], "agreement") is None


def point(rid: str, gold: float, dist: dict[str, float]) -> Record:
    probs = Probabilities(status="ok", distribution=dist, score=sum(float(k) * v for k, v in dist.items()))
    level = float(max(dist, key=dist.__getitem__))
    result = JudgeResult(mode="pointwise", status="ok", method="direct", score=level, probabilities=probs)
    item = Item(id=rid, mode="pointwise", instruction=f"s {rid}", response="t", label=gold)
    return Record(rid, "literary", "direct", "ok", item, result)  # type: ignore[arg-type]


def test_pointwise_confidence_is_the_argmax_levels_probability_and_kendall_by_coverage() -> None:
    from scipy.stats import kendalltau

    rows = [  # (id, gold, distribution): confidence .9, .8, .7, .6, .5
        ("e1", 10.0, {"1": 0.9, "2": 0.1}),
        ("e2", 20.0, {"2": 0.8, "3": 0.2}),
        ("e3", 30.0, {"3": 0.7, "1": 0.3}),
        ("e4", 40.0, {"1": 0.6, "4": 0.4}),  # argmax 1 against the highest gold: the ranking's error
        ("e5", 50.0, {"5": 0.5, "4": 0.25, "3": 0.25}),
    ]
    records = [point(*r) for r in rows]
    assert item_confidence(records[0], "margin") == pytest.approx(0.9)
    table = risk_coverage(records, "pointwise", "margin", steps=5)
    assert table["metric"] == "kendall" and [row["n"] for row in table["curve"]] == [1, 2, 3, 4, 5]
    assert table["curve"][0]["value"] is None  # one item: Kendall undefined
    assert table["curve"][2]["value"] == pytest.approx(1.0)  # e1-e3 in gold order
    scores, golds = [1, 2, 3, 1, 5], [10, 20, 30, 40, 50]
    assert table["curve"][3]["value"] == pytest.approx(kendalltau(scores[:4], golds[:4]).statistic)
    assert table["curve"][4]["value"] == pytest.approx(kendalltau(scores, golds).statistic)
    assert "aurc" not in table and table["area"] is not None


def test_evaluate_rethresholds_a_finished_run_without_judging_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(__file__).parents[2] / "benchmarks" / "obvious" / "pairwise.jsonl"
    out = tmp_path / "run"
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--limit", "3", "--lm", "simulated:0"]
    assert main([*argv, "--out", str(out)]) == 0
    before = (out / "results.jsonl").read_bytes()
    capsys.readouterr()
    assert main([*argv, "--out", str(out), "--abstain-below", "0.2"]) == 0
    captured = capsys.readouterr()
    assert "0 to judge" in captured.err and "left every judged item to a person" in captured.err
    assert "abstained 3 (confidence below 0.2)" in " ".join(captured.out.split())  # the table's caption
    assert "Selective judging" not in captured.out  # no confidence: no curve to show
    assert (out / "results.jsonl").read_bytes() == before  # nothing judged, nothing written
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    # The simulated backbone gives no token probabilities: no item has a confidence, all are abstained.
    assert summary["selective"]["abstain_below"] == 0.2 and summary["n_abstained"] == summary["n_ok"]
    assert summary["overall"]["counts"]["abstained"] == summary["n_ok"]
    assert main([*argv, "--out", str(out), "--abstain-below", "2"]) == 2
    assert "--abstain-below: must be at most 1" in capsys.readouterr().err


def test_calibrate_prints_the_risk_coverage_and_rethresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    run = write_run(tmp_path / "known", {"task": "chat", "method": "direct", "lm": "fake"}, known())
    assert main(["calibrate", str(run), "--abstain-below", "0.15"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Selective judging: accuracy on the most confident items" in out
    assert "AURC 0.297 (oracle 0.130, excess 0.167; lower is better)" in out
    assert "--abstain-below 0.15: 2 items abstained" in out
    assert main(["calibrate", str(run), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["selective"]["aurc"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4 + 2 / 5) / 5)
    assert not (run / "summary.json").exists()  # calibrate reads a run, writes nothing
    lit = write_run(
        tmp_path / "lit",
        {"task": "literary", "method": "direct", "lm": "fake"},
        [point("e1", 10.0, {"1": 0.9, "2": 0.1}), point("e2", 20.0, {"2": 0.6, "1": 0.4})],
    )
    assert main(["calibrate", str(lit), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["selective"]["metric"] == "kendall"


def test_the_run_directory_page_names_every_selective_key() -> None:
    page = (Path(__file__).parents[2] / "docs" / "reference" / "run-directory.md").read_text(encoding="utf-8")
    summary = summarize(known(), load_task("chat"), n_resamples=0, abstain_below=0.15)
    keys = {*summary["selective"], *summary["selective"]["curve"][0], "n_abstained", "abstained"}
    assert sorted(k for k in keys if f"`{k}`" not in page) == []


def test_a_panels_record_gives_its_agreement_and_its_members_mean_p_a() -> None:
    """A panel's record (judges.panel) has no probabilities of its own: `details["panel"]` holds the
    share of members that gave the most common vote and their mean p(A)."""
    records = []
    for rid, gold, mean_p_a, agreement in (
        ("m1", "A", 0.8, 1.0),
        ("m2", "A", 0.9, 2 / 3),
        ("m3", "B", 0.6, 2 / 3),
    ):
        record = pair(rid, gold, None)
        record.result.details = {"panel": {"agreement": agreement, "mean_p_a": mean_p_a}}  # type: ignore[union-attr]
        records.append(record)
    assert selective_summary(records, "pairwise")["confidence"] == "both"
    assert [item_confidence(r, "both") for r in records] == pytest.approx([0.3, 0.4 * 2 / 3, 0.1 * 2 / 3])
    # By agreement alone m2 and m3 tie (2/3): they are kept or dropped together.
    curve = risk_coverage(records, "pairwise", "agreement", steps=3)["curve"]
    assert [row["n"] for row in curve] == [1, 3]


def test_a_nan_p_a_from_an_old_run_is_no_confidence_and_calibrate_never_says_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #49: a run written before log probabilities were checked holds `"p_a": NaN` (bare, as Python's
    json wrote it); such a record has no confidence, and calibrate never prints "abstain below nan"."""
    monkeypatch.setenv("COLUMNS", "300")
    records = [*known(), pair("k6", "A", float("nan")), pair("k7", "B", float("nan"))]
    assert item_confidence(records[-1], "margin") is None
    run = write_run(tmp_path / "old", {"task": "chat", "method": "direct", "lm": "fake"}, records)
    assert "NaN" in (run / "results.jsonl").read_text()  # what the old writer left behind
    assert main(["calibrate", str(run)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower(), out
    assert main(["calibrate", str(run), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["selective"]["n_without_confidence"] == 2
