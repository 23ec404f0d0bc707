"""Small run directories written record by record, for the viewer's tests: every outcome, both
orders with checklists, an unparsed stage with its raw output, an error, two languages, a pointwise
run with language pairs, and a CheckEval run with its answers. The values are chosen so that the
expected tables can be counted by hand (see test_view_report.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cejudge_dspy.data import Item
from cejudge_dspy.judges.verdicts import JudgeResult, OrderResult
from cejudge_dspy.runs import RESULTS, RUN, Record
from cejudge_dspy.usage import Usage

# id -> (language, gold, verdict AB, verdict BA); None verdicts: unparsed ("U") or error ("E").
CHAT_A = {
    "p1": ("en", "A", "A", "A"),  # correct
    "p2": ("en", "B", "A", "A"),  # wrong
    "p3": ("en", "A", "A", "B"),  # tie (orders disagree)
    "p4": ("de", "tie", "B", "B"),  # gold tie
    "p5": ("de", "B", "U", None),  # unparsed at the checklist stage
    "p6": ("de", "A", "E", None),  # error
}
# The second run differs on p2 (now right) and p5 (now parsed): the two disagreements.
CHAT_B = {**CHAT_A, "p2": ("en", "B", "B", "B"), "p5": ("de", "B", "B", "B")}
SEARCH_WORD = "zeppelin"  # appears in p3's instruction only


def _usage(calls: int) -> Usage:
    return Usage(
        calls=calls, cached=1, prompt_tokens=100 * calls, completion_tokens=10 * calls, by_stage={"Judge": 2}
    )


def _pairwise(item_id: str, lang: str, gold: str, ab: str | None, ba: str | None, method: str) -> Record:
    item = {
        "id": item_id,
        "mode": "pairwise",
        "instruction": f"Instruction of {item_id}" + (f" about a {SEARCH_WORD}" if item_id == "p3" else ""),
        "response": None,
        "response_a": f"Answer A to {item_id}",
        "response_b": f"Answer B to {item_id}",
        "language": lang,
        "response_language": None,
        "label": gold,
        "subset": None,
        "group": None,
    }
    if ab == "E":
        return Record(
            item_id,
            "chat",
            method,
            "error",
            Item.from_dict(item),
            None,
            error="boom: connection reset",
            seconds=0.5,
        )
    checklists = {
        "a": [f"{item_id} a q1?", f"{item_id} a q2?", f"{item_id} a q3?"],
        "b": [f"{item_id} b q1?"],
    }
    parts = {
        "a": {"response_to_instruction": checklists["a"][:2], "instruction_to_response": checklists["a"][2:]},
        "b": {"response_to_instruction": checklists["b"], "instruction_to_response": []},
    }
    common: dict[str, Any] = {
        "checklists": checklists,
        "checklist_parts": parts,
        "concepts": {"instruction": ["clarity"], "a": ["facts"], "b": ["tone"]},
        "translations": {"instruction": f"[English] Instruction of {item_id}"} if lang != "en" else {},
        "usage": _usage(9),
        "method": method,
    }
    if ab == "U":
        result = JudgeResult(
            mode="pairwise",
            status="unparsed",
            error="no checklist questions in the output",
            error_stage="ChecklistFromResponse",
            details={"raw": "I think the answer is {not json"},
            **common,
        )
        return Record(item_id, "chat", method, "unparsed", Item.from_dict(item), result, seconds=0.25)
    orders = [
        OrderResult("AB", ab, ab, answers=["q1 -> yes"], feedback=f"AB feedback {item_id}"),
        OrderResult(
            "BA", ba, "B" if ba == "A" else "A", answers=["q1 -> no"], feedback=f"BA feedback {item_id}"
        ),
    ]
    verdict = ab if ab == ba else "tie"
    result = JudgeResult(
        mode="pairwise",
        status="ok",
        verdict=verdict,
        consistent=ab == ba,
        feedback=orders[0].feedback,
        orders=orders,
        **common,
    )
    return Record(item_id, "chat", method, "ok", Item.from_dict(item), result, seconds=0.125)


# id -> (language, response language, gold, score)
LIT = {
    "l1": ("en", "de", 60.0, 3),
    "l2": ("en", "de", 80.0, 5),
    "l3": ("ru", "en", 30.0, 2),
    "l4": ("ru", "en", 20.0, 4),
}


def _pointwise(item_id: str, lang: str, tgt: str, gold: float, score: int) -> Record:
    item = {
        "id": item_id,
        "mode": "pointwise",
        "instruction": f"Source {item_id}",
        "response": f"Translation {item_id}",
        "response_a": None,
        "response_b": None,
        "language": lang,
        "response_language": tgt,
        "label": gold,
        "subset": None,
        "group": None,
    }
    result = JudgeResult(
        mode="pointwise",
        status="ok",
        score=score,
        feedback=f"feedback {item_id}",
        answers=["q -> partly"],
        checklists={"response": ["is it faithful?", "is it fluent?"]},
        translations={"response": f"[English] Translation {item_id}"},
        usage=_usage(6),
    )
    return Record(item_id, "literary", "cejudge", "ok", Item.from_dict(item), result, seconds=0.2)


# id -> answers to (coherence question, fluency question); None is unanswered.
SE = {"s1": ("yes", "yes"), "s2": ("no", "yes"), "s3": ("yes", None)}
SE_QUESTIONS = (
    ("coherence", "logical order", "In order?"),
    ("fluency", "grammar and spelling", "Grammatical?"),
)


def _checkeval(item_id: str, answers: tuple[str | None, str | None], n: int) -> Record:
    item = {
        "id": item_id,
        "mode": "pointwise",
        "instruction": f"Document {item_id}",
        "response": f"Summary {item_id}",
        "response_a": None,
        "response_b": None,
        "language": "en",
        "response_language": None,
        "label": {"coherence": 1.0 + n, "consistency": 2.0 + n, "fluency": 3.0 - n, "relevance": 4.0},
        "subset": None,
        "group": "doc1",
    }
    rows = [
        {"dimension": d, "subdimension": s, "question": q, "answer": a, "raw": a}
        for (d, s, q), a in zip(SE_QUESTIONS, answers, strict=True)
    ]
    scores = {d: float(a == "yes") for (d, _, _), a in zip(SE_QUESTIONS, answers, strict=True) if a}
    yes = [a for a in answers if a]
    result = JudgeResult(
        mode="pointwise",
        status="ok",
        method="checkeval",
        score=sum(a == "yes" for a in yes) / len(yes),
        dimension_scores=scores,
        usage=_usage(2),
        details={"answers": rows, "failures": {}, "warnings": [], "n_missing": answers.count(None)},
    )
    return Record(item_id, "summeval", "checkeval", "ok", Item.from_dict(item), result, seconds=0.3)


def write_run(path: Path, config: dict[str, Any], records: list[Record]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / RUN).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    with (path / RESULTS).open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
    return path


def _config(task: str, method: str) -> dict[str, Any]:
    return {
        "task": task,
        "method": method,
        "lm": "simulated:0",
        "orders": "both",
        "program": "base",
        "seed": 42,
    }


def chat_run(
    root: Path, name: str = "chat-a", spec: dict[str, tuple] = CHAT_A, method: str = "cejudge"
) -> Path:
    records = [_pairwise(i, *v, method=method) for i, v in spec.items()]
    return write_run(root / name, _config("chat", method), records)


def literary_run(root: Path) -> Path:
    return write_run(
        root / "lit", _config("literary", "cejudge"), [_pointwise(i, *v) for i, v in LIT.items()]
    )


def checkeval_run(root: Path) -> Path:
    records = [_checkeval(i, a, n) for n, (i, a) in enumerate(SE.items())]
    return write_run(root / "se", _config("summeval", "checkeval"), records)


# --- runs judged with token probabilities (see test_rules.py for the pairwise arithmetic) -------------

# id -> (gold, verdict AB, verdict BA (mapped back), P(first better) AB, P(first better) BA)
PROB_PAIRS = {
    "i1": ("A", "A", "A", 0.9, 0.2),  # p(A) 0.85 -> A; argmax A
    "i2": ("A", "A", "B", 0.7, 0.6),  # 0.55 -> A; argmax tie
    "i3": ("B", "A", "B", 0.62, 0.8),  # 0.41 -> B; argmax tie
    "i4": ("B", "A", "A", 0.7, 0.45),  # 0.625 -> A; argmax A
    "i5": ("tie", "A", "B", 0.555, 0.52),  # 0.5175 -> A; argmax tie
    "i6": ("A", "B", "B", 0.3, 0.6),  # 0.35 -> B; argmax B
}


def probability_pair(
    rid: str, gold: str, ab: str, ba: str, p_ab: float, p_ba: float, rule: str = "probability"
) -> Record:
    """A pairwise record as a judge writes it: per-order P(first better), p(A) over both orders with
    tie band 0, and the headline decided by `rule` with the argmax verdict kept beside it."""
    from cejudge_dspy.judges._machinery._probability_readings import pairwise_probabilities
    from cejudge_dspy.judges.verdicts import decide, reconcile, swap_verdict

    orders = [
        OrderResult("AB", ab, ab, p_first=p_ab, feedback=f"AB feedback {rid}"),  # type: ignore[arg-type]
        OrderResult("BA", ba, swap_verdict(ba), p_first=p_ba, feedback=f"BA feedback {rid}"),  # type: ignore[arg-type]
    ]
    verdict, consistent = reconcile(orders)
    result = JudgeResult(
        mode="pairwise",
        status="ok",
        method="direct",
        verdict=verdict,
        consistent=consistent,
        orders=orders,
        usage=_usage(2),
        probabilities=pairwise_probabilities(orders, 0.0),
    )
    item = Item(id=rid, mode="pairwise", instruction=f"q {rid}", response_a="a", response_b="b", label=gold)
    return Record(rid, "chat", "direct", "ok", item, decide(result, rule), seconds=0.1)  # type: ignore[arg-type]


def chat_probability_run(root: Path, rule: str = "probability") -> Path:
    config = {**_config("chat", "direct"), "decision": rule, "tie_band": 0.0}
    records = [probability_pair(rid, *v, rule=rule) for rid, v in PROB_PAIRS.items()]
    return write_run(root / f"chat-{rule}", config, records)


# id -> (gold, argmax level, distribution over the levels 1-7 as {level: probability})
PROB_SCORES = {
    "e1": (60.0, 5, {"4": 0.25, "5": 0.5, "6": 0.25}),  # expected 5.0
    "e2": (80.0, 5, {"5": 0.4, "6": 0.35, "7": 0.25}),  # expected 5.85
    "e3": (20.0, 3, {"2": 0.3, "3": 0.7}),  # expected 2.7
}


def literary_probability_run(root: Path) -> Path:
    from cejudge_dspy.judges.verdicts import Probabilities, decide, expected_score

    records = []
    for rid, (gold, level, dist) in PROB_SCORES.items():
        item = Item(id=rid, mode="pointwise", instruction=f"Source {rid}", response="T", label=gold)
        full = {str(lv): dist.get(str(lv), 0.0) for lv in range(1, 8)}
        probs = Probabilities(status="ok", distribution=full, score=expected_score(full))
        result = JudgeResult(mode="pointwise", status="ok", method="direct", score=level, probabilities=probs)
        records.append(
            Record(rid, "literary", "direct", "ok", item, decide(result, "probability"), seconds=0.1)
        )
    return write_run(
        root / "lit-probability", {**_config("literary", "direct"), "decision": "probability"}, records
    )


def checkeval_probability_run(root: Path) -> Path:
    """CheckEval with P(yes) per question: s1 answers yes (P .9) and no (P(yes) .3)."""
    from cejudge_dspy.judges.checkeval._answers import checklist_probabilities
    from cejudge_dspy.judges.verdicts import decide

    record = _checkeval("s1", ("yes", "no"), 0)
    for row, p in zip(record.result.details["answers"], (0.9, 0.3), strict=True):  # type: ignore[union-attr]
        row["p_yes"] = p
    record.result.details["probabilities_given"] = True  # type: ignore[union-attr]
    record.result.probabilities = checklist_probabilities(record.result.details, "dimension")  # type: ignore[union-attr]
    record.result = decide(record.result, "probability")  # type: ignore[arg-type]
    return write_run(
        root / "se-probability", {**_config("summeval", "checkeval"), "decision": "probability"}, [record]
    )


def geval_run(root: Path) -> Path:
    """G-Eval on one summary: coherence read (expected 3.6, argmax 4), fluency not located (argmax 3)."""
    from cejudge_dspy.judges.geval._judge import geval_probabilities
    from cejudge_dspy.judges.verdicts import decide

    rows = {
        "coherence": {
            "score": 4,
            "expected": 3.6,
            "distribution": {"1": 0.0, "2": 0.0, "3": 0.4, "4": 0.6, "5": 0.0},
            "probabilities": "ok",
            "reason": None,
        },
        "fluency": {
            "score": 3,
            "expected": None,
            "distribution": {},
            "probabilities": "not_located",
            "reason": "no 'score' field in the output",
        },
    }
    item = _checkeval("g1", ("yes", "yes"), 0).item
    result = JudgeResult(
        mode="pointwise",
        status="ok",
        method="geval",
        score=3.5,
        dimension_scores={"coherence": 4, "fluency": 3},
        usage=_usage(2),
        details={"dimensions": rows, "failures": {}, "levels": [1, 5]},
        probabilities=geval_probabilities(rows, 2),
    )
    record = Record("g1", "summeval", "geval", "ok", item, decide(result, "probability"), seconds=0.2)
    return write_run(root / "geval", {**_config("summeval", "geval"), "decision": "probability"}, [record])
