"""Scoring released prediction files; the fixtures under tests/fixtures/predictions are scored by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats

from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.metrics import average, score_prediction_files
from cejudge_dspy.metrics._predictions import language_from_path, score_prediction_file
from tests import support

FIXTURES = support.FIXTURES / "predictions"
PAIRWISE = FIXTURES / "mmeval_de_reasoning.txt"
POINTWISE = FIXTURES / "liteval_de-en.txt"
MALFORMED = FIXTURES / "malformed_fr.txt"


def test_pairwise_file_by_hand() -> None:
    # Tab-separated, comment on line 1, header on line 2, blank line 6. Data lines:
    # 3 A/A right, 4 B/A wrong, 5 tie/B wrong (pred tie), 7 A/B wrong, 8 None/A unparsed,
    # 9 B/B right, 10 tie/tie gold tie (excluded), 11 a/A right -> 3 right of 6 scored.
    s = score_prediction_file(PAIRWISE)
    assert (s.kind, s.language, s.name) == ("pairwise", "de", "mmeval_de_reasoning")
    assert s.value == pytest.approx(0.5)
    assert (s.result.n, s.n_lines, s.unparsed_lines) == (6, 8, (8,))
    assert s.result.extra == {"n_correct": 3, "n_pred_ties": 1, "n_gold_ties": 1}
    # the original CE-Judge script counts the unparsed line as wrong: 3 / (6 + 1)
    assert s.strict_value == pytest.approx(3 / 7)
    # with gold ties scored, line 10 (tie/tie) is right: 4 of 7
    assert score_prediction_file(PAIRWISE, include_gold_ties=True).value == pytest.approx(4 / 7)


def test_pointwise_file_by_hand() -> None:
    # Comma-separated with a header; lines 7 ("None") and 9 (empty pred) are unparsed. Scored pairs:
    # pred (1, 2, 2, 3, 5) vs gold (1, 3, 2, 2, 4): C = 7, D = 1, one tie in each ->
    # tau_b = (7 - 1) / sqrt((10 - 1) * (10 - 1)) = 2/3
    s = score_prediction_file(POINTWISE)
    assert (s.kind, s.language, s.result.name) == ("pointwise", "de-en", "kendall_tau")
    assert s.value == pytest.approx(2 / 3)
    assert s.value == pytest.approx(stats.kendalltau([1, 2, 2, 3, 5], [1, 3, 2, 2, 4]).statistic)
    assert (s.result.n, s.result.n_excluded, s.unparsed_lines) == (5, 2, (7, 9))
    assert s.strict_value is None
    json.dumps(s.to_dict(), allow_nan=False)


def test_malformed_line_names_file_and_line() -> None:
    with pytest.raises(
        DataError, match=r"malformed_fr\.txt line 3: expected 'pred, gold' \(2 fields\), got 3"
    ):
        score_prediction_file(MALFORMED)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("A, A\nB, 3\n", r"line 2: gold '3' does not fit a pairwise file \(see line 1\)"),
        ("1, 2\nA, maybe\n", r"line 2: gold 'maybe' is neither A/B/tie nor a number"),
        ("# only a comment\n\n", "no prediction lines"),
        ("pred gold extra\n", "line 1: expected 'pred, gold'"),
    ],
)
def test_bad_files_raise_data_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad_es.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        score_prediction_file(path)


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such prediction file"):
        score_prediction_file(tmp_path / "nope.txt")


def test_whitespace_separated_pointwise_with_unparsable_pred(tmp_path: Path) -> None:
    path = tmp_path / "ja.txt"
    # "seven" is unparsed; scored pairs (1,1) (2,2) (3,3): perfectly concordant -> tau = 1
    path.write_text("1 1\nseven 4\n2   2\n3\t3\n", encoding="utf-8")
    s = score_prediction_file(path)
    assert s.value == pytest.approx(1.0) and s.unparsed_lines == (2,) and s.language == "ja"


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("de.txt", "de"),
        ("reasoning_de.txt", "de"),
        ("mmeval_de_chat.txt", "de"),
        ("de-en.txt", "de-en"),
        ("liteval_en-zh.txt", "en-zh"),
        ("results.txt", "results"),
    ],
)
def test_language_from_path(name: str, language: str) -> None:
    assert language_from_path(Path("some/dir") / name) == language


def test_score_files_language_override_and_average() -> None:
    scores = score_prediction_files([PAIRWISE, POINTWISE, PAIRWISE], languages=["deu", None, None])
    assert [s.language for s in scores] == ["deu", "de-en", "de"]
    with pytest.raises(InputError, match="kind"):
        average(scores)
    pair = average(scores, kind="pairwise")
    # macro mean of 0.5 and 0.5 over 2 files; 6 + 6 scored items, 1 + 1 unparsed
    assert pair.value == pytest.approx(0.5) and pair.n == 2
    assert pair.extra == {"n_items": 12, "n_unparsed": 2} and pair.name == "mean_accuracy"
    point = average(scores, kind="pointwise")
    assert point.value == pytest.approx(2 / 3) and point.name == "mean_kendall_tau"
    with pytest.raises(InputError, match="languages"):
        score_prediction_files([PAIRWISE], languages=["de", "fr"])


def test_average_skips_undefined_files(tmp_path: Path) -> None:
    const = tmp_path / "fr.txt"
    const.write_text("3, 2\n3, 4\n", encoding="utf-8")  # constant pred: tau undefined
    scores = score_prediction_files([POINTWISE, const])
    assert math.isnan(scores[1].value) and scores[1].result.reason == "constant x: correlation undefined"
    mean = average(scores)
    assert mean.value == pytest.approx(2 / 3) and (mean.n, mean.n_excluded) == (1, 1)
