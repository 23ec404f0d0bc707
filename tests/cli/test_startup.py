"""`cejudge --help`, `cejudge tasks` and every command's `--help` import none of the heavy libraries: the
parser is built from light modules, and a command imports DSPy and the rest when it runs. Checked on the
modules a real `python -m cejudge_dspy.cli` imports (`-X importtime` lists each), never on a clock."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from cejudge_dspy.cli import _app
from tests import support

# What a command may import only when it runs (numpy and scipy come with the metrics; pydantic with DSPy).
HEAVY = ("dspy", "litellm", "ray", "llama_cpp", "datasets", "pyarrow", "numpy", "scipy", "pydantic")


def imported(*args: str) -> set[str]:
    """The top-level packages `python -m cejudge_dspy.cli ARGS` imports, read from -X importtime."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cejudge_dspy.cli", *args],
        cwd=support.REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("import time:")]
    assert lines, "no -X importtime output"
    return {ln.rsplit("|", 1)[-1].strip().split(".")[0] for ln in lines}


def commands() -> list[str]:
    sub = next(a for a in _app.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def test_the_check_sees_heavy_imports() -> None:
    # The same reading of a command that runs: judging one item imports DSPy.
    judge = ["judge", "--task", "chat", "--instruction", "q", "--response-a", "a", "--response-b", "b"]
    assert "dspy" in imported(*judge, "--lm", "simulated:0", "--json", "--translator", "none")


@pytest.mark.parametrize("args", [["--help"], ["tasks"], ["tasks", "list"]], ids=" ".join)
def test_the_top_level_help_and_the_task_list_import_no_heavy_library(args: list[str]) -> None:
    assert imported(*args) & set(HEAVY) == set()


@pytest.mark.parametrize("command", commands())
def test_every_commands_help_imports_no_heavy_library(command: str) -> None:
    assert imported(command, "--help") & set(HEAVY) == set()
