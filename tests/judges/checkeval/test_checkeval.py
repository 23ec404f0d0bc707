"""CheckEval with a scripted fake LM: checklist building, answer parsing, scoring and agreement.

The arithmetic of every score and correlation is worked out by hand in the comments.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import dspy
import pytest

from cejudge_dspy.data import Item
from cejudge_dspy.errors import DataError, InputError, TaskError
from cejudge_dspy.judges import build_program, method_names
from cejudge_dspy.judges.checkeval import (
    CheckEvalJudge,
    Checklist,
    Question,
    build_checklist,
    default_checklist_path,
    parse_answer,
    share_of_yes,
)
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.metrics import checkeval_agreement as agreement
from cejudge_dspy.metrics import per_group_correlation
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task
from cejudge_dspy.tasks._parsing import parse_task
from tests import support
from tests.support.fakes import fake_lm

TOY = {
    "name": "toy",
    "version": 3,
    "mode": "pointwise",
    "metric": "spearman",
    "task": "Judge a summary of an article.",
    "criteria": "A good summary is coherent and fluent.",
    "dimensions": [
        {
            "name": "coherence",
            "definition": "The summary flows.",
            "human_key": "coh",
            "subdimensions": [
                {
                    "name": "order",
                    "definition": "Logical order.",
                    "seeds": ["Is the order logical?", "Do the sentences connect?"],
                },
                {"name": "unity", "definition": "One topic.", "seeds": ["Is it about one topic?"]},
            ],
        },
        {
            "name": "fluency",
            "definition": "Sentences are well formed.",
            "subdimensions": [
                {"name": "grammar", "definition": "Grammar.", "seeds": ["Is it grammatical?"]},
            ],
        },
    ],
}
SPEC = parse_task(TOY)
ITEM = {"instruction": "The article text.", "response": "The summary text."}


def _questions(inputs: dict[str, str], field: str = "questions") -> list[str]:
    return json.loads(inputs[field])


def _augment_rules() -> dict[str, Any]:
    def diversify(i: dict[str, str]) -> dict[str, Any]:
        # The third repeats a seed of "order" up to case and punctuation: dropped without an LLM call.
        return {
            "diversified": [
                f"Is the {i['subdimension']} varied?",
                "Does the text contain errors?",
                "is the ORDER logical",
            ]
        }

    def elaborate(i: dict[str, str]) -> dict[str, Any]:
        return {
            "elaborated": [
                f"Is the first {i['subdimension']} step clear?",
                "Is the spelling correct?",
                "Are the sentences connected?",
            ]
        }

    def filter_(i: dict[str, str]) -> dict[str, Any]:
        decisions = []
        for c in _questions(i, "candidates"):
            if "errors" in c:
                decisions.append("Yes_means_worse.")  # normalised by the stage
            elif "spelling" in c and i["dimension"] == "coherence":
                decisions.append("off_dimension")
            elif "connected" in c:
                decisions.append("DUPLICATE")
            else:
                decisions.append("keep")
        return {"decisions": decisions}

    return {"diversify": diversify, "elaborate": elaborate, "filter": filter_}


def _by_text(checklist: Checklist, sub: str) -> dict[str, Question]:
    return {q.text: q for q in checklist.questions if q.subdimension == sub}


# -- building --------------------------------------------------------------------------------------


def test_augmentation_and_filtering_keep_and_drop_the_right_questions() -> None:
    lm, engine = fake_lm(_augment_rules())
    with dspy.context(lm=lm):
        checklist = build_checklist(SPEC)
    order = _by_text(checklist, "order")
    assert [q.text for q in checklist.questions if q.origin == "seed"] == [
        "Is the order logical?",
        "Do the sentences connect?",
        "Is it about one topic?",
        "Is it grammatical?",
    ]
    assert all(q.kept and q.drop_reason is None for q in checklist.questions if q.origin == "seed")
    assert order["Is the order varied?"] == Question(
        "Is the order varied?", "coherence", "order", "diversified"
    )
    assert (
        order["Is the first order step clear?"].kept
        and order["Is the first order step clear?"].origin == "elaborated"
    )
    assert (
        order["Does the text contain errors?"].kept,
        order["Does the text contain errors?"].drop_reason,
    ) == (False, "yes_means_worse")
    assert order["Is the spelling correct?"].drop_reason == "off_dimension"
    assert order["Are the sentences connected?"].drop_reason == "duplicate"
    assert order["is the ORDER logical"].drop_reason == "duplicate"
    # The same question is on-dimension for fluency, so the filter keeps it there.
    assert _by_text(checklist, "grammar")["Is the spelling correct?"].kept
    # One call of each stage per sub-dimension; the exact repeat never reached the filter.
    assert [len(engine.stage_calls(s)) for s in ("diversify", "elaborate", "filter")] == [3, 3, 3]
    (order_filter,) = [c for c in engine.stage_calls("filter") if c.inputs["subdimension"] == "order"]
    assert "is the ORDER logical" not in _questions(order_filter.inputs, "candidates")
    assert "Is the order varied?" in _questions(order_filter.inputs, "candidates")
    # Both augmentations start from the seeds alone.
    assert all("varied" not in json.dumps(c.inputs) for c in engine.stage_calls("elaborate"))
    assert checklist.augmented and checklist.built_with == "fake/judge" and checklist.failures == {}
    # Redundancy spans the dimension: "is the ORDER logical" repeats a seed of "order", so under "unity"
    # (same dimension) it is an exact repeat too, dropped without a call; under fluency it is reviewed.
    assert _by_text(checklist, "unity")["is the ORDER logical"].drop_reason == "duplicate"
    assert _by_text(checklist, "grammar")["is the ORDER logical"].kept
    (unity_filter,) = [c for c in engine.stage_calls("filter") if c.inputs["subdimension"] == "unity"]
    assert "is the ORDER logical" not in _questions(unity_filter.inputs, "candidates")
    # The unity filter sees every seed of coherence and what "order" kept before it.
    assert _questions(unity_filter.inputs, "accepted") == [
        "Is the order logical?",
        "Do the sentences connect?",
        "Is it about one topic?",
        "Is the order varied?",
        "Is the first order step clear?",
    ]
    # duplicates: order 2 (the exact repeat, "connected"), unity 2 (likewise), grammar 1; worse: 1 each.
    assert checklist.counts()["dropped:duplicate"] == 5
    assert checklist.counts()["dropped:yes_means_worse"] == 3


def test_no_augmentation_uses_the_seeds_without_any_call() -> None:
    lm, engine = fake_lm(_augment_rules())
    with dspy.context(lm=lm):
        checklist = build_checklist(SPEC, augment=False)
    assert checklist == Checklist.from_seeds(SPEC)
    assert engine.calls == []
    assert checklist.groups() == [
        ("coherence", "order", ["Is the order logical?", "Do the sentences connect?"]),
        ("coherence", "unity", ["Is it about one topic?"]),
        ("fluency", "grammar", ["Is it grammatical?"]),
    ]


def test_the_filter_judges_redundancy_across_sub_dimensions() -> None:
    def filter_(i: dict[str, str]) -> dict[str, Any]:
        # "Is the unity varied?" asks what "Is the order varied?" (kept for "order") asks, in other words.
        accepted = _questions(i, "accepted")
        return {
            "decisions": [
                "duplicate" if c.replace(i["subdimension"], "order") in accepted else "keep"
                for c in _questions(i, "candidates")
            ]
        }

    lm, _ = fake_lm({**_augment_rules(), "filter": filter_})
    with dspy.context(lm=lm):
        checklist = build_checklist(SPEC)
    assert _by_text(checklist, "order")["Is the order varied?"].kept
    assert _by_text(checklist, "unity")["Is the unity varied?"].drop_reason == "duplicate"
    # Another dimension is not compared: fluency's own "varied" question stays.
    assert _by_text(checklist, "grammar")["Is the grammar varied?"].kept


def test_failed_filter_call_is_retried_one_candidate_per_call_and_recorded() -> None:
    # One decision whatever the candidates: wrong for a list, right for a list of one.
    rules = {**_augment_rules(), "filter": lambda i: {"decisions": ["keep"]}}
    lm, engine = fake_lm(rules)
    with dspy.context(lm=lm):
        checklist = build_checklist(SPEC)
    assert set(checklist.failures) == {
        "coherence/order Filter",
        "coherence/unity Filter",
        "fluency/grammar Filter",
    }
    order = checklist.failures["coherence/order Filter"]
    assert order.startswith("invalid output (1 decisions for 5 candidates)")
    assert order.endswith("retried one candidate per call: 5 of 5 reviewed")
    # Nothing went unreviewed: every candidate got its own decision ("keep" from this filter).
    assert not any(q.drop_reason == "filter_failed" for q in checklist.questions)
    assert _by_text(checklist, "order")["Does the text contain errors?"].kept
    # The retry of "unity" saw what "order" kept, so its repeats of those were dropped before any call:
    # unity sends its two new questions, grammar all six of its own.
    singles = [c for c in engine.stage_calls("filter") if len(_questions(c.inputs, "candidates")) == 1]
    assert len(singles) == 5 + 2 + 6
    assert checklist.failures["coherence/unity Filter"].endswith("2 of 2 reviewed")


def test_filter_failing_even_one_at_a_time_reports_every_unreviewed_question() -> None:
    lm, _ = fake_lm({**_augment_rules(), "filter": lambda i: "not a decision list"})
    with dspy.context(lm=lm):
        checklist = build_checklist(SPEC)
    generated = [q for q in checklist.questions if q.origin != "seed"]
    # No candidate vanishes: each is in the file, left out with its reason until a person keeps it.
    assert len(generated) == 18 and not any(q.kept for q in generated)
    assert {q.drop_reason for q in generated} == {"filter_failed", "duplicate"}
    assert "5 left unreviewed (filter_failed; last: " in checklist.failures["coherence/order Filter"]
    assert checklist.counts()["dropped:filter_failed"] == 5 + 5 + 6


def test_failed_augmentation_is_recorded_and_the_rest_is_kept() -> None:
    lm, _ = fake_lm({**_augment_rules(), "diversify": lambda i: "not a list at all"})
    with dspy.context(lm=lm):
        checklist = build_checklist(SPEC)
    assert {q.origin for q in checklist.kept()} == {"seed", "elaborated"}
    assert "fluency/grammar Diversify" in checklist.failures


def test_task_without_dimensions_is_refused() -> None:
    with pytest.raises(TaskError, match="declares no"):
        Checklist.from_seeds("literary")


# -- save / load -----------------------------------------------------------------------------------


def test_checklist_round_trip_and_mismatch_refusal(tmp_path: Path) -> None:
    lm, _ = fake_lm(_augment_rules())
    with dspy.context(lm=lm):
        built = build_checklist(SPEC)
    path = built.save(tmp_path / "toy.json")
    saved = json.loads(path.read_text())
    assert (saved["task"], saved["version"], saved["format"]) == ("toy", 3, 1)
    assert Checklist.load(SPEC, path) == built
    with pytest.raises(TaskError, match="version 3, not 'toy' version 4"):
        Checklist.load(parse_task({**TOY, "version": 4}), path)
    with pytest.raises(TaskError, match="built for task 'toy'"):
        Checklist.load(parse_task({**TOY, "name": "other"}), path)
    with pytest.raises(DataError, match="cejudge checklist build --task toy"):
        Checklist.load(SPEC, tmp_path / "missing.json")
    renamed = {**TOY, "dimensions": [TOY["dimensions"][1]]}  # coherence no longer declared
    with pytest.raises(TaskError, match="does not declare"):
        Checklist.load(parse_task(renamed), path)


def test_default_path_and_the_registry_pick_up_a_saved_checklist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CEJUDGE_CHECKLISTS", str(tmp_path))
    assert default_checklist_path("summeval") == tmp_path / "summeval.json"
    assert build_program(SPEC, "checkeval").checklist.augmented is False  # no file: the seeds
    lm, _ = fake_lm(_augment_rules())
    with dspy.context(lm=lm):
        build_checklist(SPEC).save()
    assert (tmp_path / "toy.json").is_file()
    assert build_program(SPEC, "checkeval").checklist.augmented is True
    assert "checkeval" in method_names()


# -- answers and scores ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("yes", "yes"),
        ("YES.", "yes"),
        ("Yes, because the order is clear.", "yes"),
        ("**Yes**", "yes"),
        ("no", "no"),
        ("No.", "no"),
        ("2. no", "no"),
        ("Q3: Yes", "yes"),
        ("Answer: NO", "no"),
        ("Is the order logical? Yes", "yes"),
        (True, "yes"),
        (False, "no"),
        ("not sure", None),
        ("Not really", None),
        ("I don't know", None),
        ("unknown", None),
        ("No idea", None),
        ("Nothing is wrong", None),
        ("yes/no", None),
        ("Yes or no", None),
        ("", None),
        ("maybe", None),
        (None, None),
    ],
)
def test_parse_answer(raw: object, expected: str | None) -> None:
    assert parse_answer(raw) == expected


def test_share_of_yes_excludes_missing() -> None:
    assert share_of_yes(["yes", "no", "yes", None]) == pytest.approx(2 / 3)  # 2 yes of 3 answered
    assert share_of_yes([None, None]) is None and share_of_yes([]) is None
    with pytest.raises(InputError, match="parse it first"):
        share_of_yes(["Yes"])


def _answer_rule(table: dict[str, str]) -> Any:
    return lambda i: {"answers": [table[q] for q in _questions(i) if q in table]}


def test_judge_makes_one_concurrent_call_per_subdimension_and_scores_by_hand() -> None:
    lm, engine = fake_lm(
        {
            "answer": _answer_rule(
                {
                    "Is the order logical?": "Yes.",
                    "Do the sentences connect?": "no",
                    "Is it about one topic?": "YES, clearly",
                    "Is it grammatical?": "No, several errors.",
                }
            )
        },
        delay=0.05,
    )
    with dspy.context(lm=lm):
        result = CheckEvalJudge(SPEC)(**ITEM).result
    calls = engine.stage_calls("answer")
    assert sorted(tuple(_questions(c.inputs)) for c in calls) == [
        ("Is it about one topic?",),
        ("Is it grammatical?",),
        ("Is the order logical?", "Do the sentences connect?"),
    ]
    assert engine.max_in_flight == 3
    assert {c.inputs["subdimension"] for c in calls} == {"order", "unity", "grammar"}
    # coherence: yes, no, yes -> 2/3; fluency: no -> 0/1; overall: 2 yes of 4 answered.
    assert result.ok and result.method == "checkeval"
    assert result.dimension_scores == pytest.approx({"coherence": 2 / 3, "fluency": 0.0})
    assert result.score == pytest.approx(0.5)
    assert [a["answer"] for a in result.details["answers"]] == ["yes", "no", "yes", "no"]
    assert result.usage.calls == 3 and result.usage.by_stage == {"Answer": 3}
    assert JudgeResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result


def test_missing_and_unreadable_answers_are_recorded_never_guessed() -> None:
    lm, _ = fake_lm(
        {
            "answer": _answer_rule(
                {
                    # "Do the sentences connect?" gets no answer: the list is one short.
                    "Is the order logical?": "Yes.",
                    "Is it about one topic?": "I don't know",
                    "Is it grammatical?": "No, it has errors",
                }
            )
        }
    )
    with dspy.context(lm=lm):
        result = CheckEvalJudge(SPEC)(**ITEM).result
    answers = {a["question"]: a["answer"] for a in result.details["answers"]}
    assert answers == {
        "Is the order logical?": "yes",
        "Do the sentences connect?": None,
        "Is it about one topic?": None,
        "Is it grammatical?": "no",
    }
    # coherence: 1 yes of 1 answered; fluency: 0 of 1; overall 1 of 2. A guessed No would give 1/3.
    assert result.dimension_scores == {"coherence": 1.0, "fluency": 0.0}
    assert result.score == 0.5 and result.details["n_missing"] == 2
    assert set(result.details["failures"]) == {"coherence/unity"}  # no readable answer, even after the retry


def test_failed_subdimension_leaves_other_dimensions_scored() -> None:
    def rule(i: dict[str, str]) -> Any:
        return "garbage" if i["dimension"] == "fluency" else {"answers": ["yes"] * len(_questions(i))}

    lm, _ = fake_lm({"answer": rule})
    with dspy.context(lm=lm):
        result = CheckEvalJudge(SPEC)(**ITEM).result
    assert result.ok and result.dimension_scores == {"coherence": 1.0} and result.score == 1.0
    assert "fluency/grammar" in result.details["failures"]


def test_item_is_unparsed_only_when_no_dimension_is_scored() -> None:
    lm, _ = fake_lm({"answer": lambda i: {"answers": ["maybe"] * len(_questions(i))}})
    with dspy.context(lm=lm):
        result = CheckEvalJudge(SPEC)(**ITEM).result
    assert result.status == "unparsed" and result.score is None and result.error_stage == "Answer"
    assert result.method == "checkeval" and len(result.details["answers"]) == 4


def test_judge_asks_only_kept_questions_of_a_built_checklist() -> None:
    lm, engine = fake_lm({**_augment_rules(), "answer": lambda i: {"answers": ["yes"] * len(_questions(i))}})
    with dspy.context(lm=lm):
        checklist = build_checklist(SPEC)
        result = CheckEvalJudge(SPEC, checklist=checklist)(**ITEM).result
    asked = [q for c in engine.stage_calls("answer") for q in _questions(c.inputs)]
    assert sorted(asked) == sorted(q.text for q in checklist.kept())
    assert "Does the text contain errors?" not in asked
    assert result.details["checklist"] == {"augmented": True, "built_with": "fake/judge"}


def test_judge_refuses_a_checklist_of_another_task() -> None:
    with pytest.raises(TaskError, match="built for task 'toy'"):
        CheckEvalJudge(parse_task({**TOY, "name": "other"}), checklist=Checklist.from_seeds(SPEC))


def test_the_hybrid_method_is_gone() -> None:
    # It answered CE-Judge's open questions yes/no although a Yes there need not mean better.
    assert "cejudge-checkeval" not in method_names()
    with pytest.raises(TaskError, match="unknown method 'cejudge-checkeval'"):
        build_program("literary", "cejudge-checkeval")


# -- correlation and agreement ---------------------------------------------------------------------


def test_per_group_correlation_by_hand() -> None:
    scores = [1, 2, 3, 1, 2, 3, 2, 2, 5, None]
    humans = [1, 2, 3, 1, 3, 2, 1, 3, 4, 9]
    groups = ["a", "a", "a", "b", "b", "b", "c", "c", "d", "a"]
    # a: identical ranks -> 1. b: rank differences 0, -1, 1 -> rho = 1 - 6*2/(3*8) = 0.5;
    # Kendall: 2 concordant, 1 discordant of 3 pairs -> 1/3; Pearson: sum(xy)=1 / sqrt(2*2) -> 0.5.
    # c: constant scores and d: one item are undefined and left out; the None score is missing.
    rho = per_group_correlation(scores, humans, groups, "spearman")
    assert rho.value == pytest.approx(0.75) and (rho.n, rho.n_excluded) == (2, 2)
    assert rho.extra == {"n_groups": 4, "n_items_missing": 1}
    assert per_group_correlation(scores, humans, groups, "kendall").value == pytest.approx((1 + 1 / 3) / 2)
    assert per_group_correlation(scores, humans, groups, "pearson").value == pytest.approx(0.75)
    flat = per_group_correlation([1, 1, 2], [1, 2, 3], ["a", "a", "b"])
    assert math.isnan(flat.value) and "no group" in flat.reason
    with pytest.raises(InputError):
        per_group_correlation([1], [1], ["a"], "cosine")


def _result(score: float | None, answers: list[str | None]) -> JudgeResult:
    rows = [
        {"dimension": "d", "subdimension": "s", "question": f"q{i}", "answer": a}
        for i, a in enumerate(answers)
    ]
    status = "ok" if score is not None else "unparsed"
    return JudgeResult(
        mode="pointwise", status=status, method="checkeval", score=score, details={"answers": rows}
    )


def test_agreement_by_hand() -> None:
    # Interval alpha, runs [0, 0] and [1, 1]: o = [[0, 2], [2, 0]], n_c = [2, 2], n = 4;
    # D_o = 4, D_e = (4 + 4) / 3 -> alpha = 1 - 4 / (8/3) = -0.5.
    # Fleiss: answers (yes, yes), (yes, no), (no, no) -> P_bar = 2/3, P_e = 0.5 -> kappa = 1/3.
    run1 = [_result(0.0, ["yes", "yes", "no"]), _result(0.0, [])]
    run2 = [_result(1.0, ["yes", "no", "no"]), _result(1.0, [])]
    out = agreement([run1, run2], humans=[1, 2])
    assert out["n_runs"] == 2 and out["n_items"] == 2
    assert out["krippendorff_alpha"]["value"] == pytest.approx(-0.5)
    assert out["fleiss_kappa"]["value"] == pytest.approx(1 / 3) and out["fleiss_kappa"]["n"] == 3
    # Constant scores within each run: no correlation is defined.
    assert out["human_correlation"]["per_run"][0]["value"] is None and out["human_correlation"]["min"] is None


def test_agreement_aligns_runner_records_by_id_and_spreads_the_human_correlation() -> None:
    labels = {"x": {"coh": 1.0}, "y": {"coh": 2.0}, "z": {"coh": 3.0}}

    def records(scores: dict[str, float | None]) -> list[Record]:
        return [
            Record(
                id=k,
                task="toy",
                method="checkeval",
                status="ok" if v is not None else "error",
                item=Item(id=k, mode="pointwise", instruction="", label=labels[k]),
                result=_result(v, ["yes"]) if v else None,
            )
            for k, v in scores.items()
        ]

    run1 = records({"x": 0.1, "y": 0.5, "z": 0.9})  # rho = 1
    run2 = [r.to_dict() for r in records({"z": 0.1, "y": 0.5, "x": 0.9})]  # rho = -1 once aligned by id
    run3 = records({"y": None, "x": 0.2, "z": 0.8})  # y failed with an error: rho = 1 on x, z
    out = agreement([run1, run2, run3], human_key="coh")
    corr = out["human_correlation"]
    assert [r["value"] for r in corr["per_run"]] == pytest.approx([1.0, -1.0, 1.0])
    # mean 1/3; sample std = sqrt(((2/3)^2 + (4/3)^2 + (2/3)^2) / 2) = sqrt(4/3)
    assert (corr["min"], corr["max"]) == (-1.0, 1.0)
    assert corr["mean"] == pytest.approx(1 / 3) and corr["std"] == pytest.approx(math.sqrt(4 / 3))
    assert out["krippendorff_alpha"]["extra"]["n_missing"] == 1
    # Every run said yes to the one question of x and z, and y is missing in run 3: no variation.
    assert out["fleiss_kappa"]["n"] == 2 and out["fleiss_kappa"]["value"] is None
    with pytest.raises(InputError, match="human_key"):
        agreement([run1, run2])


def test_agreement_refuses_unaligned_runs() -> None:
    with pytest.raises(InputError, match="different lengths"):
        agreement([[_result(0.5, [])], [_result(0.5, []), _result(0.5, [])]])


# -- declarations ----------------------------------------------------------------------------------

DECLARED = {
    "summeval": ("coherence", "consistency", "fluency", "relevance"),
    "topical_chat": ("naturalness", "coherence", "engagingness", "groundedness"),
}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_declarations(name: str) -> None:
    spec = load_task(name)
    assert (spec.mode, spec.metric) == ("pointwise", "spearman")
    assert tuple(d.name for d in spec.dimensions) == DECLARED[name]
    assert all(d.human_key == d.name and d.definition.strip() for d in spec.dimensions)
    seeds = [q for d in spec.dimensions for s in d.subdimensions for q in s.seeds]
    assert all(q.endswith("?") for q in seeds) and len(seeds) == len(set(seeds))
    assert all(len(d.subdimensions) >= 2 for d in spec.dimensions)
    assert {"instruction", "response", "label", "group"} <= set(spec.dataset.fields)
    if name == "topical_chat":  # the knowledge fact reaches the judge with the dialogue
        assert "{context}" in spec.dataset.fields["instruction"]


SHARED = support.SHARED_DATA


@pytest.mark.shared_data
@pytest.mark.parametrize("name", sorted(DECLARED))
def test_declared_columns_and_human_keys_exist_in_the_shared_data(name: str) -> None:
    path = SHARED / f"{name}_sample.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    spec = load_task(name)
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # A mapping is a column or a template such as "{doc_id}/{system_id}".
    columns = {c for v in spec.dataset.fields.values() for c in (re.findall(r"\{([^{}]+)\}", v) or [v])}
    assert rows
    for row in rows:
        assert columns <= set(row)
        assert all(isinstance(row["scores"][d.human_key], (int, float)) for d in spec.dimensions)
