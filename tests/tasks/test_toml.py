"""The one reader of TOML files (`files.read_toml`): a file that cannot be read, is not UTF-8 or is not
TOML is one line naming the file, raised as each caller's error: a task declaration's TaskError, a panel
file's `--panel` and a config file's `--config` InputError."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

from cejudge_dspy.cli._program_args import config_options
from cejudge_dspy.errors import CEJudgeError, InputError, TaskError
from cejudge_dspy.files import read_toml
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.judges.panel import read_panel_file
from cejudge_dspy.tasks import _catalog, broken_declarations, load_task

# What is wrong with a file -> how to make it in a folder, and the start of the message after its path.
BAD: dict[str, tuple[Callable[[Path], None], str]] = {
    "folder": (lambda p: p.mkdir(), "not a regular file (a directory)"),
    "pipe": (os.mkfifo, "not a regular file (a named pipe)"),
    "nested 5,000 deep": (
        lambda p: p.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8"),
        "cannot be read as TOML (nested",
    ),
    "a number of 5,000 digits": (
        lambda p: p.write_text("a = " + "9" * 5000 + "\n", encoding="utf-8"),
        "cannot be read as TOML (",
    ),
    "latin-1": (lambda p: p.write_bytes(b'name = "caf\xe9"\n'), "not UTF-8 text (byte 11); save it as UTF-8"),
    "not toml": (lambda p: p.write_text("name = [\n", encoding="utf-8"), "not a TOML file ("),
}


def _bad(tmp_path: Path, what: str, name: str = "bad.toml") -> tuple[Path, str]:
    make, says = BAD[what]
    path = tmp_path / name
    make(path)
    return path, says


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_a_good_file_is_its_table(tmp_path: Path) -> None:
    path = tmp_path / "good.toml"
    path.write_text('name = "café"\n[scale]\n1 = "bad"\n', encoding="utf-8")
    assert read_toml(path, TaskError) == {"name": "café", "scale": {"1": "bad"}}


@pytest.mark.parametrize("what", [*BAD, "missing"])
def test_each_failure_is_one_line_naming_the_file_as_the_callers_error(tmp_path: Path, what: str) -> None:
    if what == "missing":
        path, says = tmp_path / "nowhere.toml", "cannot read (No such file or directory)"
    else:
        path, says = _bad(tmp_path, what)
    with pytest.raises(TaskError) as task_error:
        read_toml(path, TaskError)
    assert _one_line(task_error.value).startswith(f"{path}: {says}")
    with pytest.raises(InputError) as input_error:
        read_toml(path, partial(InputError, field="--panel"))
    assert _one_line(input_error.value).startswith(f"--panel: {path}: {says}")


@pytest.fixture
def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "programs"
    folder.mkdir()
    (folder / "fine.toml").write_text(
        'name = "fine"\nmode = "pointwise"\nmetric = "kendall"\ntask = "Judge."\n'
        '[scale]\n1 = "bad"\n2 = "good"\n'
    )
    monkeypatch.setenv("CEJUDGE_PROGRAMS", str(folder))
    _catalog._registry.cache_clear()
    yield folder
    _catalog._registry.cache_clear()


@pytest.mark.parametrize("what", BAD)
def test_a_bad_declaration_is_its_own_task_error_and_hides_no_other(programs: Path, what: str) -> None:
    path, says = _bad(programs, what, "broken.toml")
    errors = broken_declarations()
    assert list(errors) == [path] and _one_line(errors[path]).startswith(f"{path}: {says}")
    with pytest.raises(TaskError, match="broken.toml: "):
        load_task("broken")
    assert load_task("fine").name == "fine"


def test_a_config_file_with_a_bom_is_read_as_data_files_are(tmp_path: Path) -> None:
    path = tmp_path / "judge.toml"
    path.write_bytes(b"\xef\xbb\xbftie_band = 0.2\n")  # as Windows Notepad saves UTF-8
    assert config_options(path) == ({"tie_band": 0.2}, {})


@pytest.mark.parametrize("what", BAD)
@pytest.mark.parametrize(
    ("flag", "read"),
    [
        ("--panel", lambda path: read_panel_file(path, JudgeOptions())),
        ("--config", config_options),
    ],
    ids=["panel", "config"],
)
def test_a_bad_panel_or_config_file_is_one_line_naming_the_flag_and_the_file(
    tmp_path: Path, what: str, flag: str, read: Callable[[Path], object]
) -> None:
    path, says = _bad(tmp_path, what)
    with pytest.raises(CEJudgeError) as error:
        read(path)
    assert isinstance(error.value, InputError)
    assert _one_line(error.value).startswith(f"{flag}: {path}: {says}")
