"""Hostile readers cases (issue #41): damaged run directories handed to the commands that read runs
(`view`, `compare`, `merge`, `calibrate`, `agreement`). Each must be one `error:` line naming the file, the
line and the field or id, never a traceback and never a silent change of the metrics.

The damaged runs are copies of one good run (and of three shards) built once per process, so the corpus
judges 12 items a few times, not once per case. A damaged run lives in `damaged/` (or `s1`..`s3`), never in
`run/`, which `run_case` reserves for output a refused command must not write.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.support.bad_inputs import Case, evaluate, good_data


@functools.cache
def _built() -> Path:
    """A good chat run of 12 items (`whole/`) and its three shards (`s1`..`s3`), judged once."""
    from cejudge_dspy.cli import main

    root = Path(tempfile.mkdtemp(prefix="cejudge-hostile-readers-"))
    # Built once per process and shared by every case, so no test's tmp_path owns it: removed at exit.
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    data = good_data(root)
    for out, extra in [("whole", []), *((f"s{k}", ["--shard", f"{k}/3"]) for k in (1, 2, 3))]:
        argv = evaluate(*extra, data=data)(root)
        argv[argv.index("--out") + 1] = str(root / out)
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 0, argv
    return root


def _copy(d: Path, name: str, to: str | None = None) -> Path:
    dest = d / (to or name)
    shutil.copytree(_built() / name, dest)
    return dest


def _lines(run: Path) -> list[str]:
    return (run / "results.jsonl").read_text(encoding="utf-8").splitlines()


def _write(run: Path, lines: list[str]) -> None:
    (run / "results.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


Damage = Callable[[Path], None]


def _replace_line(n: int, text: str) -> Damage:
    def damage(run: Path) -> None:
        lines = _lines(run)
        lines[n] = text
        _write(run, lines)

    return damage


def _edit_record(n: int, change: Callable[[dict], dict]) -> Damage:
    def damage(run: Path) -> None:
        lines = _lines(run)
        lines[n] = json.dumps(change(json.loads(lines[n])))
        _write(run, lines)

    return damage


def _without(key: str) -> Damage:
    return _edit_record(1, lambda r: {k: v for k, v in r.items() if k != key})


def _conflicting_duplicate(run: Path) -> None:
    """A second record of a judged item with another outcome (the copy's verdict flipped)."""
    lines = _lines(run)
    record = json.loads(lines[0])
    record["result"]["verdict"] = "B" if record["result"]["verdict"] == "A" else "A"
    _write(run, [*lines, json.dumps(record)])


def _foreign_id(run: Path) -> None:
    lines = _lines(run)
    record = json.loads(lines[0])
    _write(run, [*lines, json.dumps({**record, "id": "not-in-this-run"})])


def _results_dir(run: Path) -> None:
    (run / "results.jsonl").unlink()
    (run / "results.jsonl").mkdir()


def _bad_items(run: Path) -> None:
    config = json.loads((run / "run.json").read_text())
    config["items"] = {"n": 3, "ids": "oops"}
    (run / "run.json").write_text(json.dumps(config))


def _interrupted(run: Path) -> None:
    lines = _lines(run)
    _write(run, lines[: len(lines) // 2])


def _torn(run: Path) -> None:
    data = (run / "results.jsonl").read_bytes()
    (run / "results.jsonl").write_bytes(data[:-30])


def _no_run_json(run: Path) -> None:
    (run / "run.json").unlink()


def read(command: list[str], damage: Damage, *, with_good: bool = False) -> Callable[[Path], list[str]]:
    """`cejudge COMMAND [whole] damaged`: a damaged copy of the good run (after the good one, for the
    commands that read two or more runs)."""

    def argv(d: Path) -> list[str]:
        damaged = _copy(d, "whole", "damaged")
        damage(damaged)
        good = [str(_copy(d, "whole"))] if with_good else []
        return [*command, *good, str(damaged)]

    return argv


def merge(damage: Damage, *extra: str) -> Callable[[Path], list[str]]:
    """`cejudge merge s1 s2 s3 --out run` with shard 2 damaged."""

    def argv(d: Path) -> list[str]:
        shards = [_copy(d, f"s{k}") for k in (1, 2, 3)]
        damage(shards[1])
        return ["merge", *map(str, shards), "--out", str(d / "run"), *extra]

    return argv


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    empty = _replace_line(2, "{}")
    commands: list[tuple[str, list[str], bool]] = [
        ("view", ["view"], False),
        ("compare", ["compare"], True),
        ("calibrate", ["calibrate"], False),
        ("agreement", ["agreement"], True),
    ]
    cases = [
        Case(f"readers: {name} of a {{}} line", read(cmd, empty, with_good=two))
        for name, cmd, two in commands
    ]
    cases += [Case("readers: merge of a shard with a {} line", merge(empty))]
    for key in ("item", "id", "status", "task"):
        cases.append(Case(f"readers: view of a record without '{key}'", read(["view"], _without(key))))
    cases += [
        Case(
            "readers: view of a record whose item is a list",
            read(["view"], _edit_record(1, lambda r: {**r, "item": [1]})),
        ),
        Case(
            "readers: view of a record whose item lacks its mode",
            read(["view"], _edit_record(1, lambda r: {**r, "item": {"id": r["id"]}})),
        ),
        Case(
            "readers: view of a record whose result is malformed",
            read(["view"], _edit_record(1, lambda r: {**r, "result": {"orders": 3}})),
        ),
        Case(
            "readers: view of a record with status 'maybe'",
            read(["view"], _edit_record(1, lambda r: {**r, "status": "maybe"})),
        ),
        Case(
            "readers: view of a record whose seconds is text",
            read(["view"], _edit_record(1, lambda r: {**r, "seconds": "fast"})),
        ),
        Case("readers: view of a JSON list line", read(["view"], _replace_line(1, "[1, 2]"))),
        Case("readers: view of a corrupt middle line", read(["view"], _replace_line(1, '{"id": "x", "ta'))),
        Case("readers: view of results.jsonl as a directory", read(["view"], _results_dir)),
        Case(
            "readers: compare of results.jsonl as a directory",
            read(["compare"], _results_dir, with_good=True),
        ),
        Case("readers: merge of a shard whose results.jsonl is a directory", merge(_results_dir)),
        Case("readers: view of a conflicting duplicate", read(["view"], _conflicting_duplicate)),
        Case(
            "readers: compare of a conflicting duplicate",
            read(["compare"], _conflicting_duplicate, with_good=True),
        ),
        Case("readers: calibrate of a conflicting duplicate", read(["calibrate"], _conflicting_duplicate)),
        Case(
            "readers: agreement of a conflicting duplicate",
            read(["agreement"], _conflicting_duplicate, with_good=True),
        ),
        Case("readers: merge of a shard with a conflicting duplicate", merge(_conflicting_duplicate)),
        Case("readers: view of a foreign id", read(["view"], _foreign_id)),
        Case("readers: compare of a foreign id", read(["compare"], _foreign_id, with_good=True)),
        Case("readers: calibrate of a foreign id", read(["calibrate"], _foreign_id)),
        Case("readers: merge of a shard with a foreign id", merge(_foreign_id)),
        Case("readers: view of a run.json whose items are not ids", read(["view"], _bad_items)),
        Case("readers: merge of an interrupted shard", merge(_interrupted)),
        Case("readers: merge of a torn shard", merge(_torn)),
        Case(
            "readers: compare of a directory without run.json",
            read(["compare"], _no_run_json, with_good=True),
        ),
    ]
    return cases
