"""`BackboneOptions`: the backbone's settings declared once. Its bounds are `Option.problem`'s (the one check
of every option), named as Python spells them from Python and as flags on the command line; an unknown name is
refused with the nearest one, from Python, on the command line and in a `--config` file; the flags, the
config keys, `make_lm`'s arguments and the run identity all come from its fields."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.backbones import (
    DEFAULT_REPEAT_PENALTY,
    DEFAULT_TIMEOUT_S,
    MAX_PARALLEL,
    BackboneOptions,
    make_lm,
)
from cejudge_dspy.cli import main
from cejudge_dspy.cli._app import build_parser
from cejudge_dspy.errors import InputError
from tests.support.bad_inputs import good_data


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"temperature": 2.01}, r"^temperature: must be at most 2 \(a sampling temperature\), got 2.01$"),
        ({"temperature": math.nan}, "^temperature: must be a finite number"),
        ({"seed": 1.5}, r"^seed: must be a whole number \(a random seed\), got 1.5$"),
        ({"seed": 2**32}, "^seed: must be at most 4294967295"),
        ({"max_tokens": 0}, "^max_tokens: must be at least 1"),
        ({"timeout": 0.5}, "^timeout: must be at least 1 "),
        ({"timeout": 3601}, "^timeout: must be at most 3600 "),
        ({"repeat_penalty": 0}, "^repeat_penalty: must be above 0 "),
        ({"parallel": MAX_PARALLEL + 1}, f"^parallel: must be at most {MAX_PARALLEL} "),
        ({"adapter": "xml"}, "^adapter: must be one of auto, chat, json, got 'xml'$"),
    ],
)
def test_each_bound_is_one_line_naming_the_setting_as_python_spells_it(
    values: dict[str, Any], says: str
) -> None:
    with pytest.raises(InputError, match=says):
        BackboneOptions(**values)
    with pytest.raises(InputError, match=says):  # make_lm's arguments are read into one
        make_lm("simulated:0", **values)


def test_the_ends_of_each_range_are_accepted_and_the_defaults_are_the_backbones() -> None:
    BackboneOptions(temperature=0, seed=0, max_tokens=1, timeout=1, parallel=1, repeat_penalty=0.01)
    BackboneOptions(temperature=2, seed=2**32 - 1, timeout=3600, parallel=MAX_PARALLEL)
    default = BackboneOptions()
    assert (default.lm, default.timeout, default.repeat_penalty) == (
        "embedded",
        DEFAULT_TIMEOUT_S,
        DEFAULT_REPEAT_PENALTY,
    )


def test_an_unknown_name_in_python_names_the_nearest() -> None:
    with pytest.raises(
        InputError, match="unknown BackboneOptions option 'temprature': did you mean 'temperature'"
    ):
        BackboneOptions(temprature=0.5)  # type: ignore[call-arg]


def test_make_lm_arguments_and_the_run_identity_come_from_the_fields() -> None:
    http = BackboneOptions(lm="hosted_vllm/m", api_base="http://127.0.0.1:9/v1", api_key="k", temperature=0.5)
    assert http.kwargs() == {
        "api_base": "http://127.0.0.1:9/v1", "api_key": "k", "temperature": 0.5, "seed": 42,
        "max_tokens": 1024, "cache": True, "adapter": "auto", "timeout": DEFAULT_TIMEOUT_S,
    }  # fmt: skip
    assert BackboneOptions.from_kwargs(http.lm, **http.kwargs()) == http
    assert http.identity() == {
        "lm": "hosted_vllm/m", "api_base": "http://127.0.0.1:9/v1", "temperature": 0.5, "max_tokens": 1024,
        "constrained": False, "repeat_penalty": None, "adapter": "auto",
    }  # fmt: skip
    local = BackboneOptions(lm="gguf:/m.gguf", repeat_penalty=1.0, parallel=2, constrained=True)
    assert local.identity()["repeat_penalty"] == 1.0 and local.identity()["constrained"] is True
    assert {"repeat_penalty": 1.0, "parallel": 2, "constrained": True}.items() <= local.kwargs().items()


def test_the_backbone_flags_are_the_fields() -> None:
    evaluate = build_parser()._subparsers._group_actions[0].choices["evaluate"]  # type: ignore[union-attr]
    flags = {s for a in evaluate._actions for s in a.option_strings}
    assert {opt.flag for _, opt in BackboneOptions.options()} <= flags
    text = " ".join(evaluate.format_help().split())
    assert "sampling temperature, 0 to 2 (default 0)" in text and "1 to 12" in text


def _evaluate(tmp_path: Path, *extra: str) -> list[str]:
    data = good_data(tmp_path, 2)
    return ["evaluate", "--task", "chat", "--data", str(data), "--bootstrap", "0", *extra]


def test_the_command_names_the_flag_and_refuses_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main([*_evaluate(tmp_path, "--lm", "simulated:0", "--temperature", "3", "--out", str(out))]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == "error: --temperature: must be at most 2 (a sampling temperature), got 3.0"
        and not out.exists()
    )
    assert main([*_evaluate(tmp_path, "--lm", "simulated:0", "--no-cache", "--parallel", "99")]) == 2
    assert f"--parallel: must be at most {MAX_PARALLEL}" in capsys.readouterr().err


def test_an_unknown_flag_names_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--task", "chat", "--temprature", "0.5"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --temprature 0.5 (did you mean --temperature?)" in capsys.readouterr().err


def test_a_config_file_holds_backbone_keys_and_the_flags_win(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.toml"
    config.write_text('lm = "simulated:0"\ntemperature = 0.5\nmax_tokens = 900\ntie_band = 0.1\n')
    out = tmp_path / "run"
    argv = _evaluate(
        tmp_path, "--config", str(config), "--max-tokens", "800", "--no-cache", "--out", str(out)
    )
    assert main(argv) == 0
    capsys.readouterr()
    run = json.loads((out / "run.json").read_text())
    assert (run["lm"], run["temperature"], run["max_tokens"], run["tie_band"]) == (
        "simulated:0",
        0.5,
        800,
        0.1,
    )
    config.write_text('lm = "simulated:0"\ntemprature = 0.5\n')
    assert main(_evaluate(tmp_path, "--config", str(config), "--out", str(tmp_path / "other"))) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{config}: unknown option 'temprature': did you mean 'temperature'?" in err
    config.write_text("seed = 1.5\n")
    assert main(_evaluate(tmp_path, "--config", str(config), "--out", str(tmp_path / "other"))) == 2
    assert f"{config}: option 'seed' must be a whole number" in capsys.readouterr().err
