"""A consistency run's directory: its identity (`consistency.json`), its renderings, its summary, and one
ordinary run directory per (rendering, method), named `<rendering>-<method>` (`original-cejudge`,
`ko-direct`).

Each child is a run like any `cejudge evaluate` writes (run.json, results.jsonl, summary.json, its lock), so
resume, identity checks and `cejudge view` work on it unchanged; the parent only adds what ties them
together. The parent's identity holds what changes every child or the renderings (the task, data, methods,
languages, translator and backbone); a rerun with any difference is refused with the difference named, and
`--force-new` moves the whole run aside first.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import make_dirs
from cejudge_dspy.runs import RESULTS, RUN, identity_diff, write_json_atomic

CONSISTENCY = "consistency.json"
RENDERINGS = "renderings.jsonl"
ORIGINAL_RUN = "original"
_KEPT = (".lock", ".holder")  # the lock this process holds stays where it is
CONSISTENCY_FORMAT = 1
# consistency.json's keys that a resume compares; `data` (the path) and `items` are kept beside them.
COMPARED = (
    "task",
    "task_version",
    "methods",
    "languages",
    "translator",
    "program",
    "lm",
    "api_base",
    "temperature",
    "max_tokens",
    "adapter",  # absent from a consistency.json written before --adapter: auto (runs.LATER_KEYS)
    "data_sha256",
    "fields",
    "constants",
    "parallel_fields",
    "subsets",
    "limit",
    # A consistency.json from before `--first` reads as None (runs.LATER_KEYS).
    "first",
    "seed",
)


def child_name(rendering: str, method: str) -> str:
    """The child run of one rendering ("original" or a language code) judged by one method."""
    return f"{rendering}-{method}"


def is_consistency_run(path: Path) -> bool:
    return (path / CONSISTENCY).is_file()


def read_consistency_identity(out: Path) -> dict[str, Any] | None:
    from cejudge_dspy.files import read_json

    path = out / CONSISTENCY
    if not path.exists():
        return None
    data = read_json(path, lambda line: CEJudgeError(f"{line}; use --force-new or another --out"))
    if not isinstance(data, dict):
        raise CEJudgeError(f"{path} is not a consistency run's description; use --force-new or another --out")
    return data


def open_consistency(out: Path, identity: dict[str, Any], children: list[str], *, force_new: bool) -> None:
    """Create or reopen `out` for `identity` (call under `runs.lock(out)`); an existing run with other
    settings is refused, or moved aside with `force_new`."""
    make_dirs(out)
    if (out / RUN).exists() or (out / RESULTS).exists():  # its summary.json would be replaced
        raise CEJudgeError(
            f"{out} holds an `evaluate` run ({RUN}); a consistency run needs a directory of its own: "
            "use another --out"
        )
    old = read_consistency_identity(out)
    started = (out / RENDERINGS).exists() or any((out / c).exists() for c in children)
    if force_new and (old is not None or started):
        _supersede(out)
    elif old is not None and started and (diff := identity_diff(old, identity, COMPARED)):
        raise CEJudgeError(
            f"{out} holds a consistency run with other settings ({diff}); use --force-new to move it "
            "aside and start over, or another --out"
        )
    elif old is None and started:
        raise CEJudgeError(
            f"{out} holds renderings or runs but no {CONSISTENCY}, so what they were made with is unknown; "
            "use --force-new to move them aside, or another --out"
        )
    write_json_atomic(out / CONSISTENCY, {"consistency": CONSISTENCY_FORMAT, **identity})


def _supersede(out: Path) -> None:
    """Move everything of the run (its files and child runs, whatever languages it had) aside."""
    aside = out / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    entries = [p for p in out.iterdir() if not p.name.startswith("superseded-") and p.name not in _KEPT]
    aside.mkdir()
    for path in entries:
        os.replace(path, aside / path.name)
    print(f"warning: the previous consistency run in {out} was moved to {aside}", file=sys.stderr)
