"""A run's prompt fingerprint without building its program, when nothing that makes the prompts changed.

The run identity holds `judges.prompt_fingerprint(program)` so that an upgrade which edits a prompt never
resumes an old run. Computing it means building the program, and building it means importing DSPy (about a
second of a rerun that finds nothing left to judge, issue 49). The fingerprint is a function of what the
program is built from: this package's code, DSPy's and pydantic's (how a signature's fields are described),
Python's, the task declaration, the method and its options, and the program file (its hash is in the
label). A memo in the run directory keeps the fingerprint under a key over all of those; a rerun whose key
matches reads it instead of building the program. Any change to any of them, a file of the package edited
in place included (its size or modification time), is another key: the program is built and the
fingerprint computed as before. The key is never part of the run's identity; a missing or unreadable memo
only costs the build.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

MEMO = ".prompts.json"  # in the run directory, beside run.json
_PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def _code_stamp() -> str:
    """Every file of the installed package by path, size and modification time (a few milliseconds: no
    file is read)."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*")):
        if path.suffix in (".py", ".toml", ".json") and "__pycache__" not in path.parts:
            stat = path.stat()
            digest.update(f"{path.relative_to(_PACKAGE)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def memo_key(spec: Any, method: str, label: str, program_kwargs: dict[str, Any]) -> str:
    """The key of a program's prompts: what it is built from (see the module docstring)."""
    parts = {
        "code": _code_stamp(),
        "versions": [sys.version, _version("dspy"), _version("pydantic")],
        "task": dataclasses.asdict(spec) if dataclasses.is_dataclass(spec) else repr(spec),
        "method": method,
        "program": label,
        "options": program_kwargs,
    }
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def remembered(out: Path, key: str) -> str | None:
    """The fingerprint the run directory's memo holds under `key`; None when it holds none (no memo, an
    unreadable one, another key)."""
    from cejudge_dspy.errors import CEJudgeError
    from cejudge_dspy.files import read_json

    if not (out / MEMO).is_file():  # a FIFO or a device there is no memo either, and is not opened
        return None
    try:
        memo = read_json(out / MEMO, CEJudgeError, limit=4096)
    except CEJudgeError:  # unreadable, too long, not JSON: only a memo that is not there
        return None
    if not isinstance(memo, dict) or memo.get("key") != key or not isinstance(memo.get("prompts"), str):
        return None
    return memo["prompts"]


def remember(out: Path, key: str, prompts: str) -> None:
    """Keep `prompts` under `key` in the run directory (atomically; a write that fails costs only the next
    rerun's build)."""
    from cejudge_dspy.runs import RunWriteError, write_json_atomic

    try:
        write_json_atomic(out / MEMO, {"key": key, "prompts": prompts})
    except RunWriteError:  # a full or read-only disk: the next rerun builds the program, that is all
        return


def prompts_of(out: Path, key: str | None, build: Callable[[], Any]) -> tuple[str, bool]:
    """The program's prompt fingerprint, and whether it came from the memo; builds the program (`build`)
    only when the memo has no fingerprint under `key` (or there is no key: a panel)."""
    known = None if key is None else remembered(out, key)
    if known is not None:
        return known, True
    from cejudge_dspy.judges import prompt_fingerprint  # DSPy's import: only when the program is built

    return prompt_fingerprint(build()), False
