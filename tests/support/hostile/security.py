"""Hostile security cases (issue #41): planted pickles, symlinks in a run directory, bad `view` ports.

Each is a bad input, so each must be one `error:` line and write nothing. What the correct outcome is
beyond that (the payload never ran, a symlink's target is unchanged, the CSV cells, the Host check) is
asserted in tests/tuning/test_checkpoints.py, tests/runs/test_symlinks.py and tests/view/.
"""

from __future__ import annotations

import json
import pickle
import socket
from collections.abc import Callable
from pathlib import Path

from tests.support import SHARED_DATA
from tests.support.bad_inputs import SIM, Case, good_data

# Sockets held open while a case runs, so that its port is in use.
_HELD: list[socket.socket] = []


class _Payload:
    """Unpickling this runs code: it writes `marker`. A fixed checkpoint never unpickles it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[..., object], tuple[str]]:
        return exec, (f"open({str(self.marker)!r}, 'w').write('pwned')",)


def payload(marker: Path) -> bytes:
    """A `gepa_state.bin` whose unpickling writes `marker`."""
    return pickle.dumps({"program_candidates": _Payload(marker)})


def checkpoints_env(d: Path) -> dict[str, str]:
    return {"CEJUDGE_CHECKPOINTS": str(d / "checkpoints")}


def optimize_argv(d: Path) -> list[str]:
    data = SHARED_DATA / "pairwise_en_dev.jsonl"
    if not data.exists():  # the corpus runs without ../shared too: a small file of our own
        data = good_data(d, 12)
    sizes = ["--train", "6", "--dev", "4", "--budget", "12"]
    out = ["--out", str(d / "tuned" / "chat.json"), "--yes"]
    return ["optimize", "--task", "chat", "--lm", "simulated:0", "--data", str(data), *sizes, *out]


def planted_in_out_folder(marker_file: bool) -> Case:
    """A pickle in `<out>.gepa/`, as an older cejudge wrote it, or as someone planted it."""

    def argv(d: Path) -> list[str]:
        log_dir = d / "tuned" / "chat.gepa"
        log_dir.mkdir(parents=True)
        (log_dir / "gepa_state.bin").write_bytes(payload(d / "pwned"))
        if marker_file:
            (log_dir / "cejudge_run.json").write_text("{}", encoding="utf-8")
        return optimize_argv(d)

    label = "with" if marker_file else "without"
    return Case(
        f"security: pickle planted in the --out folder, {label} cejudge_run.json", argv, checkpoints_env
    )


def planted_in_private_dir(
    content: Callable[[Path], bytes], sign: bool, name: str, cut: bool = False
) -> Case:
    """A state in the private checkpoint folder that this user's cejudge did not sign (or did, then was cut
    off), or signed but cannot be read."""

    def argv(d: Path) -> list[str]:
        from cejudge_dspy.tuning import Checkpoint

        log_dir = d / "tuned" / "chat.gepa"
        log_dir.mkdir(parents=True)
        (log_dir / "cejudge_run.json").write_text("{}", encoding="utf-8")
        checkpoint = Checkpoint(log_dir)
        checkpoint.open()
        checkpoint.state.write_bytes(content(d))
        if sign:
            checkpoint.sign()
        if cut:
            checkpoint.state.write_bytes(checkpoint.state.read_bytes()[:-40])
        return optimize_argv(d)

    return Case(f"security: private checkpoint {name}", argv, checkpoints_env)


def _state(d: Path) -> bytes:
    return pickle.dumps({"program_candidates": [{"judge.predict": "x" * 200}], "i": 3})


def _truncated_state(d: Path) -> bytes:
    return _state(d)[:-40]


def symlink_in_run(name: str, loop: bool = False) -> Case:
    """`evaluate --out r` where r/NAME is a symlink (to a file it would overwrite, or a loop)."""

    def argv(d: Path) -> list[str]:
        run = d / "r"
        run.mkdir()
        if loop:
            (run / name).symlink_to(run / f"{name}.other")
            (run / f"{name}.other").symlink_to(run / name)
        else:
            (d / "target.txt").write_text("keep\n", encoding="utf-8")
            (run / name).symlink_to(d / "target.txt")
        return ["evaluate", "--task", "chat", "--data", str(good_data(d, 2)), "--out", str(run), *SIM]

    return Case(f"security: {name} in the run directory is a {'symlink loop' if loop else 'symlink'}", argv)


def view_run(d: Path) -> Path:
    from tests.support.view_runs import chat_run

    return chat_run(d, "viewed")


def view_symlink(what: str) -> Case:
    def argv(d: Path) -> list[str]:
        run = view_run(d)
        (d / "target.txt").write_text("keep\n", encoding="utf-8")
        if what == "view.html":
            (run / "view.html").symlink_to(d / "target.txt")
            return ["view", str(run), "--bootstrap", "0"]
        (d / "items.csv").symlink_to(d / "target.txt")
        return ["view", str(run), "--bootstrap", "0", "--csv", str(d / "items.csv")]

    return Case(f"security: view writes {what} through a symlink", argv)


def view_port(port: str) -> Case:
    return Case(
        f"security: view --serve --port {port}",
        lambda d: ["view", str(view_run(d)), "--bootstrap", "0", "--serve", "--port", port],
    )


def view_port_in_use() -> Case:
    def argv(d: Path) -> list[str]:
        held = socket.socket()
        held.bind(("127.0.0.1", 0))
        held.listen()
        _HELD.append(held)
        port = str(held.getsockname()[1])
        return ["view", str(view_run(d)), "--bootstrap", "0", "--serve", "--port", port]

    return Case("security: view --serve on a port in use", argv)


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    return [
        planted_in_out_folder(marker_file=True),
        planted_in_out_folder(marker_file=False),
        planted_in_private_dir(lambda d: payload(d / "pwned"), sign=False, name="unsigned (planted pickle)"),
        planted_in_private_dir(_state, sign=True, cut=True, name="cut off after it was signed"),
        planted_in_private_dir(_truncated_state, sign=True, name="signed but truncated"),
        planted_in_private_dir(
            lambda d: json.dumps({"i": 1}).encode(), sign=True, name="signed, not a pickle"
        ),
        *(symlink_in_run(name) for name in ("results.jsonl", "run.json", "summary.json", ".holder", ".lock")),
        symlink_in_run(".lock", loop=True),
        view_symlink("view.html"),
        view_symlink("the --csv file"),
        view_port("-1"),
        view_port("70000"),
        view_port_in_use(),
    ]
