"""The rules the snippet tests apply (tests/docs/snippets.py), on small made-up blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs import snippets


def test_commands_join_continuations_drop_comments_and_split_chains() -> None:
    code = (
        "# a comment\ncejudge evaluate --task chat \\\n  --limit 2  # trailing\n\n"
        ". .venv/bin/activate && cejudge tasks\n"
    )
    assert snippets.commands(code) == [
        ["cejudge", "evaluate", "--task", "chat", "--limit", "2"],
        [".", ".venv/bin/activate"],
        ["cejudge", "tasks"],
    ]


@pytest.mark.parametrize("line", ["cejudge tasks | head", "cejudge tasks > out.txt", "cejudge tasks; ls"])
def test_pipes_and_redirections_are_refused(line: str) -> None:
    with pytest.raises(ValueError, match="one command per line"):
        snippets.commands(line)


def test_the_simulated_backbone_replaces_embedded_or_is_added() -> None:
    assert snippets.with_simulated_lm(["judge", "--lm", "embedded"], add=True) == [
        "judge",
        "--lm",
        "simulated:0",
    ]
    assert snippets.with_simulated_lm(["judge", "--lm=embedded"], add=True) == ["judge", "--lm=simulated:0"]
    assert snippets.with_simulated_lm(["judge"], add=True) == ["judge", "--lm", "simulated:0"]
    assert snippets.with_simulated_lm(["tasks"], add=False) == ["tasks"]
    assert snippets.with_simulated_lm(["judge", "--lm", "simulated:700"], add=True) == [
        "judge",
        "--lm",
        "simulated:700",
    ]


def test_setup_steps_and_their_extras() -> None:
    env, argv = snippets.split_env(["CMAKE_ARGS=-DX=1", "pip", "install", "-e", ".[embedded,dev]"])
    assert env == {"CMAKE_ARGS": "-DX=1"} and snippets.is_setup_step(argv)
    assert snippets.named_extras(argv) == ["embedded", "dev"]
    assert snippets.is_setup_step([".", ".venv/bin/activate"]) and snippets.is_setup_step(
        ["python3", "-m", "venv", ".venv"]
    )
    assert not snippets.is_setup_step(["cejudge", "judge"])


def test_markers_are_read_from_the_line_before_a_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n<!-- skip-snippet: needs a vLLM server -->\n```bash\nvllm serve x\n```\n\n"
        "```bash\ncejudge tasks\n```\n<!-- output-of-previous -->\n```text\nout\n```\n"
        "- a list\n\n    ```python\n    print(1)\n    ```\n",
        encoding="utf-8",
    )
    skipped, run, output, indented = snippets.blocks(page)
    assert skipped.skip_reason == "needs a vLLM server" and not skipped.runs
    assert run.runs and run.code == "cejudge tasks\n" and run.marker == ""
    assert output.is_output_of_previous and output.lang == "text" and not output.runs
    assert indented.lang == "python" and indented.code == "print(1)\n"
