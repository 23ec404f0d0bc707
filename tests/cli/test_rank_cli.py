"""`cejudge rank` and `cejudge view` on a ranking run, on the simulated backbone: the flags reach
`rank.rank`, the run resumes, the tables print, the page shows the ranking with its intervals and the
win-rate matrix; bad flags are one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main

SYSTEMS = {"M0": 4.5, "M1": 2.0, "M2": 3.0, "M3": 1.5}


def summeval_like(path: Path, docs: int = 3) -> Path:
    """The shared SummEval sample's shape: doc_id, system_id, source, system_output, scores."""
    rows = [
        {
            "doc_id": f"doc{d}",
            "system_id": name,
            "source": f"The council of town {d} approved a new bridge on Monday after a long debate.",
            "system_output": f"Town {d} approves bridge ({name}, variant {i}).",
            "scores": {"coherence": q, "consistency": q, "fluency": q, "relevance": q},
        }
        for d in range(docs)
        for i, (name, q) in enumerate(SYSTEMS.items())
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_rank_pairwise_all_pairs_then_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = summeval_like(tmp_path / "summeval.jsonl")
    out = tmp_path / "run"
    argv = ["rank", "--task", "summeval_pairwise", "--lm", "simulated:0", "--no-cache", "--data", str(data)]
    argv += ["--field", "system=system_id", "--field", "label=scores", "--human", "coherence"]
    argv += ["--out", str(out), "--bootstrap", "50", "--prompts", "2"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "ranking" in printed and "win rate" in printed and "kendall over systems" in printed
    ranking = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    assert ranking["comparisons"]["scheduled"] == 6 * 2  # 4 systems: 6 pairs, on the first 2 documents
    assert {r["system"] for r in ranking["systems"]} == set(SYSTEMS)
    assert ranking["human"]["system_means"] == {k: float(v) for k, v in SYSTEMS.items()}
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["rank"]["schedule"] == "all-pairs" and run["lm"] == "simulated:0"
    # A rerun resumes: nothing is judged again.
    assert main(argv) == 0
    assert len((out / "results.jsonl").read_text(encoding="utf-8").splitlines()) == 12
    # A changed setting is refused with the difference named.
    assert main([*argv, "--schedule", "baseline", "--baseline", "M1"]) != 0
    assert "rank" in capsys.readouterr().err
    # The view: the ranking with its intervals, and the win-rate matrix.
    assert main(["view", str(out)]) == 0
    page = (out / "view.html").read_text(encoding="utf-8")
    assert "Win rate" in page and "95% CI" in page and "M3" in page
    assert "Agreement with the human scores" in page


def test_rank_pointwise_means(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = summeval_like(tmp_path / "summeval.jsonl", docs=2)
    out = tmp_path / "run"
    argv = ["rank", "--task", "summeval", "--method", "direct", "--lm", "simulated:0", "--data", str(data)]
    argv += ["--field", "system=system_id", "--out", str(out), "--bootstrap", "20"]
    assert main(argv) == 0
    ranking = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    assert ranking["mode"] == "pointwise" and ranking["answers"]["scheduled"] == 8
    assert all(r["mean_score"] is not None for r in ranking["systems"])
    assert "spearman over answers" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "M1"], "--baseline"),
        (["--schedule", "baseline", "--baseline", "nobody"], "no system 'nobody'"),
        (["--budget", "3"], "adaptive"),
        (["--prompts", "0"], "--prompts"),
        (["--field", "system=nope"], "system"),
    ],
)
def test_bad_flags_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    data = summeval_like(tmp_path / "summeval.jsonl")
    argv = ["rank", "--task", "summeval_pairwise", "--lm", "simulated:0", "--data", str(data)]
    argv += ["--field", "system=system_id", "--out", str(tmp_path / "run"), *extra]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "results.jsonl").exists()
