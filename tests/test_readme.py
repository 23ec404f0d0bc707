"""The README's examples run: the Python quickstart (on a fake backbone) and the offline CLI lines."""

from __future__ import annotations

import re
import shlex

import pytest

from cejudge_dspy.backbones import _spec as backbones
from cejudge_dspy.cli import main
from tests import support
from tests.support.fakes import fake_lm

README = (support.REPO / "README.md").read_text(encoding="utf-8")


def test_python_quickstart_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lm, engine = fake_lm()
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)
    code = re.search(r"## Python quickstart\n\n```python\n(.*?)```", README, re.S)
    assert code is not None
    exec(compile(code.group(1), "README quickstart", "exec"), {})
    out = capsys.readouterr().out
    assert "tie False" in out and "5 ok" in out  # the fake says "A" in both orders; scores 5
    # The fake grades both responses "yes", so the pairwise judgment breaks the tie: 9 + 2 calls.
    assert (
        "verdict (B shown first) · 11/11 calls · 0:0" in out
        or "verdict (A shown first) · 11/11 calls · 0:0" in out
    )
    assert engine.calls


@pytest.mark.parametrize("line", [line for line in README.splitlines() if line.startswith("cejudge tasks")])
def test_offline_cli_examples_run(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(support.REPO)
    argv = shlex.split(line.split("#")[0])[1:]
    assert main(argv) == 0
