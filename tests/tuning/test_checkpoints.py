"""GEPA's checkpoints (issue #41): nothing a user's files reach is unpickled, and a genuine one still resumes.

gepa resumes with `pickle.load`; a planted `__reduce__` payload ran code. The payload here writes a file
when unpickled (checked below, so a test that sees no file can fail), and every road to a checkpoint must
leave that file unwritten: the --out folder (with and without cejudge_run.json), the private folder
without this user's signature, and the best-so-far read on Ctrl-C. Runs use `simulated:0` through the
same entry point as `python optimize.py`.
"""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy import tuning
from cejudge_dspy.cli import main
from cejudge_dspy.errors import InputError
from tests.support.bad_inputs import run_case
from tests.support.hostile import security


def optimize(d: Path, *extra: str) -> int:
    return main([*security.optimize_argv(d), *extra])


def test_the_payload_runs_code_when_unpickled(tmp_path: Path) -> None:
    pickle.loads(security.payload(tmp_path / "pwned"))  # noqa: S301 - the control: this is what gepa did
    assert (tmp_path / "pwned").read_text() == "pwned"


@pytest.mark.parametrize("marker_file", [True, False], ids=["with-marker", "marker-deleted"])
def test_a_pickle_planted_in_the_out_folder_is_refused_and_never_runs(
    tmp_path: Path, marker_file: bool
) -> None:
    kind, detail = run_case(security.planted_in_out_folder(marker_file), tmp_path)
    assert kind == "one line" and "refusing to load" in detail and "gepa_state.bin" in detail
    assert not (tmp_path / "pwned").exists()


def test_an_unsigned_state_in_the_private_folder_is_refused_and_never_runs(tmp_path: Path) -> None:
    case = security.planted_in_private_dir(lambda d: security.payload(d / "pwned"), sign=False, name="x")
    kind, detail = run_case(case, tmp_path)
    assert kind == "one line" and "not signed" in detail
    assert not (tmp_path / "pwned").exists()


def test_a_signed_state_cut_off_is_one_line_not_an_unpickling_error(tmp_path: Path) -> None:
    case = security.planted_in_private_dir(security._state, sign=True, cut=True, name="x")
    kind, detail = run_case(case, tmp_path)
    assert kind == "one line" and "cut off" in detail and "UnpicklingError" not in detail


def test_a_genuine_checkpoint_resumes_and_gepa_continues_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gepa.core.state import GEPAState

    assert optimize(tmp_path) == 0
    log_dir = tmp_path / "tuned" / "chat.gepa"
    checkpoint = tuning.Checkpoint(log_dir)
    checkpoint.open()
    first = checkpoint.load()
    assert not (log_dir / "gepa_state.bin").exists() and first["total_num_evals"] >= 12
    # The private folder is this user's only, and the key is readable by nobody else.
    assert stat.S_IMODE(os.stat(checkpoint.dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(checkpoint.root / ".key").st_mode) == 0o600
    loaded: list[int] = []  # the iteration of each state gepa loads, as it loads it
    real_load = GEPAState.load

    def spy(run_dir: str) -> Any:
        state = real_load(run_dir)
        loaded.append(state.i)
        return state

    monkeypatch.setattr(GEPAState, "load", staticmethod(spy))
    capsys.readouterr()
    assert optimize(tmp_path, "--budget", "30") == 0  # the same split with more budget: gepa goes on
    assert "this run continues it" in " ".join(capsys.readouterr().out.split())  # rich wraps lines
    assert loaded == [first["i"]]  # gepa resumed from the first session's state
    assert checkpoint.load()["total_num_evals"] > first["total_num_evals"]


def test_deleting_the_out_folder_starts_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert optimize(tmp_path) == 0
    log_dir = tmp_path / "tuned" / "chat.gepa"
    (log_dir / "cejudge_run.json").unlink()
    log_dir.rmdir()
    capsys.readouterr()
    assert optimize(tmp_path) == 0
    assert "continues it" not in " ".join(capsys.readouterr().out.split())


def test_ctrl_c_never_unpickles_an_unsigned_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On Ctrl-C the best candidate so far is read from the checkpoint: a state swapped in mid-run (here
    right after gepa's second save) is not unpickled there either."""
    saves: list[int] = []
    real_saved = tuning.Checkpoint.on_state_saved

    def saved_then_swapped(self: tuning.Checkpoint, event: Any) -> None:
        real_saved(self, event)
        saves.append(1)
        if len(saves) == 2:
            self.state.write_bytes(security.payload(tmp_path / "pwned"))
            raise KeyboardInterrupt

    refused: list[str] = []
    real_load = tuning.Checkpoint.load

    def load(self: tuning.Checkpoint) -> dict[str, Any]:
        try:
            return real_load(self)
        except InputError as exc:
            refused.append(str(exc))
            raise

    monkeypatch.setattr(tuning.Checkpoint, "on_state_saved", saved_then_swapped)
    monkeypatch.setattr(tuning.Checkpoint, "load", load)
    assert optimize(tmp_path, "--budget", "40") == 0  # interrupted: the CLI saves (or not) and says which
    assert len(saves) == 2 and not (tmp_path / "pwned").exists()
    assert len(refused) == 1 and "not written by this user's cejudge" in refused[0]  # the best-so-far read


def test_checkpoint_load_refuses_without_the_key_of_this_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_dir = tmp_path / "run.gepa"
    ours = tuning.Checkpoint(log_dir)
    ours.open()
    ours.state.write_bytes(pickle.dumps({"program_candidates": []}))
    ours.sign()
    assert ours.load() == {"program_candidates": []}
    # Another user's cejudge (another key) signed it: refused.
    monkeypatch.setenv("CEJUDGE_CHECKPOINTS", str(tmp_path / "other"))
    theirs = tuning.Checkpoint(log_dir)
    theirs.open()
    theirs.dir.rmdir()
    os.symlink(ours.dir, theirs.dir)
    with pytest.raises(InputError, match="refusing to load"):
        theirs.load()


def test_a_checkpoint_folder_others_can_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "shared"
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    monkeypatch.setenv("CEJUDGE_CHECKPOINTS", str(root))
    with pytest.raises(InputError, match="writable by other users"):
        tuning.Checkpoint(tmp_path / "x.gepa").open()
