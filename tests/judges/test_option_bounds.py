"""The judge's options have one check each (`Option.problem`): the flag, a `--config` file and the
`JudgeOptions` constructor refuse the same values, NaN and the infinities among them."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest

from cejudge_dspy.cli._program_args import add_program_args, config_options, judge_options
from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import JudgeOptions

BAD = [
    ("tie_band", math.nan, "must be a finite number"),
    ("tie_band", math.inf, "must be a finite number"),
    ("tie_band", -math.inf, "must be a finite number"),
    ("tie_band", 1.0, "must be below 1"),
    ("tie_band", -0.01, "must be at least 0"),
    ("grade_margin", math.nan, "must be a finite number"),
    ("grade_margin", 1.01, "must be at most 1"),
    ("grade_margin", -1.0, "must be at least 0"),
]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@pytest.mark.parametrize(("name", "value", "message"), BAD)
def test_the_constructor_refuses_a_number_out_of_bounds_naming_the_option_as_python_spells_it(
    name: str, value: float, message: str
) -> None:
    with pytest.raises(InputError, match=message) as exc:
        JudgeOptions(**{name: value})
    assert exc.value.option == name and str(exc.value).startswith(f"{name}: ")


@pytest.mark.parametrize(("name", "value", "message"), BAD)
def test_the_flag_refuses_the_same_values(name: str, value: float, message: str) -> None:
    parser = argparse.ArgumentParser()
    add_program_args(parser)
    args = parser.parse_args([f"{_flag(name)}={value}"])
    with pytest.raises(InputError, match=message) as exc:
        judge_options(args)
    assert str(exc.value).startswith(_flag(name) + ": ")


@pytest.mark.parametrize(("name", "value", "message"), BAD)
def test_a_config_file_refuses_the_same_values_naming_the_file_and_key(
    name: str, value: float, message: str, tmp_path: Path
) -> None:
    toml = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else value
    path = tmp_path / "judge.toml"
    path.write_text(f"{name} = {toml}\n")
    with pytest.raises(InputError, match=message) as exc:
        config_options(path)
    assert str(exc.value).startswith(f"{path}: option '{name}' ")


def test_the_bounds_themselves_are_accepted() -> None:
    options = JudgeOptions(tie_band=0.0, grade_margin=1.0)
    assert (options.tie_band, options.grade_margin) == (0.0, 1.0)
    assert JudgeOptions(tie_band=0.999).tie_band == 0.999


def test_a_choice_outside_its_choices_is_refused_by_the_constructor_too() -> None:
    with pytest.raises(InputError, match="must be one of both, single") as exc:
        JudgeOptions(orders="sideways")  # type: ignore[arg-type]
    assert exc.value.option == "orders"
    with pytest.raises(InputError, match="must be a number"):
        JudgeOptions(tie_band="0.1")  # type: ignore[arg-type]


def test_the_problem_text_says_nothing_for_a_good_value() -> None:
    options = dict(JudgeOptions.options())
    assert options["tie_band"].problem(0.2) is None
    assert options["orders"].problem("single") is None
    assert options["tie_band"].problem(math.nan) is not None
