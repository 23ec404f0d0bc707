"""A shown output that claims to be a real run's (`<!-- output-of-previous -->` before a ```text block) is
checked against a real run of the command before it, on the embedded model: its stable parts, the verdict
and each response's grade label, never timings, token counts or expected grades.

Slow (a minute or more on 2 CPU cores, one judgment per shown output). In CI (CI=true) a missing embedded
backbone is a failure, not a skip (the `embedded_model` fixture of tests/conftest.py, shared with
tests/test_end_to_end_slow.py).
"""

from __future__ import annotations

import json
import re

import pytest

from cejudge_dspy.cli import main
from tests.docs import snippets
from tests.docs.test_snippets import _rel, _shown_command

# The embedded model (tests/conftest.py `embedded_model`): skipped without it, a failure in CI.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("embedded_model")]

VERDICT = re.compile(r'Verdict: (?:[AB] \("[^"]*"\) is better|tie\b)')
GRADE = re.compile(r'[AB] \("[^"]*"\) graded alone: (?:yes|partly|no)\b')
SCORE = re.compile(r"Score: \d+ / \d+")
BOX = re.compile(r"[│╭╮╰╯─┃┏┓┗┛━]")


def _flat(text: str) -> str:
    """The panel's words on one line: box drawing removed, wrapping undone."""
    return " ".join(BOX.sub(" ", text).split())


def _stable(text: str) -> list[str]:
    flat = _flat(text)
    return VERDICT.findall(flat) + GRADE.findall(flat) + SCORE.findall(flat)


def _shown_outputs() -> list[tuple[snippets.Block, snippets.Block]]:
    found = []
    for page in snippets.pages():
        blocks = snippets.blocks(page)
        found += [(blocks[i - 1], b) for i, b in enumerate(blocks) if b.is_output_of_previous and i > 0]
    return found


SHOWN = _shown_outputs()


def test_the_readme_and_getting_started_show_a_real_output() -> None:
    pages = {_rel(out.path) for _, out in SHOWN}
    assert {"README.md", "docs/getting-started.md"} <= pages


# One real run per distinct command: the README and getting-started show the same first command.
_RUNS: dict[tuple[str, ...], str] = {}


@pytest.mark.parametrize("command,shown", SHOWN, ids=[_rel(o.path) for _, o in SHOWN])
def test_a_shown_output_matches_a_real_run(
    command: snippets.Block,
    shown: snippets.Block,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = _shown_command(command)
    assert argv, f"{command.where}: no cejudge command"
    expected = _stable(shown.code)
    assert any(VERDICT.match(e) or SCORE.match(e) for e in expected), (
        f"{shown.where}: the shown output has no verdict or score to check"
    )
    key = tuple(argv)
    if key not in _RUNS:
        monkeypatch.setenv("COLUMNS", "80")
        capsys.readouterr()
        assert main(argv[1:]) == 0, f"{command.where}: the command failed"
        _RUNS[key] = capsys.readouterr().out
    actual = _stable(_RUNS[key])
    assert actual == expected, (
        f"{shown.where}: the shown output says {expected}, a real run of {command.where} says {actual}:\n"
        f"{_RUNS[key]}"
    )


def test_the_readme_pair_is_decided_from_the_servers_probabilities(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's command (`--lm embedded`: llama.cpp's server, reached as a user's is) with `--json`:
    right, its grades read from the server's token probabilities, and a pair the grades leave open sent to the
    likelihood tie-breaker through the server's scoring.

    Run after the shown-output test above, in the same process and DSPy cache: its judgment calls are served
    from the cache (the same requests; only the output format differs), so the pair is judged once in CI."""
    command = next(c for c, o in SHOWN if _rel(o.path) == "README.md")
    argv = _shown_command(command)
    capsys.readouterr()
    assert main([*argv[1:], "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    grades = {k: g["p_value"] for k, g in result.get("grades", {}).items()}
    liked = result["details"].get("likelihood")
    print("README pair:", result["verdict"], grades, result.get("decided_by"), liked)  # pytest -s: from what
    assert result["status"] == "ok" and result["verdict"] == "A", result
    assert result["probabilities"]["status"] == "ok", result["probabilities"]
    assert all(g["p_value"] is not None for g in result["grades"].values())  # read from the logprobs
    assert "returns no token probabilities" not in captured.err
    assert "cannot score a given text" not in captured.err
    if liked is not None:  # the grades did not separate the pair: the server's scoring decided it
        assert liked["reason"] is None and liked["p_a"] > 0.5, liked
        assert "likelihood" in result["decided_by"].values(), result["decided_by"]
