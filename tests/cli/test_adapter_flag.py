"""`--adapter {auto,chat,json}`: the prompt format every command with `--lm` asks its backbone in.

auto keeps each road's own (local GGUF models JSONAdapter, HTTP backbones DSPy's ChatAdapter); json makes an
HTTP backbone's requests JSON-adapter prompts (read off the gated fake server's request bodies), chat gives a
local model DSPy's ChatAdapter. The choice is in run.json (a run.json from before it reads as auto and
resumes) and what it resolved to in each record's `features`. No model runs: the HTTP road is the gated
fake, the local one a fake LM in place of `make_lm`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest

from cejudge_dspy.backbones import ADAPTERS
from cejudge_dspy.cli import main
from cejudge_dspy.judges import ADAPTER_CHOICES
from tests import support
from tests.support.fakes import spy_on_adapter
from tests.support.gated_server import MODEL, GatedServer

DATA = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
EVALUATE = ["evaluate", "--task", "chat", "--data", str(DATA), "--limit", "2", "--bootstrap", "0"]
JUDGE = ["judge", "--task", "chat", "--instruction", "q", "--response-a", "a", "--response-b", "b"]
JSON_SYSTEM = "Outputs will be a JSON object"  # JSONAdapter's system message
CHAT_SYSTEM = "[[ ## completed ## ]]"  # ChatAdapter's: the fields' markers, then this one


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _systems(server: GatedServer) -> list[str]:
    return [m["content"] for body in server.bodies for m in body["messages"] if m["role"] == "system"]


def test_the_flag_s_choices_are_the_backbones(capsys: pytest.CaptureFixture[str]) -> None:
    assert ADAPTER_CHOICES == ADAPTERS
    with pytest.raises(SystemExit) as exited:
        main([*JUDGE, "--lm", "simulated:0", "--adapter", "xml"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("argument --adapter: invalid choice: 'xml' (choose from 'auto', 'chat', 'json')")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ([], "chat"),  # auto: DSPy's default, today's HTTP road
        (["--adapter", "chat"], "chat"),
        (["--adapter", "json"], "json"),
    ],
)
def test_an_http_backbone_is_asked_in_the_adapter_chosen(
    tmp_path: Path, given: list[str], expected: str
) -> None:
    out = tmp_path / "run"
    with GatedServer() as server:
        argv = [*EVALUATE, "--method", "direct", "--lm", MODEL, "--api-base", server.api_base, "--no-cache"]
        assert main([*argv, *given, "--out", str(out)]) == 0
    systems = _systems(server)
    assert systems and len(systems) == len(server.bodies)  # every request has the adapter's system message
    if expected == "json":
        assert all(JSON_SYSTEM in s and CHAT_SYSTEM not in s for s in systems)
        last = [body["messages"][-1]["content"] for body in server.bodies]
        assert all("Respond with a JSON object" in text for text in last)
    else:
        assert all(CHAT_SYSTEM in s and JSON_SYSTEM not in s for s in systems)
    records = _records(out)
    assert len(records) == 2 and all(r["status"] == "ok" for r in records)  # the fake answered in kind
    assert {r["features"]["adapter"] for r in records} == {expected}
    identity = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert identity["adapter"] == (given[1] if given else "auto")


def test_the_simulated_backbone_answers_either_adapter(tmp_path: Path) -> None:
    """The simulated backbone is chosen for like an HTTP one (auto: chat) and answers the format asked."""
    for adapter, expected in (("auto", "chat"), ("json", "json")):
        out = tmp_path / adapter
        assert main([*EVALUATE, "--lm", "simulated:0", "--adapter", adapter, "--out", str(out)]) == 0
        records = _records(out)
        assert {r["features"]["adapter"] for r in records} == {expected}
        assert all(r["status"] == "ok" for r in records)


def _adapter_seen(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> Any:
    """The adapter current while `cejudge judge ARGV` judges, on a fake LM in place of the backbone."""
    seen: dict[str, Any] = {}
    spy_on_adapter(monkeypatch, seen, "adapter")
    assert main([*JUDGE, *argv]) == 2
    return seen["adapter"]


def test_each_road_keeps_its_adapter_unless_told(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = ["--api-base", "http://127.0.0.1:9/v1"]
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 64)
    # auto: today's adapters, JSON on a local model, DSPy's default on a server.
    assert type(_adapter_seen(monkeypatch, ["--lm", "embedded"])) is dspy.JSONAdapter
    assert type(_adapter_seen(monkeypatch, ["--lm", f"gguf:{gguf}"])) is dspy.JSONAdapter
    assert _adapter_seen(monkeypatch, ["--lm", "openai/x", *server]) is None
    # Told: a local model in DSPy's chat adapter, a server in its JSON adapter.
    assert type(_adapter_seen(monkeypatch, ["--lm", "embedded", "--adapter", "chat"])) is dspy.ChatAdapter
    assert type(_adapter_seen(monkeypatch, ["--lm", "openai/x", *server, "--adapter", "json"])) is (
        dspy.JSONAdapter
    )
    capsys.readouterr()


def test_a_run_from_before_the_flag_resumes_as_auto(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [*EVALUATE, "--lm", "simulated:0", "--out", str(out)]
    assert main(argv) == 0
    identity = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert identity["adapter"] == "auto"
    del identity["adapter"]  # as a run.json written before --adapter
    (out / "run.json").write_text(json.dumps(identity), encoding="utf-8")
    capsys.readouterr()
    assert main(argv) == 0
    assert "0 to judge" in " ".join(capsys.readouterr().err.split())
    assert main([*argv, "--adapter", "json"]) == 2  # another prompt format: another run
    err = " ".join(capsys.readouterr().err.split())
    assert "adapter: 'auto' -> 'json'" in err and "--force-new" in err
    assert len(_records(out)) == 2


def test_constrained_decoding_needs_the_json_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [*EVALUATE, "--lm", "embedded", "--constrained", "--adapter", "chat", "--out", str(out)]
    assert main(argv) == 3  # a backbone error, before any model is assembled or loaded
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--constrained decodes under the JSON adapter's schema" in err
    assert not out.exists()
