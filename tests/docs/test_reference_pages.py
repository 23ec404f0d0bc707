"""The hand-written reference pages name every key of what they describe: a run directory's files, as a
real run on the simulated backbone writes them, and a task declaration's keys, as the parser reads them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.tasks import ITEM_FIELDS, Dimension, SubDimension, TaskSpec
from tests import support

DOCS = support.REPO / "docs" / "reference"


def _named(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def _missing(keys: object, text: str) -> list[str]:
    return sorted(k for k in keys if f"`{k}`" not in text)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "chat"
    data = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--limit", "2", "--lm", "simulated:0"]
    assert main([*argv, "--out", str(out)]) == 0
    return out


def test_the_run_directory_page_names_every_key_a_run_writes(run: Path) -> None:
    text = _named("run-directory.md")
    identity = json.loads((run / "run.json").read_text(encoding="utf-8"))
    record = json.loads((run / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    result = record["result"]
    assert not _missing(identity, text), "run.json keys the page does not name"
    assert not _missing(record, text), "record keys the page does not name"
    assert not _missing(record["item"], text), "item keys the page does not name"
    assert not _missing(result, text), "result keys the page does not name"
    assert not _missing(result["usage"], text), "usage keys the page does not name"
    assert not _missing(result["orders"][0], text), "order keys the page does not name"
    assert not _missing(result["probabilities"], text), "probabilities keys the page does not name"
    assert not _missing(summary, text), "summary.json keys the page does not name"
    for name in ("results.jsonl", "run.json", "summary.json", ".lock"):
        assert (run / name).exists() and f"`{name}`" in text


def test_the_run_directory_page_names_every_key_a_consistency_run_writes(tmp_path: Path) -> None:
    text = _named("run-directory.md")
    out = tmp_path / "consistency"
    data = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
    argv = ["consistency", "--task", "chat", "--data", str(data), "--limit", "2", "--languages", "ko"]
    assert main([*argv, "--lm", "simulated:0", "--bootstrap", "0", "--out", str(out)]) == 0
    identity = json.loads((out / "consistency.json").read_text(encoding="utf-8"))
    rendering = json.loads((out / "renderings.jsonl").read_text(encoding="utf-8").splitlines()[0])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    child = json.loads((out / "ko-direct" / "run.json").read_text(encoding="utf-8"))
    assert not _missing(identity, text), "consistency.json keys the page does not name"
    assert not _missing(rendering, text), "renderings.jsonl keys the page does not name"
    assert not _missing(summary, text), "consistency summary.json keys the page does not name"
    assert not _missing(summary["by_language"]["ko"]["direct"], text), (
        "per-language keys the page does not name"
    )
    assert not _missing(summary["any_language"]["direct"], text)
    assert not _missing(child, text), "a child run's run.json keys the page does not name"
    for name in ("consistency.json", "renderings.jsonl", "view.html"):
        assert f"`{name}`" in text


def test_the_task_format_page_names_every_declaration_key() -> None:
    text = _named("task-format.md")
    from cejudge_dspy.tasks import _parsing

    top = {f.name for f in dataclasses.fields(TaskSpec)} - {"dataset", "scale", "dimensions", "path"}
    top -= {"described_levels"}  # derived from [scale], not a key
    top |= {"scale_range"}
    assert not _missing(top, text), "declaration keys the page does not name"
    assert not _missing(_parsing._DATASET_KEYS, text), "[dataset] keys the page does not name"
    assert not _missing(ITEM_FIELDS, text), "item fields the page does not name"
    sub = {f.name for f in dataclasses.fields(SubDimension)} | {f.name for f in dataclasses.fields(Dimension)}
    assert not _missing(sub - {"subdimensions"}, text), "dimension keys the page does not name"
    for path in sorted((support.REPO / "programs").glob("*.toml")):
        assert f"`{path.stem}`" in text, f"the shipped declaration {path.name} is not listed"


def test_the_python_api_page_lists_every_package_and_every_top_level_name() -> None:
    import cejudge_dspy

    text = _named("python-api.md")
    root = support.REPO / "cejudge_dspy"
    packages = sorted(p.parent.relative_to(root).as_posix() for p in root.glob("*/__init__.py"))
    for package in packages:
        assert f"`cejudge_dspy.{package}`" in text, f"cejudge_dspy.{package} is missing from the layout"
    for name in cejudge_dspy.__all__:
        assert f"`{name}`" in text, f"cejudge_dspy.{name} is missing from the table of top-level names"
