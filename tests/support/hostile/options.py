"""Hostile options cases (issue #41): numbers out of their bounds (NaN and the infinities included), run
directories that cannot be one, a Ray address nothing answers at, and a backbone with no key. Each must be one
`error:` line before anything is judged or written; `--seed -1` used to trace back after judging every item,
`--bootstrap 100000000` and `--bins 100000000` hung, `--temperature nan` recorded NaN in run.json.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.bad_inputs import Case, evaluate

_JUDGE = ["judge", "--task", "chat", "--instruction", "q", "--response-a", "a", "--response-b", "b"]
_SIM = ["--lm", "simulated:0"]


def _evaluate_options() -> list[list[str]]:
    numbers = [
        ["--temperature", "nan"],
        ["--temperature", "inf"],
        ["--temperature=-inf"],
        ["--temperature", "3"],
        ["--temperature", "2.0001"],
        ["--seed", "-1"],
        ["--seed", str(2**32)],
        ["--bootstrap", "100000000"],
        ["--bootstrap", "10001"],
        ["--tie-band", "nan"],
        ["--tie-band", "inf"],
        ["--tie-band", "-0.1"],
        ["--grade-margin", "nan"],
        ["--grade-margin", "1.5"],
        ["--repeat-penalty", "nan"],
        ["--repeat-penalty", "inf"],
        ["--max-tokens", "-5"],
        ["--concurrency", "-1"],
        ["--abstain-below", "nan"],
        ["--abstain-below", "-0.1"],
        ["--abstain-below", "1.5"],
    ]
    ray = [
        ["--ray", "127.0.0.1:1"],
        ["--ray", "ray://127.0.0.1:1"],
        ["--ray", "not an address"],
        ["--ray", "127.0.0.1"],
        ["--ray", "--ray-cpus-per-actor", "nan"],
        ["--ray", "--ray-cpus-per-actor", "0"],
        ["--ray", "--ray-actors", "0"],
    ]
    return numbers + ray


def _out(make: str) -> Case:
    """--out naming what cannot be a run directory; `make` builds it under the case's folder."""

    def argv(d: Path) -> list[str]:
        (d / "run").write_text("a file where the run directory would go")
        where = {"file": d / "run", "under a file": d / "run" / "x" / "y", "device": Path("/dev/null")}[make]
        return [*evaluate()(d), "--out", str(where)]

    return Case(f"option: --out {make}", argv)


def _config(text: str) -> Case:
    def argv(d: Path) -> list[str]:
        (d / "judge.toml").write_text(text)
        return [*evaluate()(d), "--config", str(d / "judge.toml")]

    return Case(f"option: --config {text.strip()}", argv)


def _calibrate(bins: str, flag: str = "--bins") -> Case:
    def argv(d: Path) -> list[str]:
        (d / "dev").mkdir()
        return ["calibrate", str(d / "dev"), flag, bins]

    return Case(f"option: calibrate {flag} {bins}", argv)


def _reader(command: str, bootstrap: str) -> Case:
    """A reader's --bootstrap out of bounds: refused before the run (an empty folder here) is read."""

    def argv(d: Path) -> list[str]:
        (d / "dev").mkdir()
        run = str(d / "dev")
        runs = {"view": [run], "compare": [run, run], "merge": [run, "--out", str(d / "merged")]}[command]
        return [command, *runs, "--bootstrap", bootstrap]

    return Case(f"option: {command} --bootstrap {bootstrap}", argv)


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    cases = [Case(f"option: {' '.join(o)}", evaluate(*o)) for o in _evaluate_options()]
    cases += [_out("file"), _out("under a file"), _out("device")]
    cases += [_config("tie_band = nan\n"), _config("tie_band = inf\n"), _config("grade_margin = 2.0\n")]
    cases += [
        _calibrate("100000000"),
        _calibrate("101"),
        _calibrate("-1"),
        _calibrate("inf", "--abstain-below"),
    ]
    cases += [_reader(c, n) for c in ("view", "compare", "merge") for n in ("100000000", "-1")]
    cases += [
        Case(
            "option: --lm openai/x, no key",
            evaluate("--lm", "openai/x"),
            lambda d: {"OPENAI_API_KEY": ""},  # empty is unset for the check; restored after the case
        ),
        Case("option: judge --temperature nan", lambda d: [*_JUDGE, *_SIM, "--temperature", "nan"]),
        Case("option: judge --seed -1", lambda d: [*_JUDGE, *_SIM, "--seed", "-1"]),
        Case("option: judge --tie-band nan", lambda d: [*_JUDGE, *_SIM, "--tie-band", "nan"]),
        Case("option: tasks show chat -n 0", lambda d: ["tasks", "show", "chat", "-n", "0"]),
        Case("option: optimize --seed -1", lambda d: ["optimize", "--task", "chat", *_SIM, "--seed", "-1"]),
        Case(
            "option: checklist build --temperature inf",
            lambda d: ["checklist", "build", "--task", "summeval", *_SIM, "--temperature", "inf"],
        ),
    ]
    return cases
