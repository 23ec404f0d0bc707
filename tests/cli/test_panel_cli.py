"""`cejudge evaluate` with a panel: two simulated backbones and two HTTP servers as members, what the run
prints and records, resuming (and refusing a changed panel), one error line for a bad panel file, and the
run-directory page naming every key a panel run writes."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.cli import main
from tests import support
from tests.support.gated_server import MODEL, GatedServer

DATA = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
BASE = ["evaluate", "--task", "chat", "--data", str(DATA), "--limit", "6", "--bootstrap", "50"]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def panel_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("panel") / "run"
    argv = [*BASE, "--lm", "simulated:0", "--lm", "simulated:1", "--method", "cejudge", "--method", "direct"]
    stdout = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(stdout):
        mp.setenv("COLUMNS", "250")  # rich's width: one table row per line
        assert main([*argv, "--out", str(out)]) == 0
    return out, stdout.getvalue()


def test_a_panel_run_prints_each_member_and_the_panel_with_cis_agreement_and_tests(
    panel_run: tuple[Path, str],
) -> None:
    _, printed = panel_run
    for member in ("simulated:0/cejudge", "simulated:0/direct", "simulated:1/cejudge", "simulated:1/direct"):
        assert member in printed
    for text in (
        "panel: majority",
        "panel: mean",
        "panel: stacked",
        "95% CI",
        "Fleiss' kappa",
        "Krippendorff",
    ):
        assert text in printed
    assert "vs best member" in printed and "without a majority" in printed


def test_a_panel_run_records_every_member_and_its_identity(panel_run: tuple[Path, str]) -> None:
    out, _ = panel_run
    identity = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert identity["method"] == "panel" and [m["name"] for m in identity["panel"]] == [
        "simulated:0/cejudge",
        "simulated:0/direct",
        "simulated:1/cejudge",
        "simulated:1/direct",
    ]
    records = _lines(out / "results.jsonl")
    assert len(records) == 6
    for record in records:
        assert record["result"]["method"] == "panel" and len(record["members"]) == 4
        votes = record["result"]["details"]["panel"]["votes"]
        assert votes == {m["name"]: m["result"]["verdict"] for m in record["members"]}
        # The panel's cost is its members' summed.
        assert record["result"]["usage"]["calls"] == sum(
            m["result"]["usage"]["calls"] for m in record["members"]
        )
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    panel = summary["panel"]
    assert set(panel["members"]) == {m["name"] for m in identity["panel"]}
    assert set(panel["rules"]) == {"majority", "mean", "stacked"} and panel["headline_rule"] == "majority"
    assert summary["overall"]["value"] == pytest.approx(panel["rules"]["majority"]["value"])
    assert panel["members"]["simulated:0/cejudge"]["ci_low"] is not None  # 6 scored items: a CI


def test_a_panel_run_resumes_and_refuses_a_changed_panel(
    panel_run: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = panel_run
    argv = [*BASE, "--lm", "simulated:0", "--lm", "simulated:1", "--method", "cejudge", "--method", "direct"]
    capsys.readouterr()
    assert main([*argv, "--out", str(out)]) == 0
    assert "0 to judge" in " ".join(capsys.readouterr().err.split())
    assert main([*argv, "--lm", "simulated:2", "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "panel member 'simulated:2/direct' joined" in err and "--force-new" in err
    # A member a task cannot have is one line naming it, before anything is judged.
    assert main([*argv, "--method", "geval", "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("error: panel: member 'simulated:0/geval':") and "dimensions" in err
    assert len(_lines(out / "results.jsonl")) == 6  # nothing was judged into the old run


def test_a_bad_panel_file_is_one_error_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_text(
        '[[member]]\nlm = "simulated:0"\n\n[[member]]\nname = "b"\nlm = "simulated:1"\norders = "one"\n'
    )
    out = tmp_path / "run"
    assert main([*BASE, "--panel", str(panel), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) <= 2  # rich may wrap the one line
    flat = " ".join(err.split())
    assert str(panel) in flat and "member 2 ('b')" in flat and "'orders'" in flat
    assert not out.exists()


def test_a_panel_of_two_http_backbones_judges_on_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with GatedServer() as one, GatedServer() as two:
        panel = tmp_path / "panel.toml"
        panel.write_text(
            f'[[member]]\nname = "one"\nlm = "{MODEL}"\napi_base = "{one.api_base}"\nmethod = "direct"\n\n'
            f'[[member]]\nname = "two"\nlm = "{MODEL}"\napi_base = "{two.api_base}"\nmethod = "direct"\n'
        )
        out = tmp_path / "run"
        assert main([*BASE, "--panel", str(panel), "--no-cache", "--out", str(out)]) == 0
        assert one.answered > 0 and two.answered > 0
        # Each member's calls went to its own server: direct judges both orders, one call each.
        assert one.answered == two.answered == 6 * 2
    records = _lines(out / "results.jsonl")
    assert all(m["status"] == "ok" for r in records for m in r["members"])
    identity = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert [m["api_base"] for m in identity["panel"]] == [one.api_base, two.api_base]
    capsys.readouterr()


def test_each_panel_member_is_asked_in_its_own_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A member's `adapter` in the panel file: "one" asks in JSON, "two" keeps the HTTP road's chat adapter
    (auto), not the first member's, though both judge in one block."""
    with GatedServer() as one, GatedServer() as two:
        panel = tmp_path / "panel.toml"
        panel.write_text(
            f'[[member]]\nname = "one"\nlm = "{MODEL}"\napi_base = "{one.api_base}"\nadapter = "json"\n'
            'method = "direct"\n\n'
            f'[[member]]\nname = "two"\nlm = "{MODEL}"\napi_base = "{two.api_base}"\nmethod = "direct"\n'
        )
        out = tmp_path / "run"
        assert main([*BASE, "--panel", str(panel), "--no-cache", "--out", str(out)]) == 0
    for server, marker, other in (
        (one, "JSON object", "[[ ## completed ## ]]"),
        (two, "[[ ## completed", "JSON"),
    ):
        systems = [m["content"] for b in server.bodies for m in b["messages"] if m["role"] == "system"]
        assert systems and all(marker in s and other not in s for s in systems)
    records = _lines(out / "results.jsonl")
    assert all(m["status"] == "ok" for r in records for m in r["members"])
    assert {(m["name"], m["features"]["adapter"]) for r in records for m in r["members"]} == {
        ("one", "json"),
        ("two", "chat"),
    }
    identity = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert identity["adapter"] == "auto" and [m["adapter"] for m in identity["panel"]] == ["json", "auto"]
    capsys.readouterr()


def _missing(keys: Any, text: str) -> list[str]:
    return sorted(k for k in keys if f"`{k}`" not in text)


def test_the_run_directory_page_names_every_key_a_panel_run_writes(panel_run: tuple[Path, str]) -> None:
    out, _ = panel_run
    text = (support.REPO / "docs" / "reference" / "run-directory.md").read_text(encoding="utf-8")
    identity = json.loads((out / "run.json").read_text(encoding="utf-8"))
    record = _lines(out / "results.jsonl")[0]
    panel = json.loads((out / "summary.json").read_text(encoding="utf-8"))["panel"]
    assert not _missing(identity, text) and not _missing(identity["panel"][0], text)
    assert not _missing(record, text) and not _missing(record["members"][0], text)
    assert not _missing(record["result"]["details"]["panel"], text)
    assert not _missing(panel, text) and not _missing(panel["agreement"], text)
    stacked = set(panel["rules"]["stacked"]) - set(panel["rules"]["majority"])
    assert stacked == {"weights", "intercept", "folds"} and not _missing(stacked | set(panel["rules"]), text)
    assert "`against`" in text


def test_judge_with_a_panel_prints_each_member_and_the_votes(capsys: pytest.CaptureFixture[str]) -> None:
    pair = ["--instruction", "Capital of France?", "--response-a", "Paris.", "--response-b", "Turtles."]
    argv = ["judge", *pair, "--lm", "simulated:0", "--lm", "simulated:1", "--method", "direct"]
    assert main([*argv, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["method"] == "panel" and [m["name"] for m in row["members"]] == ["simulated:0", "simulated:1"]
    assert row["details"]["panel"]["votes"] == {m["name"]: m["result"]["verdict"] for m in row["members"]}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "200")
        assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "member simulated:0" in printed and "member simulated:1" in printed
    assert "agreement" in printed and "entropy" in printed


def test_panel_shards_merge_with_their_members_and_panel_summary(tmp_path: Path) -> None:
    argv = [*BASE, "--lm", "simulated:0", "--lm", "simulated:1", "--method", "direct"]
    shards = [tmp_path / "s1", tmp_path / "s2"]
    for k, out in enumerate(shards, 1):
        assert main([*argv, "--shard", f"{k}/2", "--out", str(out)]) == 0
    merged = tmp_path / "merged"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    records = _lines(merged / "results.jsonl")
    assert len(records) == 6 and all(len(r["members"]) == 2 for r in records)
    summary = json.loads((merged / "summary.json").read_text(encoding="utf-8"))
    assert set(summary["panel"]["members"]) == {"simulated:0", "simulated:1"}


def test_other_commands_refuse_a_second_backbone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backbones", "check", "--lm", "simulated:0", "--lm", "simulated:1"]) == 2
    assert "--lm: is given more than once" in " ".join(capsys.readouterr().err.split())


def test_compare_names_a_panel_by_its_members(
    panel_run: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    single = tmp_path / "single"
    assert main([*BASE, "--lm", "simulated:0", "--out", str(single)]) == 0
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "400")
        assert main(["compare", str(panel_run[0]), str(single)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    members = " + ".join(
        ["simulated:0/cejudge", "simulated:0/direct", "simulated:1/cejudge", "simulated:1/direct"]
    )
    assert f"panel ({members}) → None" in said
