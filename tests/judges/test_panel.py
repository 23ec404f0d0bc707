"""Panels (judges.panel): the per-item verdict from hand-counted votes, the panel judge on fake backbones
(each member on its own LM, members sharing a backbone sharing DSPy's cache), and panel files."""

from __future__ import annotations

import math
import uuid
from pathlib import Path

import dspy
import pytest

from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import JudgeOptions, run_program
from cejudge_dspy.judges.panel import (
    NO_MAJORITY,
    MemberOutcome,
    PanelJudge,
    PanelMember,
    combine,
    majority,
    members_from_flags,
    panel_backbones,
    read_panel_file,
    vote_entropy,
)
from cejudge_dspy.judges.verdicts import JudgeResult, Probabilities
from cejudge_dspy.tasks import load_task
from cejudge_dspy.usage import Usage
from tests.support.fakes import AsyncFakeEngine, FakeEngine, fake_lm


def _pair(name: str, verdict: str | None, p_a: float | None = None, calls: int = 1) -> MemberOutcome:
    if verdict is None:
        return MemberOutcome(name, "error", None, error="boom")
    probs = Probabilities(status="ok", p_a=p_a) if p_a is not None else None
    result = JudgeResult("pairwise", "ok", verdict=verdict, probabilities=probs, usage=Usage(calls=calls))
    return MemberOutcome(name, "ok", result)


def _score(name: str, score: float) -> MemberOutcome:
    return MemberOutcome(name, "ok", JudgeResult("pointwise", "ok", score=score))


def test_a_two_to_one_vote_is_a_majority_with_its_agreement_and_entropy() -> None:
    result = combine("pairwise", [_pair("a", "A", calls=3), _pair("b", "A", calls=4), _pair("c", "B")])
    panel = result.details["panel"]
    assert result.status == "ok" and result.method == "panel" and result.verdict == "A"
    assert panel["outcome"] == "A" and panel["votes"] == {"a": "A", "b": "A", "c": "B"}
    assert panel["agreement"] == pytest.approx(2 / 3)
    # H(2/3, 1/3) in bits, by hand: -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.9183
    assert panel["entropy"] == pytest.approx(0.918295834, abs=1e-9)
    assert result.usage.calls == 8  # the members' costs, summed


def test_a_three_way_split_has_no_majority_and_the_panel_does_not_pick_a_side() -> None:
    result = combine("pairwise", [_pair("a", "A"), _pair("b", "B"), _pair("c", "tie")])
    panel = result.details["panel"]
    assert panel["outcome"] == NO_MAJORITY and result.verdict == "tie"
    assert panel["votes"] == {"a": "A", "b": "B", "c": "tie"}  # kept with the outcome
    assert panel["entropy"] == pytest.approx(math.log2(3))
    # 2-2 is no majority either: more than half is needed.
    assert majority(["A", "A", "B", "B"]) == NO_MAJORITY and majority(["tie", "tie", "A"]) == "tie"


def test_a_member_that_errored_does_not_vote_and_none_voting_is_unparsed() -> None:
    result = combine("pairwise", [_pair("a", "B"), _pair("b", None), _pair("c", "B")])
    assert result.verdict == "B" and result.details["panel"]["voting"] == 2
    assert result.details["panel"]["votes"]["b"] is None
    nobody = combine("pairwise", [_pair("a", None), _pair("b", None)])
    assert nobody.status == "unparsed" and "a: boom" in (nobody.error or "")


def test_the_mean_rule_averages_debiased_p_a_and_falls_back_to_verdicts() -> None:
    # p(A): 0.9, 0.2 and a member without probabilities that said A (1.0): mean 0.7 -> A.
    members = [_pair("a", "A", p_a=0.9), _pair("b", "B", p_a=0.2), _pair("c", "A")]
    panel = combine("pairwise", members, tie_band=0.1).details["panel"]
    assert panel["mean_p_a"] == pytest.approx(0.7) and panel["mean_verdict"] == "A"
    near = combine("pairwise", [_pair("a", "A", p_a=0.53), _pair("b", "B", p_a=0.49)], tie_band=0.1)
    assert near.details["panel"]["mean_verdict"] == "tie"  # 0.51 is within 0.05 of 0.5


def test_pointwise_panels_average_scores_with_their_spread() -> None:
    result = combine("pointwise", [_score("a", 3.0), _score("b", 4.0), _score("c", 5.0)])
    panel = result.details["panel"]
    assert result.score == pytest.approx(4.0)
    assert panel["sd"] == pytest.approx(math.sqrt(2 / 3)) and panel["range"] == pytest.approx(2.0)
    assert panel["outcome"] == NO_MAJORITY
    two = combine("pointwise", [_score("a", 4.2), _score("b", 3.8), _score("c", 1.0)]).details["panel"]
    assert two["outcome"] == 4 and two["agreement"] == pytest.approx(2 / 3)


def test_vote_entropy_is_zero_when_all_agree() -> None:
    assert vote_entropy(["A", "A"]) == 0.0 and vote_entropy([]) is None


def _choose(side: str):  # a direct verdict rule (orders single: A is response_a)
    return {"verdict": lambda i: {"feedback": "fb", "verdict": side}}


def _item_inputs(tag: str) -> dict[str, str]:
    return {"instruction": f"q {tag}", "response_a": "one", "response_b": "two", "language": "en"}


def test_the_panel_judge_runs_each_member_on_its_own_backbone() -> None:
    spec = load_task("chat")
    direct = JudgeOptions(method="direct", orders="single")
    lms = {name: fake_lm(_choose(side)) for name, side in (("x", "A"), ("y", "B"), ("z", "B"))}
    members = [PanelMember(name, name, direct) for name in lms]
    judge = PanelJudge([(m, run_program(spec, options=m.options)) for m in members], "pairwise")
    with panel_backbones({(name, None, "auto"): (lm, None) for name, (lm, _) in lms.items()}):
        pred = judge(**_item_inputs(uuid.uuid4().hex))
    assert pred.result.verdict == "B" and pred.result.details["panel"]["votes"] == {
        "x": "A",
        "y": "B",
        "z": "B",
    }
    assert [m["name"] for m in pred.members] == ["x", "y", "z"]
    assert [m["result"]["verdict"] for m in pred.members] == ["A", "B", "B"]
    for _, engine in lms.values():
        assert len(engine.stage_calls("verdict")) == 1  # one call each, on its own backbone


def test_a_member_that_raises_is_recorded_and_the_others_decide() -> None:
    spec = load_task("chat")
    direct = JudgeOptions(method="direct", orders="single")

    def boom(inputs: dict[str, str]) -> dict[str, str]:
        raise RuntimeError("the member's own failure")

    good, _ = fake_lm(_choose("A"))
    bad, _ = fake_lm({"verdict": boom})
    members = [PanelMember("good", "g", direct), PanelMember("bad", "b", direct)]
    judge = PanelJudge([(m, run_program(spec, options=m.options)) for m in members], "pairwise")
    with panel_backbones({("g", None, "auto"): (good, None), ("b", None, "auto"): (bad, None)}):
        pred = judge(**_item_inputs(uuid.uuid4().hex))
    outcomes = {m["name"]: m for m in pred.members}
    assert pred.result.verdict == "A" and pred.result.details["panel"]["voting"] == 1
    assert outcomes["bad"]["status"] in ("error", "unparsed") and outcomes["good"]["status"] == "ok"


def test_members_on_one_backbone_share_its_cache_for_identical_stages() -> None:
    """Two CE-Judge members that differ only in their orders ask the same concepts, translations and
    checklists: the engine answers each of those once, though the members run concurrently."""
    spec = load_task("chat")
    engine = FakeEngine()
    lm = dspy.LM("fake/shared", engine=engine, async_engine=AsyncFakeEngine(engine), cache=True)
    both = JudgeOptions(orders="both", judgment="pairwise")
    single = JudgeOptions(orders="single", judgment="pairwise")
    members = [PanelMember("both", "one", both), PanelMember("single", "one", single)]
    judge = PanelJudge([(m, run_program(spec, options=m.options)) for m in members], "pairwise")
    tag = uuid.uuid4().hex  # a text no earlier test put in the cache
    inputs = {
        "instruction": f"Wie heißt {tag}?",
        "response_a": "eins",
        "response_b": "zwei",
        "language": "de",
    }
    with panel_backbones({("one", None, "auto"): (lm, None)}):
        pred = judge(**inputs)
    alone = [
        c for c in engine.calls if c.stage in ("concepts", "translate", "checklist_r2i", "checklist_i2r")
    ]
    keys = [(c.stage, tuple(sorted(c.inputs.items()))) for c in alone]
    assert keys and len(keys) == len(set(keys)), "a shared stage reached the engine twice"
    second = pred.members[1]["result"]["usage"]
    first = pred.members[0]["result"]["usage"]
    assert first["reused"] + second["reused"] >= len(keys)  # each shared answer was used again


def test_repeated_flags_make_every_pairing_a_member() -> None:
    members = members_from_flags(["m1", "m2"], ["cejudge", "direct"], JudgeOptions(tie_band=0.2))
    assert [m.name for m in members] == ["m1/cejudge", "m1/direct", "m2/cejudge", "m2/direct"]
    assert {m.options.tie_band for m in members} == {0.2} and members[1].method == "direct"
    assert [m.name for m in members_from_flags(["m1", "m2"], ["direct"], JudgeOptions())] == ["m1", "m2"]


def _panel_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "panel.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_panel_file_gives_members_their_own_options(tmp_path: Path) -> None:
    path = _panel_file(
        tmp_path,
        '[[member]]\nname = "one"\nlm = "simulated:0"\n\n'
        '[[member]]\nlm = "simulated:1"\nmethod = "direct"\norders = "single"\napi_base = "http://h/v1"\n',
    )
    first, second = read_panel_file(path, JudgeOptions(tie_band=0.2), lm="embedded")
    assert (first.name, first.lm, first.method, first.options.orders) == (
        "one",
        "simulated:0",
        "cejudge",
        "both",
    )
    assert (second.name, second.method, second.options.orders) == ("simulated:1/direct", "direct", "single")
    assert second.api_base == "http://h/v1" and second.options.tie_band == 0.2  # the command's, not set


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[[member]]\nname = "a"\nlm = "x"\nordrs = "single"\n[[member]]\nlm = "y"\n',
            "member 1 ('a'): unknown option 'ordrs': did you mean 'orders'?",
        ),
        (
            '[[member]]\nlm = "x"\n[[member]]\nlm = "y"\ntie_band = 2\n',
            "member 2: option 'tie_band' must be below 1",
        ),
        ('[[member]]\nlm = "x"\n[[member]]\nlm = ""\n', "member 2: field 'lm' must be a non-empty string"),
        ('[[member]]\nname = "a"\nlm = "x"\n[[member]]\nname = "a"\nlm = "y"\n', "two members are named 'a'"),
        ('[[member]]\nlm = "x"\n', "a panel needs at least two members"),
        (
            '[[member]]\nlm = "x"\n[[member]]\nname = "b"\nlm = "y"\nadapter = "xml"\n',
            "member 2 ('b'): field 'adapter' must be one of auto, chat, json, got 'xml'",
        ),
        ('[[member]]\nlm = "x"\n[[member]]\nlm = "y"\nadapter = 1\n', "field 'adapter' must be a non-empty"),
        ("members = 1\n", "unknown key 'members'"),
    ],
)
def test_a_bad_panel_file_is_one_line_naming_file_member_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = _panel_file(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_panel_file(path, JudgeOptions())
    message = str(caught.value)
    assert str(path) in message and expected in message and "\n" not in message


def test_a_panel_file_gives_a_member_its_own_adapter(tmp_path: Path) -> None:
    """`adapter` is a member's backbone key, like `api_base`: unset, the command's --adapter (None here);
    it is part of the member's backbone and identity, and the member file's choices are the backbones'."""
    from cejudge_dspy.backbones import ADAPTERS
    from cejudge_dspy.judges.panel._members import ADAPTER_CHOICES

    path = _panel_file(
        tmp_path,
        '[[member]]\nname = "small"\nlm = "openai/small"\nadapter = "json"\n\n'
        '[[member]]\nname = "big"\nlm = "openai/small"\nmethod = "direct"\n',
    )
    small, big = read_panel_file(path, JudgeOptions())
    assert (small.adapter, big.adapter) == ("json", None)
    assert small.backbone == ("openai/small", None, "json") != big.backbone == ("openai/small", None, "auto")
    spec = load_task("chat")
    assert small.identity(spec, "base", None)["adapter"] == "json"
    assert big.identity(spec, "base", None)["adapter"] == "auto"
    assert ADAPTER_CHOICES == ADAPTERS


def test_every_member_s_api_key_is_redacted_from_the_records(tmp_path: Path) -> None:
    """The runner redacts the current backbone's key and, in a panel, each member's."""
    import asyncio

    from cejudge_dspy.data import Item
    from cejudge_dspy.evaluate import judge_items

    spec = load_task("chat")
    direct = JudgeOptions(method="direct", orders="single")

    def leak(inputs: dict[str, str]) -> dict[str, str]:
        raise RuntimeError("server said: your key sk-member-two-secret is over quota")

    one, _ = fake_lm(_choose("A"))
    two, _ = fake_lm({"verdict": leak})
    two.kwargs["api_key"] = "sk-member-two-secret"
    members = [PanelMember("one", "a", direct), PanelMember("two", "b", direct)]
    judge = PanelJudge([(m, run_program(spec, options=m.options)) for m in members], "pairwise")
    item = Item("i1", "pairwise", f"q {uuid.uuid4().hex}", response_a="x", response_b="y", label="A")
    out = tmp_path / "results.jsonl"
    with (
        panel_backbones({("a", None, "auto"): (one, None), ("b", None, "auto"): (two, None)}),
        dspy.context(lm=one),
    ):
        asyncio.run(judge_items([item], judge, out, task="chat", method="panel"))
    text = out.read_text(encoding="utf-8")
    assert "over quota" in text and "sk-member-two-secret" not in text
