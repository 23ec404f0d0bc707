"""Where the shipped data folders are: task declarations, tuned programs and CheckEval checklists.

In the repository they are the top-level folders `programs/`, `optimized/` and `checklists/`; the wheel
maps them into the package as `cejudge_dspy.programs` (and so on), so an installed package finds them
through the import system wherever it lives. An environment variable overrides each one.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal

Folder = Literal["programs", "optimized", "checklists"]

ENV: dict[str, str] = {
    "programs": "CEJUDGE_PROGRAMS",
    "optimized": "CEJUDGE_OPTIMIZED",
    "checklists": "CEJUDGE_CHECKLISTS",
}


def folder(name: Folder) -> Path:
    """`$CEJUDGE_<NAME>` when set, else the folder the installed package maps as `cejudge_dspy.<name>`."""
    env = os.environ.get(ENV[name])
    if env:
        return Path(env)
    try:
        spec = importlib.util.find_spec(f"cejudge_dspy.{name}")
    except ModuleNotFoundError:
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if locations:
        return Path(locations[0])
    # A source tree used without installing (PYTHONPATH=.): the folders sit beside the package.
    return Path(__file__).resolve().parents[2] / name
