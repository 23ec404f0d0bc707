"""One bad declaration breaks no other command (issue #49): nested 5,000 deep, a 1,200-long `extends` chain,
`human_key = 5`, `delimiter = ";;"`, `scale_range = [0, 400000000]`, a name that would leave ./runs. Each is
listed by `cejudge tasks` as broken, with its one line, while every other task is listed and works. That
`tasks show` of the broken one is one line is in the hostile corpus (tests/support/hostile/files.py)."""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.tasks import _catalog, available_tasks, broken_declarations, load_task
from tests.support import REPO
from tests.support.bad_inputs import good_data
from tests.support.hostile.files import DECLARATIONS, POINTWISE

CASES = {
    **DECLARATIONS,
    "named ../../../escaped": 'name = "../../../escaped"\n' + POINTWISE + '[scale]\n1 = "a"\n',
    "named with a clear-screen": 'name = "x\\u001b[2J"\n' + POINTWISE + '[scale]\n1 = "a"\n',
}


@pytest.fixture
def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "programs"
    shutil.copytree(REPO / "programs", folder)
    monkeypatch.setenv("CEJUDGE_PROGRAMS", str(folder))
    _catalog._registry.cache_clear()
    yield folder
    _catalog._registry.cache_clear()


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", CASES)
def test_a_broken_declaration_is_listed_as_broken_and_the_others_work(programs: Path, name: str) -> None:
    (programs / "broken.toml").write_text(CASES[name], encoding="utf-8")
    shipped = {p.stem for p in REPO.joinpath("programs").glob("*.toml")}
    assert set(available_tasks()) == shipped  # every shipped task still loads
    assert list(broken_declarations()) == [programs / "broken.toml"]
    code, out, err = _run(["tasks"])
    # listed with the others, the broken one named on stderr (exit 1: a declaration needs fixing)
    assert code == 1 and "chat" in out and "broken.toml" in err and "Traceback" not in err
    assert "\x1b" not in out + err and "\x07" not in out + err  # a name's escapes are shown, never obeyed
    assert _run(["tasks", "show", "chat", "--data", str(good_data(programs, 2))])[0] == 0
    assert load_task("chat").name == "chat"


def test_an_extends_chain_of_1200_is_broken_where_too_long_and_hides_no_other(programs: Path) -> None:
    for i in range(1200):
        extends = f'extends = "chain{i + 1}"\n' if i < 1199 else ""
        (programs / f"chain{i}.toml").write_text(
            f'name = "chain{i}"\n{extends}' + POINTWISE + '[scale]\n1 = "a"\n'
        )
    broken = broken_declarations()
    assert programs / "chain0.toml" in broken and "extends chains more than 16" in str(
        broken[programs / "chain0.toml"]
    )
    assert "chat" in available_tasks() and "chain1199" in available_tasks()  # short chains still resolve
    assert _run(["tasks"])[0] == 1  # listed, with the broken ones named


def test_the_default_run_directory_of_every_task_stays_under_runs(programs: Path) -> None:
    (programs / "broken.toml").write_text(CASES["named ../../../escaped"], encoding="utf-8")
    for name in available_tasks():
        assert (Path("runs") / f"{name}-cejudge").resolve().parent == Path("runs").resolve()
