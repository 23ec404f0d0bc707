"""benchmarks/rules_table.py: the argmax-vs-probability table printed from a run's summary.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from rules_table import fmt, main, table  # noqa: E402


def metric(
    value: float | None, n: int, lo: float | None = None, hi: float | None = None, **kw: object
) -> dict:
    return {"value": value, "n": n, "ci_low": lo, "ci_high": hi, **kw}


def write(run: Path, summary: dict) -> Path:
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(summary))
    return run


def test_fmt_value_ci_n_and_undefined() -> None:
    assert fmt(metric(0.7333, 30, 0.5667, 0.9)) == "0.733 [0.567, 0.900] (n 30)"
    assert fmt(metric(0.5, 3)) == "0.500 (n 3)"
    assert fmt(metric(None, 10, reason="constant predictions")) == "undefined (constant predictions)"
    assert fmt(None) == "n/a"


def test_pairwise_rows_per_rule(tmp_path: Path) -> None:
    rules = {
        "probabilities": {"ok": 30},
        "argmax": {
            "overall": {**metric(0.5, 28, 0.3, 0.7), "strict": metric(0.48, 29, 0.3, 0.66)},
            "position_consistency": metric(0.25, 8),
            "share_tie": metric(0.4, 30),
            "share_final_A": metric(0.3, 30),
            "n_graded": 30,
            "decided_by_grades": 22,
        },
        "probability": {
            "overall": {**metric(0.6, 28, 0.4, 0.8), "strict": metric(0.58, 29, 0.4, 0.76)},
            "share_tie": metric(0.0, 30),
            "share_final_A": metric(0.55, 30),
            "n_graded": 30,
            "decided_by_grades": 29,
        },
    }
    run = write(tmp_path / "en", {"task": "chat", "n_items": 30, "n_ok": 30, "decision_rules": rules})
    text = "\n".join(table(run))
    assert "| argmax | 0.500 [0.300, 0.700] (n 28) | 0.480 [0.300, 0.660] (n 29) | 0.250 (n 8) |" in text
    assert "| probability | 0.600 [0.400, 0.800] (n 28) |" in text
    assert "| n/a | 0.000 (n 30) | 0.550 (n 30) |" in text  # no pair shown in both orders: no consistency
    assert "argmax: 22 of 30 items decided" in text and "probability: 29 of 30 items decided" in text


def test_pointwise_and_dimension_rows(tmp_path: Path) -> None:
    point = {
        "argmax": {
            "per_language": {"en-de": metric(0.1, 15)},
            "overall": metric(0.2, 30),
            "distinct_scores": 4,
        },
        "probability": {
            "per_language": {"en-de": metric(0.3, 15), "ru-en": metric(0.4, 15, 0.1, 0.6)},
            "overall": metric(0.35, 30),
            "distinct_scores": 30,
        },
    }
    run = write(tmp_path / "da", {"task": "literary", "n_items": 30, "n_ok": 30, "decision_rules": point})
    text = "\n".join(table(run))
    assert "| rule | en-de | ru-en | all items | distinct scores |" in text
    assert "| argmax | 0.100 (n 15) | n/a | 0.200 (n 30) | 4 |" in text
    assert "| probability | 0.300 (n 15) | 0.400 [0.100, 0.600] (n 15) | 0.350 (n 30) | 30 |" in text

    dims = {
        "argmax": {
            "dimensions": {"fluency": {"spearman": metric(None, 10, reason="constant")}, "overall": {}},
            "constant_dimensions": ["fluency"],
        },
        "probability": {"dimensions": {"fluency": {"spearman": metric(0.42, 10)}}, "constant_dimensions": []},
    }
    run = write(tmp_path / "se", {"task": "summeval", "n_items": 10, "n_ok": 10, "decision_rules": dims})
    text = "\n".join(table(run))
    assert "| argmax | undefined (constant) | fluency |" in text
    assert "| probability | 0.420 (n 10) | none |" in text


def test_without_probabilities_and_unfinished_run(tmp_path: Path, capsys, monkeypatch) -> None:
    run = write(tmp_path / "plain", {"task": "chat", "n_items": 2, "n_ok": 2})
    assert "only the argmax rule exists" in "\n".join(table(run))
    monkeypatch.setattr(sys, "argv", ["rules_table.py", str(tmp_path / "missing")])
    (tmp_path / "missing").mkdir()
    assert main() == 2
    assert "no summary.json" in capsys.readouterr().err
