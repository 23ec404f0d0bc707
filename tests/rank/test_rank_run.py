"""`rank(...)` end to end on a scripted backbone: CE-Judge's graded judgment follows each answer's marked
quality, so the ranking, ties, position bias and the agreement with human scores are known in advance; the
run directory resumes and refuses a changed setting."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import dspy
import pytest
from scipy import stats

from cejudge_dspy.errors import CEJudgeError, DataError, InputError
from cejudge_dspy.judges import run_program
from cejudge_dspy.rank import (
    Outcome,
    RankOptions,
    bradley_terry,
    load_systems,
    rank,
    read_ranking,
)
from cejudge_dspy.runs import RESULTS, read_records
from tests.support.fakes import fake_lm

GRADES = {"3": "yes", "2": "partly", "1": "no"}


def _quality(text: str) -> str:
    found = re.search(r"quality (\d)", text)
    return found.group(1) if found else "1"


def rules() -> dict[str, Any]:
    return {
        "grade": lambda i: {"fulfils": GRADES[_quality(i["response"])], "feedback": "fb"},
        "score": lambda i: {"answers": ["q -> ok"], "feedback": "fb", "score": int(_quality(i["response"]))},
        # A judge that always prefers the response shown first: every order it runs shows position bias.
        "verdict": lambda i: {"answers": ["q -> a"], "feedback": "fb", "verdict": "A"},
    }


QUALITY = {"best": 3, "good": 2, "weak": 1, "twin": 3}


def long_table(path: Path, systems: dict[str, int], n_prompts: int = 4) -> Path:
    rows = [
        {
            "prompt_id": f"q{p}",
            "system": name,
            "instruction": f"Question number {p}: explain the thing.",
            "response": f"{name} answers question {p} with quality {quality}.",
            "language": "en",
            "score": quality + 0.1 * p,
        }
        for p in range(n_prompts)
        for name, quality in systems.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def load(path: Path, **kw: Any):
    return load_systems(
        load_task_chat(),
        [str(path)],
        fields={"system": "system", "prompt": "prompt_id", "response": "response", "label": "score"},
        human_keys=None,
        **kw,
    )


def load_task_chat():
    from cejudge_dspy.tasks import load_task

    return load_task("chat")


def test_all_pairs_ranking_matches_the_marked_quality(tmp_path: Path) -> None:
    data = long_table(tmp_path / "answers.jsonl", {"best": 3, "good": 2, "weak": 1})
    answers = load(data)
    assert answers.systems == ("best", "good", "weak") and len(answers.prompts) == 4
    lm, engine = fake_lm(rules())
    out = tmp_path / "run"
    with dspy.context(lm=lm):
        summary = rank("chat", answers, out, options=RankOptions(bootstrap=200, seed=1))
    assert [r["system"] for r in summary["systems"]] == ["best", "good", "weak"]
    assert summary["comparisons"]["scheduled"] == 3 * 4 == summary["comparisons"]["judged"]
    # The fit is the half-win Bradley-Terry fit of the recorded verdicts, recomputed here from the records.
    records = {r.id: r for r in read_records(out / RESULTS)}
    recomputed = []
    for r in records.values():
        first, second = r.item.subset.split(" vs ")
        recomputed.append(
            Outcome(r.item.group, first, second, {"A": 1.0, "tie": 0.5, "B": 0.0}[r.result.verdict])
        )
    fit = bradley_terry(answers.systems, recomputed)
    for row in summary["systems"]:
        assert row["strength"] == pytest.approx(fit[row["system"]], abs=1e-6)
        assert row["ci"][0] - 1e-6 <= row["strength"] <= row["ci"][1] + 1e-6
    assert summary["win_rate"]["best"]["weak"] == {"rate": 1.0, "n": 4}
    assert summary["win_rate"]["weak"]["good"] == {"rate": 0.0, "n": 4}
    assert summary["ties"]["n"] == 0
    # Grades decided every pair: no presentation order was run.
    assert summary["position_bias"]["orders"] == 0
    # Human scores (the `score` column): the same order, so both correlations are 1 over the 3 systems.
    human = summary["human"]
    assert human["system_level"]["kendall"] == pytest.approx(1.0)
    assert human["system_level"]["spearman"] == pytest.approx(1.0)
    strengths = {r["system"]: r["strength"] for r in summary["systems"]}
    means = human["system_means"]
    shared = sorted(means)
    expected = stats.kendalltau([strengths[s] for s in shared], [means[s] for s in shared]).statistic
    assert human["system_level"]["kendall"] == pytest.approx(expected)
    assert human["item_level"] == {**human["item_level"], "agreement": 1.0, "n": 12}
    assert read_ranking(out)["systems"] == summary["systems"]
    calls = len(engine.calls)

    # Resume: the same settings judge nothing more.
    with dspy.context(lm=lm):
        again = rank("chat", answers, out, options=RankOptions(bootstrap=200, seed=1))
    assert len(engine.calls) == calls
    assert again["systems"] == summary["systems"]
    # A changed setting is refused with the difference named.
    with dspy.context(lm=lm), pytest.raises(CEJudgeError, match="rank"):
        rank("chat", answers, out, options=RankOptions(schedule="baseline", baseline="good"))
    assert len(engine.calls) == calls


def test_resume_judges_only_what_is_missing(tmp_path: Path) -> None:
    answers = load(long_table(tmp_path / "answers.jsonl", {"best": 3, "good": 2, "weak": 1}))
    lm, engine = fake_lm(rules())
    out = tmp_path / "run"
    with dspy.context(lm=lm):
        rank("chat", answers, out, options=RankOptions(bootstrap=0))
    lines = (out / RESULTS).read_text(encoding="utf-8").splitlines()
    (out / RESULTS).write_text("\n".join(lines[:-2]) + "\n", encoding="utf-8")  # two comparisons lost
    before = len(engine.stage_calls("grade"))
    with dspy.context(lm=lm):
        summary = rank("chat", answers, out, options=RankOptions(bootstrap=0))
    assert summary["comparisons"]["judged"] == 12
    assert len((out / RESULTS).read_text(encoding="utf-8").splitlines()) == 12
    # A fresh program has no shared work from the first session: two comparisons, four grades at most.
    assert 0 < len(engine.stage_calls("grade")) - before <= 4


def test_baseline_schedule_ties_and_position_bias(tmp_path: Path) -> None:
    answers = load(long_table(tmp_path / "answers.jsonl", {"best": 3, "twin": 3, "weak": 1}))
    lm, _ = fake_lm(rules())
    # Equal grades go to the pairwise judgment in both orders; this judge always says "shown first".
    program = run_program("chat", tie_breaker="orders")
    with dspy.context(lm=lm):
        summary = rank(
            "chat",
            answers,
            tmp_path / "run",
            program=program,
            options=RankOptions(schedule="baseline", baseline="best", bootstrap=100),
        )
    assert summary["comparisons"]["scheduled"] == 2 * 4
    assert summary["win_rate"]["best"]["twin"]["n"] == 4 and summary["win_rate"]["twin"]["weak"]["n"] == 0
    # best vs twin: both orders pick the first shown, so the orders disagree: a tie every time.
    assert summary["ties"]["n"] == 4
    assert summary["win_rate"]["best"]["twin"]["rate"] == 0.5
    bias = summary["position_bias"]
    assert bias == {"orders": 8, "first_won": 8, "first_share": 1.0}


def test_adaptive_schedule_spends_its_budget_and_replays(tmp_path: Path) -> None:
    answers = load(long_table(tmp_path / "answers.jsonl", {"best": 3, "twin": 3, "good": 2, "weak": 1}, 6))
    lm, engine = fake_lm(rules())
    options = RankOptions(schedule="adaptive", budget=14, round_size=2, bootstrap=100, seed=5)
    out = tmp_path / "run"
    with dspy.context(lm=lm):
        summary = rank("chat", answers, out, options=options)
    n = summary["comparisons"]["scheduled"]
    assert 6 <= n <= 14  # the first round (every pair once) and rounds up to the budget
    assert summary["comparisons"]["budget"] == 14
    assert summary["win_rate"]["best"]["twin"]["n"] >= 2  # the tied pair overlaps most: it got more
    ids = [json.loads(line)["id"] for line in (out / RESULTS).read_text(encoding="utf-8").splitlines()]
    assert len(ids) == n == len(set(ids))
    calls = len(engine.calls)
    with dspy.context(lm=lm):
        again = rank("chat", answers, out, options=options)
    assert len(engine.calls) == calls  # the rounds replay from the records
    assert again["comparisons"]["scheduled"] == n


def test_pointwise_task_ranks_mean_scores(tmp_path: Path) -> None:
    rows = [
        {
            "doc_id": f"d{d}",
            "system_id": name,
            "source": f"Article {d} about a topic.",
            "system_output": f"Summary by {name} of article {d}, quality {q}.",
            "scores": {"coherence": q, "consistency": q, "fluency": q, "relevance": q + d},
        }
        for d in range(3)
        for name, q in (("M1", 3), ("M2", 1), ("M3", 2))
    ]
    path = tmp_path / "summeval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    from cejudge_dspy.tasks import load_task

    answers = load_systems(load_task("summeval"), [str(path)], fields={"system": "system_id"})
    assert answers.prompts == ("d0", "d1", "d2")
    lm, _ = fake_lm(rules())
    with dspy.context(lm=lm):
        summary = rank("summeval", answers, tmp_path / "run", options=RankOptions(bootstrap=100))
    rows_ = {r["system"]: r for r in summary["systems"]}
    assert [r["system"] for r in summary["systems"]] == ["M1", "M3", "M2"]
    assert rows_["M1"]["mean_score"] == 3 and rows_["M1"]["ci"] == [3.0, 3.0]
    assert summary["human"]["system_level"]["spearman"] == pytest.approx(1.0)
    assert summary["human"]["item_level"]["n"] == 9
    with pytest.raises(InputError, match="pointwise"):
        RankOptions(schedule="adaptive").check(load_task("summeval"))


def test_one_file_per_system(tmp_path: Path) -> None:
    for name, q in (("alpha", 3), ("beta", 1)):
        rows = [
            {
                "id": f"q{p}",
                "instruction": f"Question {p}?",
                "response": f"{name} quality {q}",
                "language": "en",
            }
            for p in range(3)
        ]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = load_task_chat()
    answers = load_systems(
        spec, [f"A={tmp_path / 'alpha.jsonl'}", str(tmp_path / "beta.jsonl")], fields={"response": "response"}
    )
    assert answers.systems == ("A", "beta") and answers.prompts == ("q0", "q1", "q2")
    lm, _ = fake_lm(rules())
    with dspy.context(lm=lm):
        summary = rank("chat", answers, tmp_path / "run", options=RankOptions(bootstrap=0))
    assert summary["systems"][0]["system"] == "A" and summary["systems"][0]["ci"] is None


def test_bad_answers_are_one_line(tmp_path: Path) -> None:
    path = long_table(tmp_path / "answers.jsonl", {"best": 3, "good": 2})
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="answers prompt 'q0' twice"):
        load(path)
    with pytest.raises(InputError, match="no system 'nobody'"):
        load(long_table(tmp_path / "ok.jsonl", {"best": 3, "good": 2}), systems=["nobody"])
    # One file per system: the same prompt id must show both systems the same instruction.
    for name, text in (("alpha", "Question?"), ("beta", "Another question?")):
        row = {"id": "q0", "instruction": text, "response": f"{name} says", "language": "en"}
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="another instruction than system 'alpha'"):
        load_systems(
            load_task_chat(),
            [str(tmp_path / "alpha.jsonl"), str(tmp_path / "beta.jsonl")],
            fields={"response": "response"},
        )
    # A long table without the system column says which flag names it.
    with pytest.raises(DataError, match=r"column 'who' for system not found; fix: --field system=COLUMN\."):
        load_systems(load_task_chat(), [str(path)], fields={"system": "who", "response": "response"})


def test_per_language_rankings(tmp_path: Path) -> None:
    path = long_table(tmp_path / "answers.jsonl", {"best": 3, "good": 2, "weak": 1}, 4)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["language"] = "de" if row["prompt_id"] in ("q0", "q1") else "en"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    answers = load(path)
    lm, _ = fake_lm(rules())
    with dspy.context(lm=lm):
        summary = rank("chat", answers, tmp_path / "run", options=RankOptions(bootstrap=50))
    per = summary["per_language"]
    assert set(per) == {"de", "en"}
    for block in per.values():
        assert block["comparisons"] == 6
        assert [r["system"] for r in block["systems"]] == ["best", "good", "weak"]
        assert all(r["ci"] is not None for r in block["systems"])
