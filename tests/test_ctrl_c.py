"""Ctrl-C ends any run within CTRL_C_LIMIT_S and keeps every finished record (issue 49): a local `evaluate`,
a panel `evaluate` and `consistency`, each a child process judging against gated_server.py's fake
OpenAI-compatible server on 127.0.0.1 and interrupted while its requests are held at the closed gate (the
Ray driver's case is in tests/evaluate/test_ray.py). A rerun with the gate open resumes: the records written
before the signal are kept, none is written twice, and the run completes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from tests import support
from tests.support.gated_server import MODEL, GatedServer
from tests.support.interrupt import CTRL_C_LIMIT_S, interrupt_when

DATA = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
ITEMS = 6


def _ids(out: Path) -> Counter[str]:
    """Every results.jsonl under `out` (a consistency run has one per rendering and judge), by id."""
    found: Counter[str] = Counter()
    for path in out.rglob("results.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found[f"{path.parent.name}/{json.loads(line)['id']}"] += 1
    return found


def _argv(kind: str, gated: GatedServer, tmp: Path) -> list[str]:
    backbone = ["--lm", MODEL, "--api-base", gated.api_base, "--no-cache"]
    data = ["--data", str(DATA), "--limit", str(ITEMS), "--bootstrap", "0", "--out", str(tmp / "run")]
    if kind == "consistency":
        return ["consistency", "--task", "chat", *backbone, *data, "--languages", "ko", "--translator", "llm"]
    argv = ["evaluate", "--task", "chat", *data, "--concurrency", "2"]
    if kind == "panel":
        panel = tmp / "panel.toml"
        panel.write_text(
            "".join(
                f'[[member]]\nname = "{m}"\nlm = "{MODEL}"\napi_base = "{gated.api_base}"\nmethod = "{m}"\n\n'
                for m in ("cejudge", "direct")
            )
        )
        return [*argv, "--panel", str(panel), "--no-cache"]
    return [*argv, *backbone]


@pytest.mark.parametrize("kind", ["local", "panel", "consistency"])
def test_ctrl_c_ends_the_run_promptly_and_a_rerun_resumes_it(kind: str, tmp_path: Path) -> None:
    with GatedServer() as gated:
        # Some answers go through, then none: the run is mid-way, its requests held, when it is interrupted.
        gated.hold_when = lambda: gated.answered >= 12
        argv = _argv(kind, gated, tmp_path)
        err, took, code = interrupt_when(argv, lambda: gated.held > 0, tmp_path / "stderr.txt")
        assert code == 130, err[-2000:]
        assert "rerun to resume" in err
        assert took < CTRL_C_LIMIT_S, f"{kind}: {took:.1f} s from SIGINT to exit: {err[-2000:]}"
        kept = _ids(tmp_path / "run")
        gated.hold_when = None
        gated.open()
        assert main(argv) == 0
    after = _ids(tmp_path / "run")
    assert all(n == 1 for n in after.values()), after.most_common(3)  # nothing written twice
    assert set(kept) <= set(after)  # what was finished before Ctrl-C is still there
    assert sum(after.values()) > sum(kept.values())
