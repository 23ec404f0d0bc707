"""A consistency run with fake translators and fake judges whose flips are known: the renderings, the
child runs, the summary's flip rates and paired test, resume, a failed translation, parallel versions,
and the identity checks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from scipy import stats

from cejudge_dspy.consistency import (
    RENDERINGS,
    ConsistencyRun,
    child_name,
    judge_consistency,
    read_renderings,
)
from cejudge_dspy.data import Item
from cejudge_dspy.errors import CEJudgeError, TranslationError
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.runs import read_run
from cejudge_dspy.tasks import load_task

LANGUAGES = ["ko", "de"]
METHODS = ["cejudge", "direct"]


class FakeTranslator:
    """Into `target`: `<ko> text`; raises TranslationError for the texts in `fail`."""

    name = "fake"

    def __init__(self, target: str, calls: list[tuple[str, str]], fail: set[str] | None = None) -> None:
        self.target, self.calls, self.fail = target, calls, fail or set()

    async def translate(self, text: str, language: str) -> str:
        if language == self.target:
            return text
        self.calls.append((self.target, text))
        if text in self.fail:
            raise TranslationError(f"cannot translate {text!r}")
        return f"<{self.target}> {text}"


class FakeJudge:
    """Prefers A, except where `flips(instruction, language)` says it turns to B."""

    def __init__(self, method: str, flips: Any) -> None:
        self.method, self.flips, self.calls = method, flips, 0

    async def acall(self, **inputs: Any) -> dspy.Prediction:
        self.calls += 1
        verdict = "B" if self.flips(inputs["instruction"], inputs["language"]) else "A"
        return dspy.Prediction(
            result=JudgeResult(mode="pairwise", status="ok", method=self.method, verdict=verdict)
        )


def items() -> list[Item]:
    return [
        Item(
            id=str(i), mode="pairwise", instruction=f"q{i}", response_a=f"a{i}", response_b=f"b{i}", label="A"
        )
        for i in range(1, 5)
    ]


def judges() -> dict[str, FakeJudge]:
    # CE-Judge changes its mind on item 3 in German only; the direct judge on every item in Korean.
    return {
        "cejudge": FakeJudge("cejudge", lambda q, lang: lang == "de" and q.endswith("q3")),
        "direct": FakeJudge("direct", lambda q, lang: lang == "ko"),
    }


def plan(out: Path, languages: list[str] = LANGUAGES, **kw: Any) -> ConsistencyRun:
    identity = {"task": "chat", "methods": METHODS, "languages": languages, "translator": "fake"}
    identity["items"] = {"n": 4, "ids": [i.id for i in items()]}

    def run_identity(method: str, rendering: str) -> dict[str, Any]:
        return {"task": "chat", "method": method, "rendering": rendering, "render_translator": "fake"}

    return ConsistencyRun(out, load_task("chat"), items(), languages, METHODS, identity, run_identity, **kw)


def run(out: Path, progs: dict[str, FakeJudge], calls: list, fail: set[str] | None = None, **kw: Any) -> dict:
    def translator_for(lang: str) -> FakeTranslator:
        return FakeTranslator(lang, calls, fail)

    return asyncio.run(judge_consistency(plan(out, **kw), progs, translator_for))


def test_the_summary_counts_the_known_flips_and_tests_the_judges(tmp_path: Path) -> None:
    calls: list = []
    summary = run(tmp_path, judges(), calls, n_resamples=100)
    ko, de = summary["by_language"]["ko"], summary["by_language"]["de"]
    assert ko["cejudge"]["flip_rate"]["value"] == 0.0 and ko["direct"]["flip_rate"]["value"] == 1.0
    assert de["cejudge"]["flip_rate"]["value"] == 0.25 and de["direct"]["flip_rate"]["value"] == 0.0
    paired = ko["paired"]["cejudge vs direct"]
    assert (paired["extra"]["b"], paired["extra"]["c"]) == (4, 0)
    assert paired["p_value"] == pytest.approx(stats.binomtest(4, 4, 0.5).pvalue)
    assert summary["changed"]["3"] == {"cejudge": ["de"], "direct": ["ko"]}
    assert summary["changed"]["1"] == {"cejudge": [], "direct": ["ko"]}
    assert summary["any_language"]["cejudge"]["changed_rate"]["value"] == 0.25
    assert summary["accuracy"]["ko"]["direct"]["value"] == 0.0
    assert summary["accuracy"]["original"]["cejudge"]["value"] == 1.0
    # 4 items x 3 texts x 2 languages, each translated once; every rendering kept in the run directory.
    assert len(calls) == 24
    made = read_renderings(tmp_path / RENDERINGS)
    assert made[("2", "ko")].texts["response_b"] == "<ko> b2" and made[("2", "ko")].source == "fake"
    assert json.loads((tmp_path / "summary.json").read_text())["by_language"]["ko"] == ko


def test_each_child_is_an_ordinary_run_of_its_rendering(tmp_path: Path) -> None:
    run(tmp_path, judges(), [], n_resamples=0)
    child = read_run(tmp_path / child_name("ko", "direct"))
    assert child.config["rendering"] == "ko" and child.config["items"]["n"] == 4
    assert {r.item.language for r in child.records} == {"ko"}
    assert all(r.item.instruction.startswith("<ko> ") and r.result.verdict == "B" for r in child.records)
    original = read_run(tmp_path / child_name("original", "cejudge"))
    assert [r.item.instruction for r in original.records] == ["q1", "q2", "q3", "q4"]
    assert (tmp_path / child_name("de", "cejudge") / "summary.json").exists()


def test_a_rerun_translates_and_judges_nothing_again(tmp_path: Path) -> None:
    run(tmp_path, judges(), [], n_resamples=0)
    calls: list = []
    again = judges()
    summary = run(tmp_path, again, calls, n_resamples=0)
    assert calls == [] and again["cejudge"].calls == again["direct"].calls == 0
    assert summary["by_language"]["ko"]["direct"]["flip_rate"]["value"] == 1.0


def test_a_failed_translation_leaves_its_item_out_until_a_rerun_makes_it(tmp_path: Path) -> None:
    summary = run(tmp_path, judges(), [], fail={"q2"}, n_resamples=0)
    made = read_renderings(tmp_path / RENDERINGS)
    assert made[("2", "ko")].status == "error" and "q2" in made[("2", "ko")].error
    assert summary["by_language"]["ko"]["direct"]["flip_rate"]["n"] == 3
    assert "2" not in {r.id for r in read_run(tmp_path / child_name("ko", "direct")).records}
    progs = judges()
    summary = run(tmp_path, progs, [], n_resamples=0)
    assert summary["by_language"]["ko"]["direct"]["flip_rate"]["n"] == 4
    assert progs["direct"].calls == 2  # item 2 in ko and in de, nothing else


def test_an_items_parallel_version_is_used_instead_of_a_translation(tmp_path: Path) -> None:
    own = {"instruction": "질문", "response_a": "답 A", "response_b": "답 B"}
    calls: list = []
    run(tmp_path, judges(), calls, parallel={("1", "ko"): own}, n_resamples=0)
    assert not any(lang == "ko" and text.endswith("1") for lang, text in calls)
    made = read_renderings(tmp_path / RENDERINGS)[("1", "ko")]
    assert made.source == "parallel" and made.texts == own


def test_a_partial_parallel_version_has_the_translator_write_the_other_texts(tmp_path: Path) -> None:
    calls: list = []
    run(tmp_path, judges(), calls, parallel={("1", "ko"): {"instruction": "질문"}}, n_resamples=0)
    made = read_renderings(tmp_path / RENDERINGS)[("1", "ko")]
    assert made.texts == {"instruction": "질문", "response_a": "<ko> a1", "response_b": "<ko> b1"}
    assert made.source == "fake" and ("ko", "q1") not in calls


def test_other_settings_are_refused_and_force_new_moves_the_run_aside(tmp_path: Path) -> None:
    run(tmp_path, judges(), [], n_resamples=0)
    with pytest.raises(CEJudgeError, match=r"languages: \['ko', 'de'\] -> \['ko'\]"):
        run(tmp_path, judges(), [], languages=["ko"], n_resamples=0)
    summary = run(tmp_path, judges(), [], languages=["ko"], n_resamples=0, force_new=True)
    assert summary["languages"] == ["ko"]
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("superseded-")]
    assert len(aside) == 1 and (aside[0] / child_name("de", "direct") / "results.jsonl").exists()
    assert not (tmp_path / child_name("de", "direct")).exists()


class FakeScorer:
    """Scores 5, or 3 where `lowers(instruction, language)` says so."""

    def __init__(self, lowers: Any) -> None:
        self.lowers = lowers

    async def acall(self, **inputs: Any) -> dspy.Prediction:
        score = 3.0 if self.lowers(inputs["instruction"], inputs["language"]) else 5.0
        return dspy.Prediction(result=JudgeResult(mode="pointwise", status="ok", method="x", score=score))


def test_a_pointwise_run_reports_the_mean_score_change_and_kendall(tmp_path: Path) -> None:
    pointwise = [
        Item(
            id=str(i), mode="pointwise", instruction=f"q{i}", response=f"r{i}", language="en", label=float(i)
        )
        for i in range(1, 5)
    ]
    consistency = plan(tmp_path, languages=["ko"], n_resamples=0)
    consistency.spec, consistency.items = load_task("literary"), pointwise
    consistency.identity["task"] = "literary"
    progs = {
        "cejudge": FakeScorer(lambda q, lang: q == "<ko> q2"),  # one score of four changes by 2
        "direct": FakeScorer(lambda q, lang: lang == "ko"),  # every score changes by 2
    }
    summary = asyncio.run(judge_consistency(consistency, progs, lambda lang: FakeTranslator(lang, [])))
    ko = summary["by_language"]["ko"]
    assert ko["cejudge"]["mean_abs_change"]["value"] == pytest.approx(0.5)
    assert ko["direct"]["mean_abs_change"]["value"] == pytest.approx(2.0)
    assert ko["direct"]["kendall"]["value"] is None  # a constant score list: undefined, not 0
    assert summary["changed"]["2"] == {"cejudge": ["ko"], "direct": ["ko"]}
    assert ko["paired"]["cejudge vs direct"]["extra"]["b"] == 3


def test_the_page_of_a_run_stopped_before_any_judgment_still_renders(tmp_path: Path) -> None:
    from cejudge_dspy.consistency import CONSISTENCY
    from cejudge_dspy.view import consistency_page

    identity = plan(tmp_path).identity
    (tmp_path / CONSISTENCY).write_text(json.dumps(identity), encoding="utf-8")
    page = consistency_page(tmp_path, n_resamples=0)
    assert "Flip matrix" in page and "not rendered" in page and "n/a" in page


def test_renderings_without_an_identity_are_refused(tmp_path: Path) -> None:
    (tmp_path / RENDERINGS).write_text('{"id": "1", "language": "ko", "source": "x", "texts": {}}\n')
    with pytest.raises(CEJudgeError, match="no consistency.json"):
        run(tmp_path, judges(), [], n_resamples=0)
    assert run(tmp_path, judges(), [], n_resamples=0, force_new=True)["items"] == 4
