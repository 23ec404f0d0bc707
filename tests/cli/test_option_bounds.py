"""The CLI's own bounds (backbone and run flags), `--out`, `--ray ADDRESS` and the API key check: what
they accept as well as what they refuse (the refusals are also cases of tests/support/hostile/options.py)."""

from __future__ import annotations

import json
import math
import os
import socket
from pathlib import Path

import pytest

from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.cli import main
from cejudge_dspy.cli._common import bound, check_flag
from cejudge_dspy.cli._run_args import BOOTSTRAP
from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.evaluate import check_api_key, check_out, check_ray_address
from tests.support.bad_inputs import good_data

TEMPERATURE, SEED = (dict(BackboneOptions.options())[name] for name in ("temperature", "seed"))


def test_a_bound_takes_its_ends_and_refuses_past_them_and_nan() -> None:
    for value in (0.0, 2.0, 0.7):
        check_flag(TEMPERATURE, value)
    for value in (-0.0001, 2.0001, math.nan, math.inf, -math.inf):
        with pytest.raises(InputError, match=r"^--temperature: must be"):
            check_flag(TEMPERATURE, value)
    check_flag(SEED, 0)
    check_flag(SEED, 2**32 - 1)
    with pytest.raises(InputError, match="at most 4294967295"):
        check_flag(SEED, 2**32)
    check_flag(BOOTSTRAP, 0)
    with pytest.raises(InputError, match="at most 10000"):
        check_flag(BOOTSTRAP, 10**8)


def test_a_flag_not_given_is_not_checked_and_one_given_is() -> None:
    check_flag(bound("-n", "items", 1), None)  # not given
    with pytest.raises(InputError, match="^-n: must be at least 1"):
        check_flag(bound("-n", "items", 1), 0)


def test_out_is_a_directory_or_a_path_whose_missing_folders_can_be_made(tmp_path: Path) -> None:
    check_out(tmp_path)  # an existing directory
    check_out(tmp_path / "new" / "deeper" / "run")  # missing folders: made like mkdir -p
    assert not (tmp_path / "new").exists()  # the check itself makes nothing
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="exists and is not a directory"):
        check_out(tmp_path / "file")
    with pytest.raises(InputError, match=r"cannot be made: .*file is not a directory"):
        check_out(tmp_path / "file" / "run")
    with pytest.raises(InputError, match="exists and is not a directory"):
        check_out(Path("/dev/null"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_out_in_a_folder_this_process_cannot_write_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(InputError, match="is not writable"):
            check_out(locked / "run")
    finally:
        locked.chmod(0o700)


def test_evaluate_makes_missing_folders_and_its_run_json_holds_no_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a" / "b" / "run"
    argv = ["evaluate", "--task", "chat", "--data", str(good_data(tmp_path, 2)), "--out", str(out)]
    assert main([*argv, "--lm", "simulated:0", "--bootstrap", "0", "--temperature", "2"]) == 0
    capsys.readouterr()

    def no_constants(name: str) -> None:
        raise AssertionError(f"run.json holds {name}")

    run = json.loads((out / "run.json").read_text(), parse_constant=no_constants)
    assert run["temperature"] == 2.0


def test_a_ray_address_where_nothing_listens_is_refused_without_ray() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, now closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CEJudgeError, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}") as exc:
        check_ray_address(f"127.0.0.1:{port}")
    assert exc.value.exit_code == 3


def test_a_ray_address_that_accepts_passes_and_local_needs_no_probe() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        check_ray_address(f"127.0.0.1:{port}")
        check_ray_address(f"ray://localhost:{port}")
    check_ray_address("local")


def test_a_ray_address_that_does_not_answer_gives_up_after_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, float] = {}

    def silent(address: tuple[str, int], timeout: float) -> socket.socket:
        seen["timeout"] = timeout
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent)
    with pytest.raises(CEJudgeError, match=r"\(no answer, waited at most 2 s\)"):
        check_ray_address("10.0.0.1:6379", timeout=2.0)
    assert seen["timeout"] == 2.0


def test_auto_probes_ray_address_when_it_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    check_ray_address("auto")  # Ray finds the cluster itself
    monkeypatch.setenv("RAY_ADDRESS", "no-port")
    with pytest.raises(InputError, match="expected a cluster's HOST:PORT"):
        check_ray_address("auto")


def test_an_openai_model_needs_a_key_unless_a_server_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(CEJudgeError, match="has no API key"):
        check_api_key("openai/x", None, None)
    check_api_key("openai/x", "k", None)
    check_api_key("openai/x", None, "http://127.0.0.1:9/v1")
    check_api_key("hosted_vllm/x", None, None)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    check_api_key("openai/x", None, None)


@pytest.mark.parametrize(
    "extra",
    [
        ["--lm", "openai/x"],
        ["--ray", "127.0.0.1:1"],
        ["--temperature", "nan"],
        ["--seed", "-1"],
        ["--bootstrap", "100000000"],
        ["--tie-band", "nan"],
    ],
    ids=" ".join,
)
def test_a_refused_option_leaves_no_run_directory_at_all(
    extra: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "runs" / "run"
    argv = ["evaluate", "--task", "chat", "--data", str(good_data(tmp_path, 2)), "--out", str(out)]
    assert main([*argv, "--lm", "simulated:0", "--bootstrap", "0", *extra]) != 0
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: ")
    assert not (tmp_path / "runs").exists()  # not even an empty folder or a lock file
