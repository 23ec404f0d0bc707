"""The tuned programs shipped in optimized/, and how runs record which program judged them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cejudge_dspy.backbones import _spec as backbones
from cejudge_dspy.cli import main
from cejudge_dspy.judges import (
    auto_choice,
    load_program,
    manifest_path,
    program_identity,
    read_manifest,
    save_program,
)
from cejudge_dspy.judges.cejudge import PairwiseJudge
from tests.support import OPTIMIZED as REPO_OPTIMIZED
from tests.support.fakes import fake_lm

SHIPPED = sorted(p for p in REPO_OPTIMIZED.glob("*.json") if not p.name.endswith(".manifest.json"))


# What a manifest says when tuning showed a held-out gain (tuning.gain.held_out_gain); tests that need a
# tuned program that `--program auto` loads save it with this.
PROVEN = {"significant": True, "reason": "accuracy 0.500 -> 0.900 over 20 dev items (test fixture)"}


def test_every_shipped_program_shows_a_held_out_gain() -> None:
    # Nothing that measured worse than the hand-written program, or not better beyond noise, ships.
    for path in SHIPPED:
        gain = read_manifest(path).get("held_out") or {}
        assert gain.get("significant") is True, f"{path.name}: {gain.get('reason', 'no held-out comparison')}"


def test_auto_passes_over_a_tuned_program_without_a_held_out_gain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CEJUDGE_OPTIMIZED", str(tmp_path))
    worse = {"significant": False, "reason": "no gain beyond noise: kendall 0.200 -> -0.600 over 6 dev items"}
    save_program(
        PairwiseJudge("chat"), tmp_path / "chat.json", {"task": "chat", "task_version": 1, "held_out": worse}
    )
    assert auto_choice("chat") == (None, "optimized/chat.json not used: " + worse["reason"])
    assert program_identity("chat", "auto") == "base"
    save_program(PairwiseJudge("chat"), tmp_path / "chat.json", {"task": "chat", "task_version": 1})
    assert "no held-out comparison" in (auto_choice("chat")[1] or "")
    # An explicit path is the user's choice and loads whatever its manifest says.
    assert program_identity("chat", str(tmp_path / "chat.json")).startswith("optimized/chat.json@")
    argv = ["judge", "--task", "chat", "--instruction", "q", "--response-a", "a", "--response-b", "b"]
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: fake_lm()[0])
    main([*argv, "--json"])
    assert (
        "program: base (optimized/chat.json not used: its manifest records no held-out"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_a_shipped_program_loads_under_the_current_declarations(path: Path) -> None:
    manifest = read_manifest(path)
    program = load_program(manifest["task"], path)  # refuses any task, version or signature mismatch
    state = json.loads(path.read_text(encoding="utf-8"))
    assert all(not (isinstance(v, dict) and v.get("lm")) for v in state.values())  # no LM inside
    # What the README promises each manifest says: data, splits, backbone and both dev measurements.
    assert manifest["data"] and manifest["splits"]["train"] > 0 and manifest["splits"]["dev"] > 0
    assert manifest["backbones"]["task"] and manifest["optimizer"]["name"]
    dev = manifest["dev"]
    assert dev["before"]["n"] == dev["after"]["n"] == manifest["splits"]["dev"]
    assert isinstance(dev["before"]["metric"], float) and isinstance(dev["after"]["metric"], float)
    assert {name for name, _ in program.named_predictors()} == set(state) - {"metadata"}


def test_program_identity_names_the_state_file_and_its_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CEJUDGE_OPTIMIZED", str(tmp_path))
    assert program_identity("chat", "auto") == "base" == program_identity("chat", "base")
    path = tmp_path / "chat.json"
    save_program(PairwiseJudge("chat"), path, {"task": "chat", "task_version": 1, "held_out": PROVEN})
    first = program_identity("chat", "auto")
    assert first.startswith("optimized/chat.json@") and len(first.rsplit("@", 1)[1]) == 12
    assert program_identity("chat", str(path)) == first  # the same file, however it is named
    elsewhere = tmp_path / "mine" / "chat.json"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(path.read_bytes())
    assert program_identity("chat", str(elsewhere)) == f"{elsewhere.as_posix()}@{first.rsplit('@', 1)[1]}"
    path.write_text(path.read_text(encoding="utf-8").replace("{", "{ ", 1), encoding="utf-8")
    assert program_identity("chat", "auto") != first  # a retuned file is another program
    with pytest.raises(Exception, match="does not exist"):
        program_identity("chat", str(tmp_path / "nope.json"))
    assert manifest_path(path).exists()


def test_a_run_started_on_the_base_program_does_not_resume_with_a_tuned_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lm, _ = fake_lm()
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    optimized = tmp_path / "optimized"
    monkeypatch.setenv("CEJUDGE_OPTIMIZED", str(optimized))
    data = tmp_path / "pairs.jsonl"
    row = {
        "id": "i0",
        "instruction": "q",
        "response_a": "a",
        "response_b": "b",
        "label": "A",
        "language": "en",
    }
    data.write_text(json.dumps(row) + "\n")
    argv = [
        "evaluate",
        "--task",
        "chat",
        "--data",
        str(data),
        "--out",
        str(tmp_path / "run"),
        "--bootstrap",
        "20",
    ]
    assert main(argv) == 0  # "auto" with nothing saved: the base program
    assert json.loads((tmp_path / "run" / "run.json").read_text())["program"] == "base"
    save_program(
        PairwiseJudge("chat"),
        optimized / "chat.json",
        {"task": "chat", "task_version": 1, "held_out": PROVEN},
    )
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "program: 'base' -> " in err and "chat.json@" in err
    fresh = [*argv[:-4], "--out", str(tmp_path / "run2"), "--bootstrap", "20"]
    assert main(fresh) == 0
    assert "program: " in capsys.readouterr().err  # the tuned program is announced
