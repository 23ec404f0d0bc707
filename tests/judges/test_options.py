"""The judge's options object: the flags, the factories' keywords, the checks and the run identity all derive
from `JudgeOptions`, so an option added there reaches all four; `--config` files read the same options."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.cli._program_args import add_program_args, judge_options
from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.judges._options import _option
from cejudge_dspy.runs import IDENTITY_KEYS
from cejudge_dspy.tasks import load_task


def _parse(argv: list[str], options: type[JudgeOptions] = JudgeOptions) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_program_args(parser, options)
    return parser.parse_args(argv)


def test_every_option_is_a_flag_and_the_defaults_are_the_options_defaults() -> None:
    assert judge_options(_parse([])) == JudgeOptions()
    argv = ["--no-concepts", "--language-check", "off", "--tie-band", "0.2", "--no-reference"]
    argv += ["--method", "direct", "--orders", "single", "--answers", "--judge-on", "translated"]
    assert judge_options(_parse(argv)) == JudgeOptions(
        method="direct",
        orders="single",
        tie_band=0.2,
        reference=False,
        concepts=False,
        judge_on="translated",
        answers=True,
        language_check=False,
    )
    with pytest.raises(SystemExit):
        _parse(["--directions", "sideways"])  # choices come from the judge's own constants


def test_the_identity_records_none_where_the_run_has_no_such_option() -> None:
    chat, literary = load_task("chat"), load_task("literary")
    cejudge = JudgeOptions().identity(chat)
    assert cejudge["judgment"] == "graded" and cejudge["reference"] is False and cejudge["answers"] is None
    assert cejudge["english_reference"] is None and cejudge["concepts"] is True
    direct = JudgeOptions(method="direct").identity(chat)
    assert direct["judgment"] is direct["concepts"] is direct["reference"] is None
    assert direct["orders"] == "both" and direct["translator"] == "llm"
    pointwise = JudgeOptions().identity(literary)
    assert pointwise["reference"] is True and pointwise["english_reference"] == "translate"
    assert pointwise["answers"] is False and pointwise["judgment"] is None
    google = JudgeOptions(translator="google").identity(literary)
    assert google["english_reference"] == "reference translation"
    # The run identity's keys are the options' own, in the order run.json has always written them.
    keys = list(IDENTITY_KEYS)
    assert keys[keys.index("orders") : keys.index("likelihood_check") + 1] == list(cejudge)


def test_an_option_given_where_it_does_not_apply_is_one_line_naming_its_flag() -> None:
    chat = load_task("chat")
    with pytest.raises(InputError, match="ablation of CE-Judge; --method direct") as exc:
        JudgeOptions(method="direct", concepts=False).check(chat)
    assert exc.value.field == "--no-concepts"
    with pytest.raises(InputError, match="pointwise judgment") as exc:
        JudgeOptions(answers=False).check(chat)
    assert exc.value.field == "--no-answers"
    with pytest.raises(InputError, match=r"must be below 1 \(a width in probability\)") as exc:
        JudgeOptions(tie_band=1.0).check(chat)
    assert exc.value.option == "tie_band"  # Python's spelling; the CLI names --tie-band
    JudgeOptions(judgment="pairwise", method="direct").check(chat)  # unused there, and accepted


def test_the_factories_keywords_are_the_options_with_checks_resolved() -> None:
    kwargs = JudgeOptions(language_check=None, answers=None).program_kwargs()
    assert "method" not in kwargs and "program" not in kwargs
    assert kwargs["language_check"] is True and kwargs["answers"] is False and kwargs["reference"] is None


@dataclass(frozen=True)
class _WithCap(JudgeOptions):
    """JudgeOptions with one more option, added the one way an option is added: a field."""

    checklist_cap: float = _option(
        0.0, flag="--checklist-cap", kind="number", low=0.0, what="questions", help="at most this many"
    )


def test_adding_an_option_is_one_field_and_it_reaches_flags_kwargs_checks_and_identity() -> None:
    options = judge_options(_parse(["--checklist-cap", "5"], _WithCap), _WithCap)
    assert options.checklist_cap == 5.0
    assert options.program_kwargs()["checklist_cap"] == 5.0
    assert options.identity(load_task("chat"))["checklist_cap"] == 5.0
    assert "checklist_cap" in _WithCap.identity_keys()
    with pytest.raises(InputError, match="at least 0 \\(questions\\)"):
        _WithCap(checklist_cap=-1).check(load_task("chat"))


def _judge(tmp_path: Path, *extra: str) -> list[str]:
    return ["judge", "--lm", "simulated:0", "--no-cache", "--task", "chat", "--json"] + [
        "--instruction",
        "q",
        "--response-a",
        "a",
        "--response-b",
        "b",
        *extra,
    ]


def test_a_config_file_sets_options_and_flags_on_the_command_line_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cejudge_dspy.judges

    seen: list[JudgeOptions] = []
    real = cejudge_dspy.judges.run_program

    def spy(task: Any, *, options: JudgeOptions) -> Any:
        seen.append(options)
        return real(task, options=options)

    monkeypatch.setattr("cejudge_dspy.judges.run_program", spy)
    config = tmp_path / "judge.toml"
    config.write_text('orders = "single"\ntie_band = 0.3\ndecision = "argmax"\n')
    assert main(_judge(tmp_path, "--config", str(config), "--decision", "probability")) in (0, 1)
    assert seen[-1].orders == "single" and seen[-1].tie_band == 0.3
    assert seen[-1].decision == "probability"  # the flag given on the command line wins
    out = capsys.readouterr().out
    assert json.loads(out)["status"] in ("ok", "unparsed")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tie_bnad = 0.1\n", "judge.toml: unknown option 'tie_bnad': did you mean 'tie_band'?"),
        ('orders = "three"\n', "judge.toml: option 'orders' must be one of both, single, got 'three'"),
        ("concepts = 1\n", "judge.toml: option 'concepts' must be true or false, got 1"),
        ("tie_band = [\n", "judge.toml: not a TOML file"),
    ],
)
def test_a_bad_config_file_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    config = tmp_path / "judge.toml"
    config.write_text(text)
    assert main(_judge(tmp_path, "--config", str(config))) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()) and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("tie_band", 1.0),
        ("grade_margin", -0.1),
        ("orders", "three"),
        ("judgment", "vote"),
        ("directions", "up"),
    ],
)
def test_a_judge_constructor_and_the_options_meet_one_rule_in_the_same_words(name: str, bad: Any) -> None:
    """One declaration per bound or choice (`_option_choices.RULES`): `JudgeOptions`, a `--config` key and
    the judges' own constructors refuse the same value with the same words, naming the option."""
    from cejudge_dspy.judges.cejudge import PairwiseJudge

    with pytest.raises(InputError) as from_options:
        JudgeOptions(**{name: bad})
    with pytest.raises(InputError) as from_judge:
        PairwiseJudge("chat", **{name: bad})
    assert str(from_judge.value) == str(from_options.value)
    assert name in str(from_options.value) and repr(bad) in str(from_options.value)
