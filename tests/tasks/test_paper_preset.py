"""`--preset paper`: the paper's declarations (sparse rubric, linguistic concepts, `extends`), the options
it sets, explicit flags winning over it, the run identity, and runs on the shared dev data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import deep_translator.google
import dspy
import pytest
import requests

from cejudge_dspy.cli import main
from cejudge_dspy.cli._app import build_parser
from cejudge_dspy.cli._program_args import given_options
from cejudge_dspy.errors import TaskError
from cejudge_dspy.judges.cejudge import Concepts, LinguisticConcepts, PointwiseJudge
from cejudge_dspy.tasks import _catalog, load_task, preset_task
from cejudge_dspy.tasks._parsing import parse_task
from cejudge_dspy.translate._google import GoogleTranslator
from tests import support
from tests.support.fakes import fake_lm

FIXTURES = support.FIXTURES / "data"
BASE = {"name": "t", "mode": "pointwise", "metric": "kendall", "task": "Judge."}


# --- declarations -------------------------------------------------------------------------------------


def test_a_scale_may_describe_some_levels_when_it_declares_its_range() -> None:
    spec = parse_task({**BASE, "scale_range": [1, 7], "scale": {"1": "bad", "4": "fair", "7": "good"}})
    assert spec.described_levels == (1, 4, 7)
    assert sorted(spec.scale) == [1, 2, 3, 4, 5, 6, 7] and spec.scale_range == (1, 7)
    assert (spec.scale[1], spec.scale[4]) == ("bad", "fair")
    assert spec.scale[2] == spec.scale[3] == "Not described: between levels 1 and 4."
    assert spec.scale[6] == "Not described: between levels 4 and 7."
    full = parse_task({**BASE, "scale": {"1": "bad", "2": "good"}})
    assert (full.scale, full.described_levels) == ({1: "bad", 2: "good"}, (1, 2))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"scale": {"1": "a", "3": "c"}}, "must describe every level from 1 to 3, or declare scale_range"),
        ({"scale_range": [1, 7], "scale": {"1": "a", "5": "e"}}, "must describe both ends of scale_range"),
        ({"scale_range": [7, 1], "scale": {"1": "a", "7": "g"}}, r"scale_range must be \[LOW, HIGH\]"),
        ({"scale_range": [1, "7"], "scale": {"1": "a"}}, r"scale_range must be \[LOW, HIGH\]"),
        ({"scale": {"1": "a"}, "concepts": "deep"}, "'concepts' must be one of skeleton, linguistic"),
    ],
)
def test_bad_scales_and_concept_prompts_are_one_line(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(TaskError, match=message):
        parse_task({**BASE, **extra})


@pytest.fixture
def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CEJUDGE_PROGRAMS", str(tmp_path))
    _catalog._registry.cache_clear()
    yield tmp_path
    _catalog._registry.cache_clear()


def test_extends_starts_from_the_base_and_replaces_whole_keys(programs: Path) -> None:
    (programs / "base.toml").write_text(
        'name = "base"\nmode = "pointwise"\nmetric = "kendall"\ntask = "Judge."\ncriteria = "Good."\n'
        '[scale]\n1 = "bad"\n2 = "ok"\n3 = "good"\n[dataset.fields]\nlabel = "rating"\n'
    )
    (programs / "variant.toml").write_text(
        'name = "variant"\nextends = "base"\npreset = "paper"\nscale_range = [1, 3]\n'
        '[scale]\n1 = "no"\n3 = "yes"\n'
    )
    variant, base = load_task("variant"), load_task("base")
    assert (variant.criteria, variant.dataset, variant.extends) == (base.criteria, base.dataset, "base")
    assert variant.scale == {1: "no", 2: "Not described: between levels 1 and 3.", 3: "yes"}
    assert preset_task("base", "paper") is variant and preset_task("variant", "paper") is variant
    assert preset_task("base", "other") is None


def test_extends_an_unknown_task_or_in_a_cycle_is_one_line(programs: Path) -> None:
    (programs / "lost.toml").write_text('name = "lost"\nextends = "nowhere"\n')
    (programs / "a.toml").write_text('name = "a"\nextends = "b"\n')
    (programs / "b.toml").write_text('name = "b"\nextends = "a"\n')
    with pytest.raises(TaskError, match=r"lost.toml: extends = 'nowhere' names no readable declaration"):
        load_task("lost")
    with pytest.raises(TaskError, match=r"extends forms a cycle \(a -> b -> a\)"):
        load_task("a")


def test_the_shipped_paper_declarations() -> None:
    literary, paper = load_task("literary"), load_task("literary-paper")
    assert paper.described_levels == (1, 3, 5, 7) and sorted(paper.scale) == list(range(1, 8))
    assert paper.scale[1].startswith("Nonsense") and paper.scale[4].startswith("Not described")
    assert (paper.concepts, literary.concepts) == ("linguistic", "skeleton")
    assert (paper.dataset, paper.metric, paper.criteria) == (
        literary.dataset,
        literary.metric,
        literary.criteria,
    )
    assert "produce in English" in " ".join(paper.task.split()) and "English" not in literary.task
    for name in ("chat", "reasoning"):
        base, variant = load_task(name), preset_task(name, "paper")
        assert variant is not None and variant.name == f"{name}-paper"
        assert (variant.criteria, variant.dataset, variant.mode) == (base.criteria, base.dataset, base.mode)
        assert " ".join(variant.task.split()).startswith(" ".join(base.task.split()))
        assert "produce in English" in " ".join(variant.task.split())
    assert preset_task("literary", "paper") is paper and preset_task("summeval", "paper") is None


def test_the_literary_paper_program_asks_for_linguistic_concepts_and_shows_every_level() -> None:
    program = PointwiseJudge("literary-paper", language_check=False)
    assert type(program.concepts) is LinguisticConcepts and type(PointwiseJudge().concepts) is Concepts
    assert "translator must watch" in program.concepts.predict.signature.instructions
    lm, engine = fake_lm()
    with dspy.context(lm=lm):
        result = program(
            instruction="The cat sleeps.",
            response="Die Katze schläft.",
            language="en",
            response_language="de",
        ).result
    assert result.status == "ok" and len(engine.stage_calls("concepts")) == 2
    (score,) = engine.stage_calls("score")
    scale = json.loads(score.inputs["scale"])
    assert sorted(scale, key=int) == [str(n) for n in range(1, 8)]
    assert scale["2"] == "Not described: between levels 1 and 3."


# --- the preset on the command line -------------------------------------------------------------------


def given_flags(argv: list[str]) -> set[str]:
    return set(given_options(build_parser().parse_args(["evaluate", *argv])))


def test_given_flags_sees_every_spelling() -> None:
    assert given_flags(["--preset", "paper", "--task", "chat"]) == set()
    assert given_flags(["--translator=llm", "--orders", "both"]) == {"translator", "orders"}
    assert given_flags(["--transl", "llm", "--decision", "probability"]) == {"translator", "decision"}


def evaluate(tmp_path: Path, *flags: str, data: Path = FIXTURES / "pairwise_labels.jsonl") -> dict[str, Any]:
    out = tmp_path / "run"
    argv = ["evaluate", "--preset", "paper", "--data", str(data), "--lm", "simulated:0", "--out", str(out)]
    assert main([*argv, "--bootstrap", "0", *flags]) == 0
    return json.loads((out / "run.json").read_text())


def test_the_preset_resolves_to_the_papers_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = evaluate(tmp_path, "--task", "chat")
    assert {k: config[k] for k in ("task", "judgment", "orders", "translator", "decision", "program")} == {
        "task": "chat-paper",
        "judgment": "pairwise",
        "orders": "single",
        "translator": "google",
        "decision": "argmax",
        "program": "base",
    }
    assert (config["preset"], config["headline"], config["concepts"], config["directions"]) == (
        "paper",
        "strict",
        True,
        "both",
    )
    err = " ".join(capsys.readouterr().err.split())
    assert "preset paper: task chat-paper, judgment pairwise, orders single, translator google" in err
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert {len(r["result"]["orders"]) for r in records} == {1}
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["overall"]["strict"]["value"] == summary["overall"]["value"]  # nothing unparsed


def test_explicit_flags_win_over_the_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = evaluate(
        tmp_path, "--task", "chat", "--orders", "both", "--decision=probability", "--no-concepts"
    )
    assert (config["orders"], config["decision"], config["judgment"], config["concepts"]) == (
        "both",
        "probability",
        "pairwise",
        False,
    )
    assert "(given explicitly: orders both, decision probability)" in " ".join(
        capsys.readouterr().err.split()
    )


def test_the_default_run_directory_names_the_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = FIXTURES / "pairwise_labels.jsonl"
    argv = ["evaluate", "--preset", "paper", "--task", "chat", "--data", str(data), "--lm", "simulated:0"]
    assert main([*argv, "--bootstrap", "0"]) == 0
    assert (
        json.loads((tmp_path / "runs" / "chat-cejudge-paper" / "run.json").read_text())["preset"] == "paper"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--task", "summeval"], "--preset: task 'summeval' has no declaration for --preset paper"),
        (["--task", "chat", "--method", "direct"], "--preset: paper is CE-Judge's configuration"),
        (["--task", "chta"], "unknown task 'chta': did you mean 'chat'?"),
    ],
)
def test_what_the_preset_cannot_do_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    argv = ["evaluate", "--preset", "paper", "--lm", "simulated:0", "--out", str(tmp_path / "run"), *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in " ".join(err.split())
    assert not (tmp_path / "run").exists()


def test_google_translation_offline_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise requests.exceptions.ConnectionError("Failed to resolve 'translate.google.com'")

    monkeypatch.setenv("CEJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(deep_translator.google.requests, "get", no_network)
    monkeypatch.setitem(GoogleTranslator.__init__.__kwdefaults__, "retries", 0)  # no backoff sleeps
    out = tmp_path / "run"
    argv = ["evaluate", "--preset", "paper", "--task", "literary", "--lm", "simulated:0", "--out", str(out)]
    # LitEval's de-en sources are German: the first call to Google fails.
    assert main([*argv, "--data", str(FIXTURES / "liteval" / "de-en.csv"), "--limit", "2"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "every item failed" in err and "cannot reach translate.google.com (offline?)" in err
    assert "use --translator llm (offline)" in err
    assert json.loads((out / "run.json").read_text())["translator"] == "google"


def test_judge_takes_the_preset(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["judge", "--preset", "paper", "--lm", "simulated:0", "--json", "--instruction", "Name a prime."]
    assert main([*argv, "--response-a", "7", "--response-b", "9"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert [o["order"] for o in result["orders"]] == ["AB"] and result["grades"] == {}
    assert "preset paper: task chat-paper" in " ".join(captured.err.split())


# --- the commands of the README on the shared dev data -------------------------------------------------


def test_the_paper_preset_on_the_shared_translation_data(tmp_path: Path, shared_data: Path) -> None:
    fields = ["--field", "response=translation", "--field", "label=human_score"]
    fields += ["--field", "language_pair=language_pair"]
    config = evaluate(
        tmp_path,
        "--task",
        "literary",
        "--translator",
        "llm",
        "--limit",
        "3",
        *fields,
        data=shared_data / "translation_da_dev.jsonl",
    )
    assert (config["task"], config["translator"], config["language_check"]) == (
        "literary-paper",
        "llm",
        False,
    )
    assert config["likelihood_check"] is False  # inherited from literary's declaration, off as the paper
    assert config["reference"] is False  # the paper's judge writes no translation of its own
    assert config["answers"] is True  # and writes its checklist answers out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_ok"] == 3 and summary["metric"] == "kendall"


def test_the_paper_preset_on_the_shared_pairwise_data(tmp_path: Path, shared_data: Path) -> None:
    config = evaluate(tmp_path, "--task", "chat", "--limit", "6", data=shared_data / "pairwise_en_dev.jsonl")
    assert (config["task"], config["orders"], config["headline"]) == ("chat-paper", "single", "strict")
    assert config["reference"] is None  # the pairwise judgment has no grades to give one to
    assert config["answers"] is None  # pointwise only
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_items"] == 6 and summary["strict_average"] is not None
