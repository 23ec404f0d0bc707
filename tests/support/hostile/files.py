"""Hostile file cases (issue #49): every JSON or TOML file the tool reads goes through one reader (regular
files only, bounded, nesting and huge numbers caught), and every file it writes through one writer (no
symlink followed, one line when the disk refuses). Each case must be one `error:` line naming the file and
write no run: a declaration nested 5,000 deep, a chain of 1,200 `extends`, a named pipe as `--config`,
`/dev/zero` behind a `--program` symlink, a results line nested 100,000 deep, `view -o` a folder.

Before #49 these traced back (RecursionError, ValueError), hung on the pipe, or read /dev/zero until memory
ran out. That a broken declaration hides no other task: tests/tasks/test_hostile_declarations.py.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.support import REPO
from tests.support.bad_inputs import SIM, Case, evaluate, good_data
from tests.support.hostile.readers import _copy

DEEP_JSON = "[" * 5000 + "]" * 5000
HUGE_JSON = "9" * 5000  # past Python's 4,300-digit limit for int(str)

# Broken declarations (each alone beside the shipped ones); the file is `broken.toml`.
POINTWISE = 'mode = "pointwise"\nmetric = "kendall"\ntask = "t"\n'
DECLARATIONS = {
    "nested 5,000 deep": 'name = "broken"\n' + POINTWISE + "a = " + "[" * 5000 + "]" * 5000 + "\n",
    "a number of 5,000 digits": 'name = "broken"\n' + POINTWISE + "version = " + "9" * 5000 + "\n",
    "human_key = 5": (
        'name = "broken"\nmode = "pointwise"\nmetric = "spearman"\ntask = "t"\n'
        '[[dimensions]]\nname = "coherence"\ndefinition = "d"\nhuman_key = 5\n'
        '[[dimensions.subdimensions]]\nname = "s"\nseeds = ["Is it?"]\n'
    ),
    'delimiter = ";;"': 'name = "broken"\n'
    + POINTWISE
    + '[scale]\n1 = "a"\n2 = "b"\n[dataset]\ndelimiter = ";;"\n',
    "scale_range = [0, 400000000]": (
        'name = "broken"\n' + POINTWISE + 'scale_range = [0, 400000000]\n[scale]\n0 = "a"\n400000000 = "b"\n'
    ),
    "[scale] of 0 and 400000000": 'name = "broken"\n' + POINTWISE + '[scale]\n0 = "a"\n400000000 = "b"\n',
}


def programs_env(d: Path) -> dict[str, str]:
    return {"CEJUDGE_PROGRAMS": str(d / "programs")}


def _programs(d: Path) -> Path:
    folder = d / "programs"
    if not folder.exists():
        shutil.copytree(REPO / "programs", folder)
    return folder


def _pointwise_items(d: Path) -> str:
    """Items a pointwise declaration's default mapping reads, so `tasks show` gets past the data: what
    refuses the case must be the declaration itself (without --data, a task with no hub dataset is
    refused for that, before and after the fix alike)."""
    path = d / "items.jsonl"
    path.write_text('{"instruction": "i", "response": "r", "label": 1}\n', encoding="utf-8")
    return str(path)


def _declaration(name: str, text: str, task: str = "broken") -> Case:
    def build(d: Path) -> list[str]:
        (_programs(d) / "broken.toml").write_text(text, encoding="utf-8")
        return ["tasks", "show", task, "--data", _pointwise_items(d)]

    return Case(f"files: declaration {name}", build, programs_env)


def _extends_chain(d: Path) -> list[str]:
    """1,200 declarations, each extending the next: resolving them used to recurse past Python's limit."""
    folder = _programs(d)
    for i in range(1200):
        extends = f'extends = "chain{i + 1}"\n' if i < 1199 else ""
        (folder / f"chain{i}.toml").write_text(
            f'name = "chain{i}"\n{extends}' + POINTWISE + '[scale]\n1 = "a"\n'
        )
    return ["tasks", "show", "chain0"]


def _fifo(path: Path) -> Path:
    # Opening a named pipe for reading blocks until a writer comes: the case hangs if anything opens it.
    os.mkfifo(path)
    return path


def _flag_file(flag: str, make: Callable[[Path], Path], name: str) -> Case:
    """`evaluate FLAG FILE` where FILE is made by `make` (a pipe, /dev/zero behind a symlink, ...)."""

    def argv(d: Path) -> list[str]:
        return [*evaluate()(d), flag, str(make(d))]

    return Case(f"files: {flag} {name}", argv)


def _text_file(name: str, text: str) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        path = d / name
        path.write_text(text, encoding="utf-8")
        return path

    return make


def _symlink_to_zero(name: str) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        path = d / name
        path.symlink_to("/dev/zero")
        return path

    return make


def _program(
    state: str | None = None, manifest: str | None = None, zero: bool = False, pipe: bool = False
) -> Callable[[Path], Path]:
    """A saved chat program (from the hand-written one) with its state or manifest text replaced, or its
    state a symlink to /dev/zero."""

    def make(d: Path) -> Path:
        from cejudge_dspy.judges import save_program
        from cejudge_dspy.judges.cejudge import PairwiseJudge

        path = d / "p.json"
        save_program(PairwiseJudge("chat"), path, {"task": "chat", "task_version": 1})
        if zero or pipe:
            path.unlink()
            _fifo(path) if pipe else path.symlink_to("/dev/zero")
        if state is not None:
            path.write_text(state, encoding="utf-8")
        if manifest is not None:
            (d / "p.manifest.json").write_text(manifest, encoding="utf-8")
        return path

    return make


def _damaged_run(command: list[str], damage: Callable[[Path], None], *, with_good: bool = False) -> Case:
    def argv(d: Path) -> list[str]:
        damaged = _copy(d, "whole", "damaged")
        damage(damaged)
        good = [str(_copy(d, "whole"))] if with_good else []
        return [*command, *good, str(damaged)]

    return Case(f"files: {' '.join(command)} of a run with {getattr(damage, '__doc__', '')}", argv)


def _run_json(text: str, what: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / "run.json").write_text(text, encoding="utf-8")

    damage.__doc__ = f"run.json {what}"
    return damage


def _results_line(text: str, what: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
        lines[1] = text
        (run / "results.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    damage.__doc__ = f"a results line {what}"
    return damage


def _summary(text: str, what: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / "summary.json").write_text(text, encoding="utf-8")

    damage.__doc__ = f"summary.json {what}"
    return damage


def _pipe_at(name: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / name).unlink()
        _fifo(run / name)

    damage.__doc__ = f"{name} a named pipe"
    return damage


def _judge_file(text: str, what: str) -> Case:
    def argv(d: Path) -> list[str]:
        (d / "items.json").write_text(text, encoding="utf-8")
        return ["judge", "--task", "chat", "--file", str(d / "items.json"), *SIM[:2]]

    return Case(f"files: judge --file {what}", argv)


def _view_out(flag: str) -> Case:
    """`view RUN FLAG DIR` where DIR is an existing folder: writing the page or the CSV there fails."""

    def argv(d: Path) -> list[str]:
        (d / "folder").mkdir()
        return ["view", str(_copy(d, "whole", "viewed")), flag, str(d / "folder")]

    return Case(f"files: view {flag} an existing folder", argv)


def _optimize_out(make: Callable[[Path], str], name: str) -> Case:
    def argv(d: Path) -> list[str]:
        data = good_data(d, 12)
        sizes = ["--train", "6", "--dev", "4", "--budget", "12", "--yes"]
        return [
            "optimize",
            "--task",
            "chat",
            "--lm",
            "simulated:0",
            "--data",
            str(data),
            *sizes,
            "--out",
            make(d),
        ]

    return Case(f"files: optimize --out {name}", argv)


def _planted(name_of: Callable[[Path], Path]) -> Callable[[Path], str]:
    def make(d: Path) -> str:
        (d / "target.txt").write_text("keep\n", encoding="utf-8")
        out = d / "tuned" / "chat.json"
        out.parent.mkdir(exist_ok=True)
        name_of(out).symlink_to(d / "target.txt")
        return str(out)

    return make


def _consistency_over_evaluate(d: Path) -> list[str]:
    run = _copy(d, "whole", "taken")
    flags = ["--translator", "llm", "--languages", "ko", "--limit", "2"]
    return ["consistency", "--task", "chat", *SIM, *flags, "--data", str(good_data(d)), "--out", str(run)]


def _evaluate_over_consistency(d: Path) -> list[str]:
    (d / "taken").mkdir()
    (d / "taken" / "consistency.json").write_text(json.dumps({"consistency": 1}), encoding="utf-8")
    argv = evaluate()(d)
    argv[argv.index("--out") + 1] = str(d / "taken")
    return argv


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    cases = [_declaration(name, text) for name, text in DECLARATIONS.items()]
    cases += [
        Case("files: declaration extends a chain of 1,200", _extends_chain, programs_env),
        _declaration(
            "named ../../../escaped",
            'name = "../../../escaped"\n' + POINTWISE + '[scale]\n1 = "a"\n',
            "../../../escaped",
        ),
        _declaration(
            "named with a terminal escape",
            'name = "evil\\u001b]0;pwned\\u0007"\n' + POINTWISE + '[scale]\n1 = "a"\n',
            "evil\x1b]0;pwned\x07",
        ),
        Case(
            "files: declaration a named pipe",
            lambda d: _fifo(_programs(d) / "broken.toml") and ["tasks", "show", "broken"],
            programs_env,
        ),
    ]
    cases += [
        _flag_file("--config", lambda d: _fifo(d / "judge.toml"), "a named pipe"),
        _flag_file("--config", _symlink_to_zero("judge.toml"), "a symlink to /dev/zero"),
        _flag_file(
            "--config", _text_file("judge.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n"), "nested 5,000 deep"
        ),
        _flag_file(
            "--config", _text_file("judge.toml", "tie_band = " + "9" * 5000 + "\n"), "a 5,000-digit number"
        ),
        _flag_file("--panel", lambda d: _fifo(d / "panel.toml"), "a named pipe"),
        _flag_file(
            "--panel", _text_file("panel.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n"), "nested 5,000 deep"
        ),
        _flag_file("--panel", _text_file("panel.toml", "a = " + "9" * 5000 + "\n"), "a 5,000-digit number"),
        _flag_file("--program", _program(pipe=True), "a named pipe"),
        _flag_file("--program", _program(zero=True), "a symlink to /dev/zero"),
        _flag_file("--program", _program(state=DEEP_JSON), "nested 5,000 deep"),
        _flag_file("--program", _program(state=HUGE_JSON), "a 5,000-digit number"),
        _flag_file("--program", _program(manifest=DEEP_JSON), "whose manifest is nested 5,000 deep"),
        _flag_file("--program", _program(manifest=HUGE_JSON), "whose manifest is a 5,000-digit number"),
    ]
    cases += [
        _damaged_run(["view"], _run_json(DEEP_JSON, "nested 5,000 deep")),
        _damaged_run(["view"], _run_json(HUGE_JSON, "a 5,000-digit number")),
        _damaged_run(["view"], _results_line('{"id": ' + DEEP_JSON + "}", "nested 5,000 deep")),
        _damaged_run(["view"], _results_line('{"id": ' + HUGE_JSON + "}", "holding a 5,000-digit number")),
        _damaged_run(["view"], _pipe_at("results.jsonl")),
        _damaged_run(["view"], _pipe_at("run.json")),
        _damaged_run(["compare", "--ablations"], _summary(DEEP_JSON, "nested 5,000 deep"), with_good=True),
        _damaged_run(["compare", "--ablations"], _summary(HUGE_JSON, "a 5,000-digit number"), with_good=True),
        _judge_file(DEEP_JSON, "nested 5,000 deep"),
        _judge_file('{"instruction": ' + HUGE_JSON + "}", "holding a 5,000-digit number"),
        _view_out("-o"),
        _view_out("--csv"),
        _optimize_out(lambda d: str(d / "tuned.txt"), "NAME.txt"),
        _optimize_out(_planted(lambda out: out), "a planted symlink"),
        _optimize_out(
            _planted(lambda out: out.with_name("chat.manifest.json")), "whose manifest is a planted symlink"
        ),
        Case("files: consistency --out an evaluate run", _consistency_over_evaluate),
        Case("files: evaluate --out a consistency run", _evaluate_over_consistency),
        Case("files: evaluate --out ''", lambda d: [*evaluate()(d), "--out", ""]),
        Case(
            "files: compare a run with itself",
            lambda d: ["compare", str(_copy(d, "whole", "a")), str(d / "a")],
        ),
        Case(
            "files: agreement of pairwise runs",
            lambda d: ["agreement", str(_copy(d, "whole", "a")), str(_copy(d, "whole", "b"))],
        ),
    ]
    return cases
