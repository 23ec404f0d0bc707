"""The `cejudge` command line with a fake backbone: output, exit codes and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest

from cejudge_dspy.backbones import _spec as backbones
from cejudge_dspy.cli import main
from tests import support
from tests.support.fakes import fake_lm


@pytest.fixture
def fake_backbone(monkeypatch: pytest.MonkeyPatch) -> object:
    lm, engine = fake_lm()
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    return engine


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def test_judge_pairwise_prints_json(fake_backbone: object, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "judge",
            "--task",
            "chat",
            "--instruction",
            "q",
            "--response-a",
            "a",
            "--response-b",
            "b",
            "--json",
            "--program",
            "base",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["verdict"] == "tie" and out["consistent"] is False
    assert out["usage"]["calls"] == 11 and set(out["checklists"]) == {"a", "b"}  # 2 grades, 2 orders


def test_judge_pointwise_panel_and_file_input(
    fake_backbone: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "x1",
                "instruction": "Der Hund",
                "response": "The dog",
                "language": "de",
                "response_language": "en",
            }
        )
        + "\n"
    )
    assert main(["judge", "--task", "literary", "--file", str(items), "--program", "base"]) == 0
    out = capsys.readouterr().out
    assert "Score: 5" in out and "Checklist (response)" in out


def test_errors_name_the_flag_on_the_command_line_and_the_key_in_a_file(
    fake_backbone: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judge", "--task", "chat", "--instruction", "q", "--response", "r"]) == 2
    assert "--response: task 'chat' is pairwise: give --response-a and --response-b instead" in error_line(
        capsys
    )
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "x1", "instruction": "q", "response_a": "a"}) + "\n")
    assert main(["judge", "--task", "chat", "--file", str(items)]) == 2
    assert "item x1, field 'response_b': is missing" in error_line(capsys)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--task", "chat", "--instruction", "", "--response-a", "a", "--response-b", "b"],
            "--instruction: is empty",
        ),
        (["--task", "chat", "--instruction", "q", "--response-a", "a"], "--response-b: is missing"),
        (
            ["--task", "caht", "--instruction", "q", "--response-a", "a", "--response-b", "b"],
            "unknown task 'caht': did you mean 'chat'?",
        ),
        (
            [
                "--task",
                "chat",
                "--instruction",
                "q",
                "--response-a",
                "a",
                "--response-b",
                "b",
                "--language",
                "xx",
            ],
            "unknown language 'xx'",
        ),
        (
            ["--task", "literary", "--instruction", "q", "--response-a", "a", "--response-b", "b"],
            "--response-a: task 'literary' is pointwise: give one --response",
        ),
    ],
)
def test_bad_input_is_one_clear_line(
    fake_backbone: object, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    assert main(["judge", *argv]) == 2
    assert expected in error_line(capsys)


def test_missing_and_corrupt_gguf_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["judge", "--task", "chat", "--instruction", "q", "--response-a", "a", "--response-b", "b"]
    assert main([*base, "--lm", f"gguf:{tmp_path / 'nope.gguf'}"]) == 3
    assert "nope.gguf" in error_line(capsys)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"NOTAGGUF" * 10)
    assert main([*base, "--lm", f"gguf:{bad}"]) == 3
    assert "GGUF" in error_line(capsys)


def test_unreachable_backbone_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    # Loopback port 9 (discard) is closed: connection refused, no traffic leaves the machine.
    code = main(
        [
            "judge",
            "--task",
            "chat",
            "--instruction",
            "q",
            "--response-a",
            "a",
            "--response-b",
            "b",
            "--lm",
            "hosted_vllm/judge",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--no-cache",
            "--program",
            "base",
        ]
    )
    assert code == 3
    assert "cannot be reached" in error_line(capsys)


def test_evaluate_writes_results_and_resumes_without_new_calls(
    fake_backbone: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "pairs.jsonl"
    rows = [
        {
            "id": f"i{n}",
            "prompt": f"q{n}",
            "response_a": "a",
            "response_b": "b",
            "label": "A",
            "language": lang,
        }
        for n, lang in enumerate(["de", "de", "fr", "en"])
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = [
        "evaluate",
        "--task",
        "chat",
        "--data",
        str(data),
        "--field",
        "instruction=prompt",
        "--out",
        str(tmp_path / "run"),
        "--bootstrap",
        "50",
        "--program",
        "base",
    ]
    assert main(argv) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_items"] == 4 and set(summary["per_language"]) == {"de", "fr", "en"}
    engine = fake_backbone
    calls = len(engine.calls)  # type: ignore[attr-defined]
    assert main(argv) == 0
    assert len(engine.calls) == calls  # type: ignore[attr-defined]
    assert "4 items, 4 already in" in capsys.readouterr().err


def test_tasks_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks"]) == 0
    assert "literary" in capsys.readouterr().out
    assert main(["tasks", "show", "litrary"]) == 2
    assert "did you mean 'literary'" in error_line(capsys)


def test_score_predictions_command(capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = support.FIXTURES / "predictions"
    assert main(["score-predictions", str(fixtures / "mmeval_de_reasoning.txt")]) == 0
    assert "accuracy" in capsys.readouterr().out


def test_no_lm_is_ever_configured_globally(fake_backbone: object) -> None:
    main(
        [
            "judge",
            "--task",
            "chat",
            "--instruction",
            "q",
            "--response-a",
            "a",
            "--response-b",
            "b",
            "--program",
            "base",
        ]
    )
    assert dspy.settings.lm is None


@pytest.mark.parametrize(
    "summary", ["[" * 5000 + "]" * 5000, "9" * 5000], ids=["nested 5,000 deep", "a 5,000-digit number"]
)
def test_a_resume_over_a_damaged_summary_judges_the_rest_and_writes_it_anew(
    tmp_path: Path, summary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 49: summary.json is the run's output, never its input. A run resumed with one record missing
    and summary.json replaced by JSON no reader takes (5,000 levels deep; a number past Python's 4,300
    digits) judges the missing item and writes the summary anew (before #49: a RecursionError after judging,
    exit 1)."""
    data = tmp_path / "data.jsonl"
    rows = [
        {"id": f"i{n}", "prompt": f"q{n}", "chosen": "good", "rejected": "bad", "language": "de"}
        for n in range(4)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run"
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--out", str(run), "--lm", "simulated:0"]
    argv += ["--bootstrap", "0"]
    assert main(argv) == 0
    results = run / "results.jsonl"
    results.write_text("".join(results.read_text().splitlines(keepends=True)[:3]))
    (run / "summary.json").write_text(summary)
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "4 items, 3 already in" in err and "Traceback" not in err, err[-800:]
    assert len(results.read_text().splitlines()) == 4
    assert json.loads((run / "summary.json").read_text())["overall"]["n"] == 4


def test_resuming_a_finished_run_rewrites_its_summary_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rerun that finds nothing to judge re-summarises from the records it read once (issue 49): the
    same summary.json, byte for byte, CIs and both decision rules included, and the same exit code."""
    data = tmp_path / "data.jsonl"
    rows = [
        {"id": f"i{n}", "prompt": f"q{n // 2}", "chosen": f"good {n}", "rejected": "bad", "language": lang}
        for n, lang in enumerate(["de", "fr", "en"] * 8)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--out", str(tmp_path / "run")]
    argv += ["--lm", "simulated:0", "--bootstrap", "200"]
    assert main(argv) == 0
    first = (tmp_path / "run" / "summary.json").read_bytes()
    assert json.loads(first)["overall"]["ci_low"] is not None  # the intervals are there to compare
    capsys.readouterr()
    assert main(argv) == 0
    assert "24 items, 24 already in" in capsys.readouterr().err
    assert (tmp_path / "run" / "summary.json").read_bytes() == first
