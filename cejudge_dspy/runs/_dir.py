"""A run directory holds one run: its identity, an exclusive lock, and records appended atomically.

- `run.json` is the run's identity: everything that changes its records (see `IDENTITY_KEYS`). Resuming
  with any difference is refused with the difference named; `force_new` moves the old run aside into
  `superseded-<time>/` (nothing is deleted). A directory whose run.json has no records yet takes the new
  identity: nothing could mix.
- `lock` holds an exclusive OS lock on `.lock` for as long as a process writes (_lock.py).
- No file of the run is written through a symlink: one placed there is refused with one line
  naming it (cejudge_dspy.files).
- `append_records` appends whole lines or none, and `repair_torn_tail` (run on resume, under the lock)
  moves a torn final line aside so its item is judged again (_files.py).

This module owns the directory's layout (the file names) and opening a run in it. What an identity is
and how two compare live in _identity.py; the lock and the durable writes in _lock.py and
_files.py; the package's face, `cejudge_dspy.runs`, exports their public names, so callers import a run
directory's names from one place.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import make_dirs, read_json, refuse_symlink, touch_nofollow
from cejudge_dspy.runs._files import (
    repair_torn_tail,
    write_json_atomic,
)
from cejudge_dspy.runs._identity import (
    IDENTITY_FORMAT,
    identity_diff,
)

RESULTS, RUN, SUMMARY, TORN = "results.jsonl", "run.json", "summary.json", "results.jsonl.torn"
# The identity file of a `cejudge consistency` run (consistency/_layout.py): such a directory is no run's.
CONSISTENCY = "consistency.json"


def _unreadable_identity(line: str) -> CEJudgeError:
    return CEJudgeError(f"{line}; use --force-new or another --out")


def read_identity(out: Path) -> dict[str, Any] | None:
    """The run.json of `out`, or None; a file that is not a JSON object is one clear error."""
    path = out / RUN
    if not path.exists():
        return None
    data = read_json(path, _unreadable_identity)  # a pipe, a device, deep nesting: one line
    if not isinstance(data, dict):
        raise CEJudgeError(f"{path} is not a run description; use --force-new or another --out")
    return data


def open_run(out: Path, identity: dict[str, Any], *, force_new: bool = False) -> None:
    """Create or reopen `out` for `identity` (call under `lock`), with any torn final line moved aside.

    Refuses an existing run with another identity unless `force_new`, which moves it aside first.
    """
    make_dirs(out)
    if (out / CONSISTENCY).exists():  # its summary.json would be replaced by this run's
        raise CEJudgeError(
            f"{out} holds a `consistency` run ({CONSISTENCY}); an evaluate run needs a directory of its "
            "own: use another --out (the consistency run's own runs are its subfolders)"
        )
    for name in (RUN, RESULTS, SUMMARY, TORN):  # refused before anything is judged, not at the end
        refuse_symlink(out / name)
    old = read_identity(out)
    has_records = (out / RESULTS).exists() and (out / RESULTS).stat().st_size > 0
    if old is not None and has_records:
        if force_new:
            _supersede(out)
        elif old.get("identity") != IDENTITY_FORMAT:
            raise CEJudgeError(
                f"{out} holds a run from an older cejudge that did not record all its settings "
                "(temperature, max_tokens, data fingerprint); use --force-new to move it aside, "
                "or another --out"
            )
        elif diff := identity_diff(old, identity):
            raise CEJudgeError(
                f"{out} holds a run with other settings ({diff}); use --force-new to move it aside "
                "and start over, or another --out"
            )
    elif has_records and not force_new:
        raise CEJudgeError(
            f"{out} holds records but no {RUN}, so what they were judged with is unknown; "
            "use --force-new to move them aside, or another --out"
        )
    elif force_new and any(out.iterdir()):
        _supersede(out)
    write_json_atomic(out / RUN, {"identity": IDENTITY_FORMAT, **identity})
    touch_nofollow(out / RESULTS)  # a shard with no items is still a run that merge can count
    repair_torn_tail(out / RESULTS)


def _supersede(out: Path) -> None:
    aside = out / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    aside.mkdir()
    for name in (RUN, RESULTS, SUMMARY, TORN):
        if (out / name).exists():
            os.replace(out / name, aside / name)
    print(f"warning: the previous run in {out} was moved to {aside}", file=sys.stderr)


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
