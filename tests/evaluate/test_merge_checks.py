"""`cejudge merge` checks each shard against the items its run.json lists (issue #41): an interrupted or
torn shard is refused by name, `--partial` merges it and says what is missing, in the summary and on
stderr, and a merged run lists its items as its shards did. The refusals themselves are in the hostile
corpus (tests/support/hostile/readers.py)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.runs import RESULTS, RUN, read_run
from tests.support.bad_inputs import evaluate, good_data

N_ITEMS = 12


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Shards 1/3, 2/3 and 3/3 of one run of N_ITEMS items, judged once for the module."""
    root = tmp_path_factory.mktemp("shards")
    data = good_data(root, N_ITEMS)
    shards = []
    for k in (1, 2, 3):
        argv = evaluate("--shard", f"{k}/3", data=data)(root)
        argv[argv.index("--out") + 1] = str(root / f"s{k}")
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 0
        shards.append(root / f"s{k}")
    return shards


@pytest.fixture
def shards(judged: list[Path], tmp_path: Path) -> list[Path]:
    return [Path(shutil.copytree(s, tmp_path / s.name)) for s in judged]


def size(shard: Path) -> int:
    return json.loads((shard / RUN).read_text())["items"]["n"]


def interrupt(shard: Path, keep: int) -> None:
    kept = (shard / RESULTS).read_text().splitlines()[:keep]
    (shard / RESULTS).write_text("".join(line + "\n" for line in kept))


def merge(*argv: str | Path) -> int:
    return main(["merge", *map(str, argv)])


def test_shard_sizes_are_recorded_and_add_up(shards: list[Path]) -> None:
    assert sum(size(s) for s in shards) == N_ITEMS
    assert all(size(s) > 0 for s in shards)  # each shard has items to lose, or the checks below prove nothing


def test_an_interrupted_shard_is_refused_by_name(
    shards: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    interrupt(shards[1], 0)
    assert merge(*shards, "--out", shards[0].parent / "m") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"error: shard 2/3 in {shards[1]} holds 0 of its {size(shards[1])} items")
    assert "--partial" in err[-1] and not (shards[0].parent / "m").exists()


def test_partial_merges_an_interrupted_shard_and_says_what_is_missing(
    shards: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    interrupt(shards[1], 0)
    lacking = size(shards[1])
    out = shards[0].parent / "m"
    assert merge(*shards, "--out", out, "--partial") == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_items"] == N_ITEMS - lacking and summary["n_missing"] == lacking
    assert summary["partial"] == {
        "shards": [1, 2, 3],
        "of": 3,
        "missing": [],
        "incomplete": {"2/3": lacking},
        "missing_items": lacking,
    }
    err = capsys.readouterr().err
    assert f"partial merge into {out}" in err and f"2/3 lacks {lacking}" in err
    merged = read_run(out)  # the merged run knows its items: what is missing stays visible
    assert (merged.expected is not None, len(merged.expected or []), merged.n_missing) == (
        True,
        N_ITEMS,
        lacking,
    )


def test_a_torn_shard_is_refused_then_merged_partially(
    shards: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    torn = shards[2]
    (torn / RESULTS).write_bytes((torn / RESULTS).read_bytes()[:-20])
    assert merge(*shards, "--out", torn.parent / "m") == 2
    err = capsys.readouterr().err
    assert "torn line at the end of" in err and err.strip().splitlines()[-1].startswith("error: shard 3/3")
    assert merge(*shards, "--out", torn.parent / "p", "--partial") == 0
    summary = json.loads((torn.parent / "p" / "summary.json").read_text())
    assert (summary["n_items"], summary["n_missing"], summary["partial"]["incomplete"]) == (
        N_ITEMS - 1,
        1,
        {"3/3": 1},
    )


def test_a_whole_merge_lists_all_items_and_nothing_missing(shards: list[Path]) -> None:
    out = shards[0].parent / "all"
    assert merge(*shards, "--out", out) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_items"] == N_ITEMS and "n_missing" not in summary and "partial" not in summary
    assert json.loads((out / RUN).read_text())["items"]["n"] == N_ITEMS


def test_shards_from_before_items_merge_with_a_warning(
    shards: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    for shard in shards:
        config = json.loads((shard / RUN).read_text())
        del config["items"]
        (shard / RUN).write_text(json.dumps(config))
    interrupt(shards[1], 0)  # cannot be told from a complete shard without its items
    out = shards[0].parent / "old"
    assert merge(*shards, "--out", out) == 0
    assert capsys.readouterr().err.count("does not list its items") == 3
    assert "items" not in json.loads((out / RUN).read_text())
