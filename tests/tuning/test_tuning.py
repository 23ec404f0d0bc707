"""Instruction tuning with fake LMs: optimizers, metrics, call estimates, saved programs, the CLI.

The fake judge answers by the position (always "A") until its judge-stage instruction contains the
word MARKER, then by the content (the response holding "GOOD"); the fake reflection/prompt model
proposes instructions that contain MARKER. An optimizer that works must therefore move the judge's
instruction and lift the dev metric from 0.5 (one order of two right) to 1.0. GEPA runs with a
tiny max_metric_calls (about 2 s here), so the real optimizer is exercised rather than a stand-in.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from pathlib import Path
from typing import Any

import dspy
import pytest

from cejudge_dspy import judges as methods
from cejudge_dspy import tuning
from cejudge_dspy.data import Item
from cejudge_dspy.errors import BackboneError, CEJudgeError, DataError, InputError, TaskError
from cejudge_dspy.judges import manifest_path, read_manifest
from cejudge_dspy.judges._machinery._saved_programs import for_task
from cejudge_dspy.judges.cejudge import PairwiseJudge
from cejudge_dspy.judges.verdicts import JudgeResult, OrderResult
from tests import support
from tests.support.fakes import AsyncFakeEngine, FakeEngine, _stage_of

MARKER = "MARKER"
_script = importlib.util.spec_from_file_location("optimize_script", support.REPO / "optimize.py")
optimize_script = importlib.util.module_from_spec(_script)  # type: ignore[arg-type]
_script.loader.exec_module(optimize_script)  # type: ignore[union-attr]


class InstructedEngine(FakeEngine):
    """A FakeEngine whose rules can read the system message (the stage's instructions), and which
    answers any other signature (an optimizer's proposer) with MARKER in every output field."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.local = threading.local()
        self.interrupt_after: int | None = None  # raise KeyboardInterrupt at the Nth MARKER verdict
        self.marker_verdicts = 0

    def complete(self, request: Any) -> Any:
        system = (
            request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
        )
        self.local.system = system
        stage = _stage_of(system)
        if stage.startswith("other:") and stage not in self.rules:
            self.rules[stage] = _proposal_rule(stage[len("other:") :].split(","))
        return super().complete(request)


def _proposal_rule(outputs: list[str]) -> Any:
    def rule(inputs: dict[str, str]) -> dict[str, Any]:
        answer: dict[str, Any] = {
            o: f"Decide by the content of the responses, never by their order. {MARKER}" for o in outputs
        }
        if "new_instruction" in answer:  # GEPA: keep the stage's own instruction and add the lesson
            answer["new_instruction"] = f"{inputs['current_instruction']} {answer['new_instruction']}"
        if "module_advice" in answer:  # SIMBA wants advice per module name
            answer["module_advice"] = {n: MARKER for n in json.loads(inputs["module_names"])}
        return answer

    return rule


def fake_judge_lm() -> tuple[dspy.LM, InstructedEngine]:
    engine = InstructedEngine()

    def verdict(inputs: dict[str, str]) -> dict[str, Any]:
        if MARKER in engine.local.system:
            engine.marker_verdicts += 1
            if engine.interrupt_after and engine.marker_verdicts >= engine.interrupt_after:
                raise KeyboardInterrupt
            choice = "A" if "GOOD" in inputs["response_a"] else "B"
        else:
            choice = "A"  # position bias: right in one order of two
        return {"answers": ["Is it correct? -> yes"], "feedback": "compared", "verdict": choice}

    engine.rules["verdict"] = verdict
    return dspy.LM("fake/judge", engine=engine, async_engine=AsyncFakeEngine(engine), cache=False), engine


def judge_has_marker(program: dspy.Module) -> bool:
    return MARKER in program.judge.predict.signature.instructions


def items(n: int, offset: int = 0, **extra: Any) -> list[Item]:
    out = []
    for k in range(offset, offset + n):
        a_wins = k % 2 == 0
        out.append(
            Item(
                id=f"i{k}",
                mode="pairwise",
                instruction=f"Question {k}?",
                response_a=f"answer {k} {'GOOD' if a_wins else 'weak'}",
                response_b=f"reply {k} {'weak' if a_wins else 'GOOD'}",
                label="A" if a_wins else "B",
                **extra,
            )
        )
    return out


def examples(n: int, offset: int = 0) -> list[dspy.Example]:
    return [i.to_example() for i in items(n, offset)]


@pytest.fixture(scope="module")
def gepa_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[tuning.OptimizeReport, InstructedEngine, Path]:
    lm, engine = fake_judge_lm()
    log_dir = tmp_path_factory.mktemp("gepa") / "chat.gepa"
    seen: list[tuple[str, int, int | None]] = []
    report = tuning.optimize(
        "chat",
        examples(6),
        examples(4, 100),
        budget=40,
        lm=lm,
        log_dir=log_dir,
        on_progress=lambda *a: seen.append(a),
    )
    report.progress = seen  # type: ignore[attr-defined]
    return report, engine, log_dir


# --- optimizers ------------------------------------------------------------------------------------


def test_gepa_moves_the_judge_instruction_and_lifts_the_dev_metric(gepa_run: Any) -> None:
    report, _, log_dir = gepa_run
    assert report.source == "optimized" and not report.interrupted
    assert "judge.predict" in report.changed_stages and judge_has_marker(report.program)
    assert report.dev_before.metric == pytest.approx(0.5)  # one order of two right on every item
    assert report.dev_after is not None and report.dev_after.metric == pytest.approx(1.0)
    assert report.dev_after.corpus == pytest.approx(1.0) and report.dev_before.corpus == pytest.approx(0.0)
    assert report.sizes == {"train": 6, "reflect": 4, "val": 2, "dev": 4}
    assert report.settings["max_metric_calls"] == 40 and report.estimate.program_runs == 40
    assert tuning.Checkpoint(log_dir).exists() and not (log_dir / "gepa_state.bin").exists()
    phases = {p for p, _, _ in report.progress}
    assert {"dev-before", "optimize", "dev-after"} <= phases


def test_gepa_resumes_from_its_checkpoint_without_new_proposals(gepa_run: Any) -> None:
    report, _, log_dir = gepa_run
    lm, engine = fake_judge_lm()
    again = tuning.optimize("chat", examples(6), examples(4, 100), budget=40, lm=lm, log_dir=log_dir)
    assert again.resumed and judge_has_marker(again.program)
    assert not engine.stage_calls("other:new_instruction")  # the budget was spent in the first session
    with pytest.raises(InputError, match="another seed"):
        tuning.optimize("chat", examples(6), examples(4, 100), budget=40, lm=lm, log_dir=log_dir, seed=7)


def test_interrupted_gepa_returns_the_best_candidate_so_far(tmp_path: Path) -> None:
    lm, engine = fake_judge_lm()
    # 6 minibatch + 4 val verdicts accept the MARKER candidate; the next iteration is interrupted.
    engine.interrupt_after = 12
    report = tuning.optimize(
        "chat", examples(6), examples(4, 100), budget=200, lm=lm, log_dir=tmp_path / "run"
    )
    assert report.source == "best-so-far" and report.interrupted
    assert judge_has_marker(report.program) and report.dev_after is None


def test_interrupted_before_any_candidate_returns_the_base_program() -> None:
    lm, engine = fake_judge_lm()
    engine.rules["other:new_instruction"] = lambda i: (_ for _ in ()).throw(KeyboardInterrupt)
    report = tuning.optimize("chat", examples(6), examples(4, 100), budget=40, lm=lm)
    assert report.source == "base" and not report.changed_stages and not judge_has_marker(report.program)


def test_mipro_zero_shot_tunes_instructions_without_demos() -> None:
    lm, _ = fake_judge_lm()
    report = tuning.optimize("chat", examples(6), examples(4, 100), optimizer="mipro", budget=4, lm=lm)
    assert judge_has_marker(report.program) and report.dev_after.metric > report.dev_before.metric
    assert all(not p.demos for _, p in report.program.named_predictors())
    assert report.settings["max_bootstrapped_demos"] == 0 and report.settings["max_labeled_demos"] == 0


def test_simba_caps_its_minibatch_at_the_training_split() -> None:
    lm, _ = fake_judge_lm()
    report = tuning.optimize("chat", examples(4), examples(2, 100), optimizer="simba", budget=1, lm=lm)
    assert report.settings["bsize"] == 4 and report.settings["max_demos"] == 0
    assert report.dev_after is not None


def test_optimize_refuses_bad_arguments() -> None:
    lm, _ = fake_judge_lm()
    with pytest.raises(InputError, match="GEPA tunes instructions only"):
        tuning.optimize("chat", examples(3), examples(2), demos=2, lm=lm)
    with pytest.raises(InputError, match="unknown optimizer"):
        tuning.optimize("chat", examples(3), examples(2), optimizer="copro", lm=lm)
    with pytest.raises(BackboneError, match="no judge LM"):
        tuning.optimize("chat", examples(3), examples(2))
    with pytest.raises(InputError, match="light, medium, heavy"):
        tuning.optimize("chat", examples(3), examples(2), budget="huge", lm=lm)


# --- metrics ---------------------------------------------------------------------------------------


def pairwise(ab: str | None, ba: str | None, *, single: bool = False) -> dspy.Prediction:
    """A hand-made result; `ab`/`ba` are what the judge SAID in each order."""
    flip = {"A": "B", "B": "A", None: None}
    orders = [OrderResult("AB", ab, ab, answers=["q1 -> yes"], feedback="fb")]  # type: ignore[arg-type]
    if not single:
        orders.append(OrderResult("BA", flip[ba], ba))  # type: ignore[arg-type]
    verdicts = {o.verdict for o in orders}
    if None in verdicts:
        return JudgeResult(
            mode="pairwise",
            status="unparsed",
            error="order BA: verdict 'C' is neither A nor B",
            error_stage="VerdictJudgment",
            orders=orders,
        ).to_prediction()
    verdict = verdicts.pop() if len(verdicts) == 1 else "tie"
    return JudgeResult(
        mode="pairwise",
        status="ok",
        verdict=verdict,
        orders=orders,
        answers=["q1 -> yes"],
        feedback="A is clearer",
        checklists={"a": ["Is A right?"], "b": ["Is B right?"]},
    ).to_prediction()


def gold(label: Any) -> dspy.Example:
    return dspy.Example(label=label, id="x")


def test_pairwise_metric_credits_each_order() -> None:
    assert tuning.pairwise_metric(gold("A"), pairwise("A", "B")) == 1.0  # A shown second in BA: says B
    assert tuning.pairwise_metric(gold("A"), pairwise("A", "A")) == 0.5  # always the first position
    assert tuning.pairwise_metric(gold("A"), pairwise("B", "A")) == 0.0  # consistently B
    assert tuning.pairwise_metric(gold("B"), pairwise("B", "A")) == 1.0
    assert tuning.pairwise_metric(gold("b"), pairwise("B", None, single=True)) == 1.0
    assert tuning.pairwise_metric(gold("A"), pairwise("B", None, single=True)) == 0.0


def test_pairwise_feedback_says_what_happened_in_each_order() -> None:
    fb = tuning.pairwise_feedback(gold("A"), pairwise("A", "A"), None, "checklist_r2i.predict", None)
    assert fb.score == 0.5
    assert "preferred response A" in fb.feedback and "followed the position" in fb.feedback
    assert (
        "Order BA (response B shown first): the judge answered A, meaning response B - wrong" in fb.feedback
    )
    assert "q1 -> yes" in fb.feedback and "Checklist for a (1 items): Is A right?" in fb.feedback


def test_gold_ties_are_neutral_and_unparsed_outputs_score_zero_with_format_feedback() -> None:
    assert tuning.pairwise_feedback(gold("tie"), pairwise("A", "A")).score == 0.5
    assert tuning.pairwise_feedback(gold("TIE"), pairwise("A", None)).score == 0.5
    bad = tuning.pairwise_feedback(gold("A"), pairwise("A", None))
    assert bad.score == 0.0 and "FORMAT FAILURE" in bad.feedback
    assert "VerdictJudgment" in bad.feedback and "neither A nor B" in bad.feedback
    assert tuning.pairwise_metric(gold("A"), dspy.Prediction()) == 0.0  # a program that raised
    with pytest.raises(InputError, match="not A, B or tie"):
        tuning.pairwise_metric(gold("C"), pairwise("A", "B"))


def scored(score: int | None) -> dspy.Prediction:
    status = "ok" if score is not None else "unparsed"
    return JudgeResult(
        mode="pointwise",
        status=status,
        score=score,
        error=None if score else "bad score",
        error_stage=None if score else "ScoreJudgment",
    ).to_prediction()


def test_pointwise_metric_is_closeness_on_the_task_scale() -> None:
    assert tuning.pointwise_metric(gold(5), scored(5), scale=(1, 7)) == 1.0
    assert tuning.pointwise_metric(gold(5), scored(2), scale=(1, 7)) == pytest.approx(0.5)
    assert tuning.pointwise_metric(gold(50), scored(4), scale=(1, 7), label_range=(0, 100)) == 1.0
    assert tuning.pointwise_metric(gold(150), scored(7), scale=(1, 7), label_range=(0, 100)) == 1.0  # clipped
    fb = tuning.pointwise_feedback(gold(75), scored(2), scale=(1, 7), label_range=(0, 100))
    assert "75 on the data's 0-100 range, i.e. 5.5" in fb.feedback and "too low by 3.5" in fb.feedback
    assert tuning.pointwise_metric(gold(5), scored(None), scale=(1, 7)) == 0.0
    with pytest.raises(InputError, match="task scale"):
        tuning.pointwise_metric(gold(5), scored(5))


def test_metric_for_rescales_labels_from_the_training_range() -> None:
    train = [gold(v) for v in (10, 40, 90)]
    metric = tuning.metric_for("literary", train)
    assert metric.label_range == (10.0, 90.0)
    assert metric(gold(50), scored(4)) == 1.0  # 50 is the middle of 10..90 -> 4 on 1..7
    assert tuning.metric_for("literary", [gold(2), gold(6)]).label_range is None  # already on the scale
    with pytest.raises(DataError, match="cannot be rescaled"):
        tuning.metric_for("literary", [gold(80), gold(80)])
    assert tuning.metric_for("chat") is tuning.pairwise_metric


def test_pairwise_concordance_over_a_corpus() -> None:
    golds = [gold(v) for v in (1, 2, 3)]
    assert tuning.pairwise_concordance(golds, [scored(1), scored(4), scored(6)]) == 1.0
    assert tuning.pairwise_concordance(golds, [scored(6), scored(4), scored(1)]) == -1.0
    assert tuning.pairwise_concordance(golds, [scored(1), scored(1), scored(6)]) == pytest.approx(2 / 3)
    assert tuning.pairwise_concordance(golds, [scored(1), scored(None), scored(6)]) == 1.0  # 1 pair left
    assert math.isnan(tuning.pairwise_concordance([gold(3), gold(3)], [scored(1), scored(2)]))


def test_metrics_use_the_probabilities_that_decided_the_result() -> None:
    from cejudge_dspy.judges.verdicts import Probabilities, decide
    from tests.support.view_runs import probability_pair

    # i2: said A with A shown first (P .7) and B with B shown first (P .6): p(A) = (0.7 + 0.4) / 2 = 0.55.
    record = probability_pair("i2", "A", "A", "B", 0.7, 0.6)
    fb = tuning.pairwise_feedback(gold("A"), record.result.to_prediction())
    assert fb.score == pytest.approx(0.55) and "P(shown first is better) 0.70" in fb.feedback
    assert tuning.pairwise_metric(gold("B"), record.result.to_prediction()) == pytest.approx(0.45)
    argmax = probability_pair("i2", "A", "A", "B", 0.7, 0.6, rule="argmax").result
    assert tuning.pairwise_metric(gold("A"), argmax.to_prediction()) == 0.5  # one order of two right
    assert tuning.pairwise_metric(gold("tie"), record.result.to_prediction()) == 0.5  # still neutral

    def expected(score: float, level: int) -> dspy.Prediction:
        probs = Probabilities(status="ok", score=score, distribution={"5": 1.0})
        result = JudgeResult(mode="pointwise", status="ok", score=level, probabilities=probs)
        return decide(result, "probability").to_prediction()

    fb = tuning.pointwise_feedback(gold(6), expected(5.85, 5), scale=(1, 7))
    assert fb.score == pytest.approx(1 - 0.15 / 6)
    assert "gave 5.85 (expected over its token probabilities; its own answer was 5)" in fb.feedback
    # Every argmax is 5, a tie on every pair (0); the expected scores rank the items as the humans do.
    golds = [gold(v) for v in (1, 2, 3)]
    assert tuning.pairwise_concordance(golds, [expected(e, 5) for e in (4.2, 5.0, 5.8)]) == 1.0
    assert tuning.pairwise_concordance(golds, [scored(5)] * 3) == 0.0


# --- estimates and splits --------------------------------------------------------------------------


def test_estimate_calls_follows_the_documented_formula() -> None:
    est = tuning.estimate_calls("chat", examples(6), examples(4), optimizer="gepa", budget=40)
    assert est.calls_per_train_item == 9 and est.program_runs == 40 and est.dev_runs == 8
    assert est.prompt_calls == math.ceil((40 - 2) / 6)
    assert est.total == 40 * 9 + 8 * 9 + est.prompt_calls
    foreign = [i.to_example() for i in items(3, language="de")]
    assert tuning.estimate_calls("chat", foreign, 2).calls_per_train_item == 12
    light = tuning.estimate_calls("chat", 20, 20)
    # Our preset: |val| = 20 // 3 = 6 -> 6 x 2 passes + 2 x 3 x 3 proposals = 30 metric calls.
    assert light.program_runs == 6 * 2 + 2 * 3 * 3 == tuning.gepa_metric_calls("light", 6)
    assert tuning.estimate_calls("chat", 20, 20, budget="heavy").total > light.total
    mipro = tuning.estimate_calls("chat", 8, 4, optimizer="mipro", budget=4)
    assert mipro.program_runs == (4 + 1) * 2 + 6 * 6 and mipro.prompt_calls == 3 * 6 * 5 + 1 + 1
    simba = tuning.estimate_calls("literary", 8, 4, optimizer="simba", budget=2)
    assert simba.program_runs == 2 * 8 * 13 + 7 * 8 and simba.calls_per_train_item == 7
    # Pointwise: the training items are scored once more, by the starting program (the ranking anchors).
    assert simba.total == math.ceil(
        simba.program_runs * 7 + simba.dev_runs * simba.calls_per_dev_item + simba.prompt_calls + 8 * 7
    )
    with pytest.raises(InputError):
        tuning.estimate_calls("chat", 8, 4, optimizer="copro")


def test_split_items_drops_unusable_items_and_is_seeded() -> None:
    pool = items(10) + [
        Item(id="u", mode="pairwise", instruction="q", response_a="a", response_b="b"),
        Item(id="t", mode="pairwise", instruction="q", response_a="a", response_b="b", label="tie"),
    ]
    train, dev, dropped = tuning.split_items(pool, 6, 4, seed=1)
    assert dropped == {"unlabelled": 1, "gold_tie": 1}
    assert len(train) == 6 and len(dev) == 4 and not {e.id for e in train} & {e.id for e in dev}
    assert [e.id for e in tuning.split_items(pool, 6, 4, seed=1)[0]] == [e.id for e in train]
    assert [e.id for e in tuning.split_items(pool, 6, 4, seed=2)[0]] != [e.id for e in train]
    with pytest.raises(DataError, match="only 10 labelled items"):
        tuning.split_items(pool, 8, 4)


# --- saved programs --------------------------------------------------------------------------------


def saved(gepa_run: Any, tmp_path: Path) -> Path:
    report = gepa_run[0]
    path = tmp_path / "chat.json"
    methods.save_program(
        report.program,
        path,
        report.manifest(task_lm="fake/judge", reflection_lm="fake/judge", data="mm-eval.jsonl"),
    )
    return path


def test_save_and_load_round_trip(gepa_run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = saved(gepa_run, tmp_path)
    state = json.loads(path.read_text())
    assert all(v["lm"] is None for k, v in state.items() if k != "metadata")
    manifest = read_manifest(path)
    assert (
        manifest["task"] == "chat"
        and manifest["task_version"] == 1
        and manifest["dspy_version"] == dspy.__version__
    )
    judge = next(s for s in manifest["stages"] if s["name"] == "judge.predict")
    assert judge["outputs"] == [
        ["answers", "list[str]"],
        ["feedback", "str"],
        ["verdict", "Literal['A', 'B']"],
    ]
    assert [s["name"] for s in manifest["stages"]][0] == "concepts.predict"
    assert manifest["backbones"] == {"task": "fake/judge", "reflection": "fake/judge"}
    assert (
        manifest["optimizer"]["name"] == "gepa"
        and manifest["optimizer"]["settings"]["max_metric_calls"] == 40
    )
    assert manifest["seed"] == 42 and manifest["splits"]["dev"] == 4 and manifest["data"] == "mm-eval.jsonl"
    assert manifest["dev"]["before"]["metric"] == 0.5 and manifest["dev"]["after"]["metric"] == 1.0
    assert manifest["created"] and manifest["changed_stages"] == ["judge.predict"]

    assert judge_has_marker(methods.load_program("chat", path))
    assert judge_has_marker(for_task(PairwiseJudge, "chat", program=path, orders="single"))
    monkeypatch.setenv("CEJUDGE_OPTIMIZED", str(tmp_path))
    assert judge_has_marker(methods.program_for_task("chat"))  # auto finds optimized/chat.json
    assert not judge_has_marker(methods.program_for_task("chat", "base"))
    assert not judge_has_marker(methods.program_for_task("reasoning"))  # nothing saved: the base program


def test_save_strips_a_bound_lm(tmp_path: Path) -> None:
    judge = PairwiseJudge("chat")
    judge.judge.predict.lm = fake_judge_lm()[0]
    written = methods.save_program(judge, tmp_path / "chat.json", {"task": "chat", "task_version": 1})
    assert json.loads((tmp_path / "chat.json").read_text())["judge.predict"]["lm"] is None
    assert json.loads(written.read_text())["stripped_lms"] == ["judge.predict"]
    assert judge.judge.predict.lm is not None  # the caller's program is left alone
    with pytest.raises(CEJudgeError, match="needs"):
        methods.save_program(judge, tmp_path / "x.json", {"task": "chat"})


def _edit_manifest(path: Path, edit: Any) -> None:
    data = json.loads(manifest_path(path).read_text())
    edit(data)
    manifest_path(path).write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(task="reasoning"), "optimized for task 'reasoning', not 'chat'"),
        (lambda m: m.update(task_version=0), "declaration version 0 of 'chat', which is now version 1"),
        (
            lambda m: m["stages"][-1]["outputs"][2].__setitem__(0, "winner"),
            "judge.predict outputs changed (winner: Literal['A', 'B'] -> verdict",
        ),
        (
            lambda m: m["stages"][0]["inputs"][0].__setitem__(1, "int"),
            "concepts.predict inputs changed (task: int",
        ),
        (lambda m: m["stages"].pop(1), "has stages"),
    ],
)
def test_load_refuses_a_mismatched_manifest(gepa_run: Any, tmp_path: Path, edit: Any, message: str) -> None:
    path = saved(gepa_run, tmp_path)
    _edit_manifest(path, edit)
    with pytest.raises(TaskError) as info:
        methods.load_program("chat", path)
    assert message in str(info.value) and "re-run optimize.py" in str(info.value)
    assert "--program base" in str(info.value) and "\n" not in str(info.value)


def test_load_refuses_other_tasks_and_missing_manifests(gepa_run: Any, tmp_path: Path) -> None:
    path = saved(gepa_run, tmp_path)
    with pytest.raises(TaskError, match="not 'reasoning'"):
        methods.load_program("reasoning", path)
    manifest_path(path).unlink()
    with pytest.raises(CEJudgeError, match="has no manifest"):
        methods.load_program("chat", path)
    with pytest.raises(CEJudgeError, match="does not exist"):
        methods.program_for_task("chat", tmp_path / "nope.json")


# --- CLI -------------------------------------------------------------------------------------------


def test_cli_estimates_optimizes_and_saves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lm, _ = fake_judge_lm()
    calls: dict[str, Any] = {}

    def load_items(
        spec: Any, path: Any = None, *, fields: Any = None, subsets: Any = None, seed: int = 42, **_: Any
    ) -> list[Item]:
        calls.update(path=path, fields=fields, subsets=subsets)
        return items(12)

    monkeypatch.setattr("cejudge_dspy.data.load_items", load_items)
    monkeypatch.setattr("cejudge_dspy.backbones._spec.make_lm", lambda spec, **kw: lm)
    out = tmp_path / "chat.json"
    rc = optimize_script.main(
        [
            "--task",
            "chat",
            "--data",
            "x.jsonl",
            "--field",
            "instruction=prompt",
            "--subset",
            "Natural",
            "--budget",
            "40",
            "--train",
            "6",
            "--dev",
            "4",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0 and calls == {
        "path": "x.jsonl",
        "fields": {"instruction": "prompt"},
        "subsets": ["Natural"],
    }
    assert "estimated ~" in text and "LM calls" in text and "saved" in text and "judge.predict" in text
    assert judge_has_marker(methods.load_program("chat", out))
    manifest = read_manifest(out)
    assert manifest["fields"] == {"instruction": "prompt"} and manifest["subsets"] == ["Natural"]
    ids = manifest["split_ids"]
    assert len(ids["train"]) == 6 and len(ids["dev"]) == 4 and not set(ids["train"]) & set(ids["dev"])
    assert manifest["seconds"] >= 0
    assert (tmp_path / "chat.gepa").is_dir()


@pytest.mark.parametrize(
    "argv", [["--task", "chta"], ["--task", "chat", "--field", "oops"], ["--task", "chat", "--budget", "0"]]
)
def test_cli_errors_are_one_line_with_status_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert optimize_script.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err


def test_a_proposal_without_a_held_out_gain_is_not_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lm, engine = fake_judge_lm()
    engine.rules["verdict"] = lambda inputs: {
        "answers": [],
        "feedback": "same",
        "verdict": "A",
    }  # tuning cannot help
    monkeypatch.setattr("cejudge_dspy.data.load_items", lambda *a, **k: items(12))
    monkeypatch.setattr("cejudge_dspy.backbones._spec.make_lm", lambda spec, **kw: lm)
    out = tmp_path / "chat.json"
    argv = ["--task", "chat", "--data", "x.jsonl", "--budget", "40", "--train", "6", "--dev", "6"]
    assert optimize_script.main([*argv, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "held-out comparison: no gain beyond noise" in text and "nothing saved" in text
    assert not out.exists() and not methods.manifest_path(out).exists()
    # --save-anyway keeps it for inspection; its manifest says why auto will not load it.
    assert optimize_script.main([*argv, "--out", str(out), "--save-anyway"]) == 0
    held_out = read_manifest(out)["held_out"]
    assert held_out["significant"] is False and held_out["n"] == 6 and held_out["before"] == held_out["after"]


def test_held_out_gain_on_hand_computed_dev_splits() -> None:
    from cejudge_dspy.tasks import load_task
    from cejudge_dspy.tuning._gain import held_out_gain

    chat = load_task("chat")
    golds = ["A", "B"] * 10
    # Before: 10 of 20 right; after: all right. Every resample improves: the CI lies above zero.
    gain = held_out_gain(chat, golds, ["A"] * 20, golds, n_resamples=200)
    assert gain["before"] == 0.5 and gain["after"] == 1.0 and gain["diff"] == 0.5 and gain["significant"]
    # An unparsed verdict counts as wrong, so a program that stops answering cannot look better.
    worse = held_out_gain(chat, golds, golds, [None] * 10 + golds[10:], n_resamples=200)
    assert worse["after"] == 0.5 and not worse["significant"] and worse["diff"] == -0.5
    # One item of difference in 20 is within the noise.
    tiny = held_out_gain(chat, golds, golds[:19] + ["A"], golds, n_resamples=200)
    assert tiny["diff"] == pytest.approx(0.05) and not tiny["significant"] and tiny["ci"][0] <= 0
    literary = load_task("literary")
    scores = [1, 2, 3, 4, 5, 6]
    same = held_out_gain(literary, [10, 20, 30, 40, 50, 60], scores, scores, n_resamples=200)
    assert same["diff"] == 0.0 and not same["significant"]
    fewer = held_out_gain(literary, [10, 20, 30, 40, 50, 60], scores, [1, 2, 3, 4, 5, None], n_resamples=200)
    assert not fewer["significant"] and "more items unparsed" in fewer["reason"]
