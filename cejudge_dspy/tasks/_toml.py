"""Reading a TOML file, the format of task declarations, panel files and `--config` files: each way it fails
(unreadable, not UTF-8, not TOML) is one line naming the file, raised as the caller's error."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def read_toml(path: Path, error: Callable[[str], CEJudgeError]) -> dict[str, Any]:
    """The table in `path`, or `error(line)` raised with the line `<path>: <what is wrong>` (a task's
    `TaskError`, a flag's `partial(InputError, field="--panel")`)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not a TOML file ({' '.join(str(exc).split())})") from None
