"""The obvious benchmark's figure arithmetic on tiny hand-computed inputs.

Not collected by the default test paths; run it by name:

    python -m pytest benchmarks/obvious/test_figures.py
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("obvious_run", HERE / "run.py")
assert _spec and _spec.loader
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)


def pair_row(label, ab, ba, verdict, shown, status="ok", seconds=1.0, calls=4, language="en", kind="fact"):
    orders = [o for o, v in (("AB", shown[:1]), ("BA", shown[1:])) if v]
    return {
        "id": f"{language}/{kind}/{label}{ab}{ba}",
        "status": status,
        "language": language,
        "response_language": None,
        "kind": kind,
        "label": label,
        "verdict": verdict,
        "score": None,
        "ab": ab,
        "ba": ba,
        "orders": orders,
        "shown": shown,
        "seconds": seconds,
        "calls": calls,
    }


# r1 right in both orders; r2 right only when swapped (a tie); r3 right in A/B, its B/A unparsed;
# r4 an error with no orders at all.
PAIRS = [
    pair_row("A", "A", "A", "A", ["A", "B"], seconds=1.0, calls=4),
    pair_row("B", "A", "B", "tie", ["A", "A"], seconds=3.0, calls=4, language="de"),
    pair_row("A", "A", None, None, ["A", None], status="unparsed", seconds=2.0, calls=2, kind="prime"),
    pair_row("B", None, None, None, [], status="error", seconds=None, calls=None, language="de"),
]


def test_pairwise_figures_by_hand():
    f = run.pairwise_figures(PAIRS)
    assert f["n"] == 4
    assert f["accuracy_ab"] == {"value": 0.5, "k": 2, "n": 4}  # r1, r3
    assert f["accuracy_ba"] == {"value": 0.5, "k": 2, "n": 4}  # r1, r2
    assert f["accuracy_both_orders"] == {"value": 0.25, "k": 1, "n": 4}  # r1
    assert f["position_consistency"] == {"value": 0.5, "k": 1, "n": 2}  # r1 and r2 have both verdicts
    assert (f["ties"], f["unparsed"], f["errors"]) == (1, 1, 1)
    assert f["share_shown_a"] == {"value": 0.8, "k": 4, "n": 5}  # A, B, A, A, A
    assert f["seconds_per_item"] == pytest.approx(2.0)  # (1 + 3 + 2) / 3; the error has no time
    assert f["calls_per_item"] == pytest.approx(10 / 3)
    assert f["accuracy_final"] == {"value": 0.25, "k": 1, "n": 4}  # r1; r2 a tie, r3 and r4 none
    # A probability headline that differs from the model's own answer: r2's argmax was B (right).
    probs = [dict(PAIRS[0]), dict(PAIRS[1], argmax_verdict="B"), PAIRS[2], PAIRS[3]]
    g = run.pairwise_figures(probs)
    assert g["accuracy_final"]["k"] == 1 and g["accuracy_final_argmax"] == {"value": 0.5, "k": 2, "n": 4}


def test_single_order_leaves_the_swapped_figures_undefined():
    rows = [
        pair_row("A", "A", None, "A", ["A"]),
        pair_row("B", "A", None, "A", ["A"]),
    ]
    f = run.pairwise_figures(rows)
    assert f["accuracy_ab"] == {"value": 0.5, "k": 1, "n": 2}
    assert f["accuracy_ba"] is None and f["accuracy_both_orders"] is None
    assert f["position_consistency"] is None
    assert f["share_shown_a"]["value"] == 1.0


def test_items_without_any_order_are_not_right_in_either_order():
    f = run.pairwise_figures([pair_row("A", None, None, None, [], status="unparsed")])
    assert f["accuracy_ab"] == f["accuracy_ba"] == {"value": 0.0, "k": 0, "n": 1}
    assert f["position_consistency"] == {"value": None, "k": 0, "n": 0}
    assert f["share_shown_a"]["value"] is None


def test_breakdown_groups_and_sorts():
    rep = run.report("pairwise", PAIRS)
    assert list(rep["by_language"]) == ["de", "en"]
    assert rep["by_language"]["de"]["accuracy_ba"] == {"value": 0.5, "k": 1, "n": 2}
    assert rep["by_language"]["en"]["accuracy_ab"] == {"value": 1.0, "k": 2, "n": 2}
    assert list(rep["by_kind"]) == ["fact", "prime"]
    assert rep["by_kind"]["prime"]["unparsed"] == 1


def test_per_item_falls_back_to_wall_clock():
    assert run.per_item([None, 0.0, None, None], 4, fallback_total=10.0) == 2.5
    assert run.per_item([None], 1) is None
    assert run.per_item([2.0, None, 4.0], 3, fallback_total=100.0) == 3.0


def test_spearman_by_hand():
    # d = 0, 1, 1, 0: rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8
    assert run.spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert run.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert run.spearman([4, 4, 4], [1, 2, 3]) is None  # constant judge
    assert run.spearman([1], [1]) is None


def point_row(kind, label, score, status="ok", pair=("de", "en"), seconds=0.5):
    return {
        "id": f"{pair[0]}-{pair[1]}/{kind}/{score}",
        "status": status,
        "language": pair[0],
        "response_language": pair[1],
        "kind": kind,
        "label": label,
        "verdict": None,
        "score": score,
        "ab": None,
        "ba": None,
        "orders": [],
        "shown": [],
        "seconds": seconds,
        "calls": 5,
    }


POINTS = [
    point_row("perfect", 7.0, 7),
    point_row("perfect", 7.0, 5, pair=("en", "ja")),
    point_row("minor_slip", 5.0, 5),
    point_row("garbled", 1.0, 1),
    point_row("wrong_language", 1.0, None, status="unparsed"),
    point_row("untranslated", 1.0, 3, pair=("en", "ja")),
]


def test_pointwise_figures_by_hand():
    f = run.pointwise_figures(POINTS)
    assert f["n"] == 6 and f["spearman_n"] == 5 and f["unparsed"] == 1
    # scores 7,5,5,1,3 -> ranks 5,3.5,3.5,1,2; intended 7,7,5,1,1 -> ranks 4.5,4.5,3,1.5,1.5 (means 3):
    # sum dx*dy = 8.25, sum dx^2 = 9.5, sum dy^2 = 9
    assert f["spearman"] == pytest.approx(8.25 / math.sqrt(9.5 * 9))
    grades = f["mean_score_by_grade"]
    assert list(grades) == ["perfect", "minor_slip", "garbled", "wrong_language", "untranslated"]
    assert grades["perfect"] == {"n": 2, "scored": 2, "intended": 7.0, "mean_score": 6.0}
    assert grades["wrong_language"]["mean_score"] is None and grades["wrong_language"]["scored"] == 0
    assert f["perfect_scored_6_or_more"] == {"value": 0.5, "k": 1, "n": 2}
    # garbled 1 counts; unparsed wrong_language and untranslated scored 3 do not
    assert f["garbage_scored_2_or_less"] == {"value": 1 / 3, "k": 1, "n": 3}
    assert f["seconds_per_item"] == 0.5


def test_pointwise_breakdown_by_language_pair():
    rep = run.report("pointwise", POINTS)
    assert list(rep["by_language_pair"]) == ["de-en", "en-ja"]
    assert rep["by_language_pair"]["en-ja"]["perfect_scored_6_or_more"]["k"] == 0


def record(item_id, status, result, seconds=1.0):
    item = {"id": item_id, "language": "de", "response_language": None, "label": "A", "subset": "fact"}
    return {"id": item_id, "task": "chat", "method": "cejudge", "status": status, "item": item,
            "result": result, "error": None, "seconds": seconds}  # fmt: skip


def test_read_run_takes_the_last_record_and_skips_a_torn_line(tmp_path):
    orders = [
        {"order": "AB", "verdict": "A", "shown_verdict": "A"},
        {"order": "BA", "verdict": "B", "shown_verdict": "A"},
    ]
    ok = {"mode": "pairwise", "status": "ok", "verdict": "tie", "score": None, "orders": orders,
          "usage": {"calls": 9}}  # fmt: skip
    lines = [
        json.dumps(record("x/1", "error", None)),
        json.dumps(record("x/1", "ok", ok, seconds=2.5)),
        '{"id": "x/2", "task": "ch',  # killed mid-write
    ]
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "run.json").write_text('{"task": "chat"}', encoding="utf-8")
    config, rows = run.read_run(tmp_path)
    assert config == {"task": "chat"}
    assert len(rows) == 1
    row = rows[0]
    assert (row["status"], row["verdict"], row["ab"], row["ba"]) == ("ok", "tie", "A", "B")
    assert row["orders"] == ["AB", "BA"] and row["shown"] == ["A", "A"]
    assert (row["language"], row["kind"], row["label"], row["seconds"], row["calls"]) == (
        "de",
        "fact",
        "A",
        2.5,
        9,
    )


def test_a_pair_decided_by_its_grades_counts_in_both_orders_but_not_in_consistency(tmp_path):
    graded = {"mode": "pairwise", "status": "ok", "verdict": "B", "orders": [], "usage": {"calls": 9},
              "grades": {"a": {"label": "no"}, "b": {"label": "yes"}}}  # fmt: skip
    shown = {"mode": "pairwise", "status": "ok", "verdict": "tie", "usage": {"calls": 11},
             "orders": [{"order": "AB", "verdict": "A", "shown_verdict": "A"},
                        {"order": "BA", "verdict": "B", "shown_verdict": "A"}]}  # fmt: skip
    lines = [json.dumps(record("x/1", "ok", graded)), json.dumps(record("x/2", "ok", shown))]
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, rows = run.read_run(tmp_path)
    free, pair = rows
    assert (free["ab"], free["ba"], free["order_free"]) == ("B", "B", True) and not pair["order_free"]
    for row in rows:
        row["label"] = "B"
    figures = run.pairwise_figures(rows)
    assert figures["accuracy_both_orders"] == {"value": 0.5, "k": 1, "n": 2}
    assert figures["position_consistency"] == {"value": 0.0, "k": 0, "n": 1}  # the shown pair only
    assert figures["decided_by_grades"] == 1


def test_unknown_flags_go_to_cejudge_and_owned_ones_are_refused(monkeypatch):
    args, extra = run.parse_args(
        ["--lm", "simulated:0", "--constrained", "--program", "base", "--limit", "3"]
    )
    assert extra == ["--constrained", "--program", "base"] and args.limit == 3
    monkeypatch.setattr(run, "cejudge_command", lambda: "cejudge")
    cmd = run.evaluate_command("pointwise", args, extra, Path("out/pointwise"))
    assert cmd[:3] == ["cejudge", "evaluate", "--task"] and cmd[3] == "literary"
    assert "label=intended_score" in cmd and cmd[-5:] == [
        "--limit",
        "3",
        "--constrained",
        "--program",
        "base",
    ]
    with pytest.raises(SystemExit):
        run.parse_args(["--data", "other.jsonl"])


def test_the_parallel_versions_are_the_pairwise_items_with_every_version_filled() -> None:
    """pairwise_parallel.jsonl: 30 items of pairwise.jsonl (fact, arithmetic, prime), unchanged, each with a
    non-empty version of every text in ko, de and ja; numbers stay numbers."""
    here = Path(__file__).resolve().parent
    base = {
        r["id"]: r
        for r in map(json.loads, (here / "pairwise.jsonl").read_text(encoding="utf-8").splitlines())
    }
    rows = [
        json.loads(line)
        for line in (here / "pairwise_parallel.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) == 30 and {r["subset"] for r in rows} == {"fact", "arithmetic", "prime"}
    for row in rows:
        assert {k: row[k] for k in base[row["id"]]} == base[row["id"]]
        for lang in ("ko", "de", "ja"):
            versions = [row[f"{f}_{lang}"] for f in ("prompt", "response_a", "response_b")]
            assert all(isinstance(v, str) and v.strip() for v in versions), (row["id"], lang)
            if row["subset"] != "fact":  # a number is the same in every language
                assert versions[1:] == [row["response_a"], row["response_b"]]
            if row["language"] == lang:
                assert versions == [row["prompt"], row["response_a"], row["response_b"]]
