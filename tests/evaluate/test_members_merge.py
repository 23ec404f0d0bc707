"""`cejudge merge --members`: single judges' runs of the same items joined into a panel run, which must be
the panel a live `cejudge evaluate` with those members writes (the simulated backbone is deterministic), and
refusals of runs that did not judge the same items."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.judges.panel import MemberOutcome, combine
from cejudge_dspy.runs import read_run
from tests import support

OBVIOUS = support.BENCHMARKS / "obvious" / "pairwise.jsonl"


def run(*argv: str) -> int:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        return main(list(argv))


def evaluate(out: Path, *extra: str, data: Path = OBVIOUS) -> Path:
    args = ["evaluate", "--task", "chat", "--data", str(data), "--field", "id=id", "--bootstrap", "0"]
    assert run(*args, "--out", str(out), *extra) == 0
    return out


@pytest.fixture(scope="module")
def singles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("members")
    return {
        "cejudge": evaluate(root / "cejudge", "--lm", "simulated:0", "--method", "cejudge", "--first", "8"),
        # a longer selection: the panel holds the 8 items both judged
        "direct": evaluate(root / "direct", "--lm", "simulated:0", "--method", "direct", "--first", "10"),
    }


def test_joined_runs_are_the_panel_a_live_run_of_the_same_members_writes(
    singles: dict[str, Path], tmp_path: Path
) -> None:
    merged = tmp_path / "merged"
    argv = ["merge", "--members", str(singles["cejudge"]), str(singles["direct"]), "--out", str(merged)]
    assert run(*argv, "--bootstrap", "0") == 0
    live = evaluate(
        tmp_path / "live", "--lm", "simulated:0", "--method", "cejudge", "--method", "direct", "--first", "8"
    )
    joined, judged = read_run(merged), read_run(live)
    assert [r.id for r in joined.records] == [r.id for r in judged.records]
    assert len(joined.records) == 8
    for a, b in zip(joined.records, judged.records, strict=True):
        assert a.method == "panel" and a.status == b.status
        assert a.result.verdict == b.result.verdict
        votes, live_votes = a.result.details["panel"]["votes"], b.result.details["panel"]["votes"]
        assert list(votes) == ["cejudge@simulated:0", "direct@simulated:0"]
        assert list(votes.values()) == list(live_votes.values())  # the live panel names members its own way
        assert a.result.details["panel"]["agreement"] == b.result.details["panel"]["agreement"]
    config = joined.config
    assert config["method"] == "panel" and [m["name"] for m in config["panel"]] == [
        "cejudge@simulated:0",
        "direct@simulated:0",
    ]
    assert config["members_beyond_panel"] == {"cejudge@simulated:0": 0, "direct@simulated:0": 2}
    summary = json.loads((merged / "summary.json").read_text())
    assert set(summary["panel"]["rules"]) >= {"majority", "mean"}
    assert summary["panel"]["members"].keys() == {"cejudge@simulated:0", "direct@simulated:0"}


def test_each_joined_record_is_combine_of_the_members_records(
    singles: dict[str, Path], tmp_path: Path
) -> None:
    merged = tmp_path / "merged"
    assert (
        run("merge", "--members", str(singles["direct"]), str(singles["cejudge"]), "--out", str(merged)) == 0
    )
    by_method = {m: {r.id: r for r in read_run(p).records} for m, p in singles.items()}
    for record in read_run(merged).records:
        members = [by_method["direct"][record.id], by_method["cejudge"][record.id]]
        outcomes = [MemberOutcome(f"m{i}", r.status, r.result) for i, r in enumerate(members)]
        expected = combine("pairwise", outcomes, 0.0)
        assert record.result.verdict == expected.verdict
        assert record.result.details["panel"]["mean_p_a"] == expected.details["panel"]["mean_p_a"]
        assert [m["result"]["verdict"] for m in record.members] == [r.result.verdict for r in members]
        assert record.seconds == pytest.approx(sum(r.seconds for r in members), abs=1e-3)


def test_runs_of_other_items_a_panel_or_one_run_are_refused_in_one_line(
    singles: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(OBVIOUS.read_text(encoding="utf-8").replace('"label": "A"', '"label": "B"', 1))
    elsewhere = evaluate(tmp_path / "elsewhere", "--lm", "simulated:0", "--first", "4", data=other)
    panel = evaluate(tmp_path / "panel", "--lm", "simulated:0", "--method", "cejudge", "--method", "direct")
    cases = {
        "did not judge the same items": [str(singles["cejudge"]), str(elsewhere)],
        "is a panel run": [str(singles["cejudge"]), str(panel)],
        "at least two judges": [str(singles["cejudge"])],
    }
    for said, runs in cases.items():
        capsys.readouterr()
        assert main(["merge", "--members", *runs, "--out", str(tmp_path / "never")]) != 0
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1 and "Traceback" not in err
        assert not (tmp_path / "never").exists()
    capsys.readouterr()
    assert main(["merge", str(singles["cejudge"]), "--tie-band", "0.1", "--out", str(tmp_path / "t")]) != 0
    assert "--members" in capsys.readouterr().err


def test_merge_prints_the_tables_a_live_panel_run_prints(
    singles: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The member and rule table, the agreement and the risk-coverage table, as `evaluate` prints them."""
    merged = tmp_path / "merged"
    argv = ["merge", "--members", str(singles["cejudge"]), str(singles["direct"]), "--out", str(merged)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "200")
        assert main([*argv, "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    assert "Selective judging" in printed and "coverage" in printed and "AURC" in printed
    assert "panel: majority" in printed and "Fleiss' kappa" in printed
