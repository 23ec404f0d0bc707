"""Tasks are data: a typed registry fed by the TOML declarations in `programs/`.

A declaration names the judging mode, the wording the stages receive as inputs (so no task is
coded per task), the score scale, where the data lives and how its columns map onto the judge's
inputs, and the meta-metric. Adding a task means adding a file; `load_task("name")` finds it.

A declaration may `extends = "other"`: it starts from that task's keys and replaces the top-level keys
it gives (a table such as [scale] or [dataset] is replaced whole). `preset = "paper"` marks it as the
configuration `--preset paper` uses for the task it extends (`preset_task`).
"""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import TaskError
from cejudge_dspy.files import read_toml
from cejudge_dspy.tasks._parsing import inherit, parse_task
from cejudge_dspy.tasks._resources import folder
from cejudge_dspy.tasks._spec import (
    TaskSpec,
)


def programs_dir() -> Path:
    """Where declarations live: `$CEJUDGE_PROGRAMS`, else the repository's `programs/`."""
    return folder("programs")


@cache
def _registry(directory: Path) -> tuple[dict[str, TaskSpec], dict[Path, TaskError]]:
    """Valid tasks by name, and each unreadable declaration's error: one broken file hides no other."""
    tasks: dict[str, TaskSpec] = {}
    broken: dict[Path, TaskError] = {}
    files: dict[Path, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.toml")):
        try:
            files[path] = read_toml(path, TaskError)
        except TaskError as exc:
            broken[path] = exc
    by_name: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path, data in files.items():
        if isinstance(data.get("name"), str):
            by_name.setdefault(data["name"], (path, data))
    for path, data in files.items():
        try:
            spec = parse_task(inherit(data, path, by_name), path)
            if spec.name in tasks:
                raise TaskError(f"{path}: task '{spec.name}' is also declared in {tasks[spec.name].path}")
        except TaskError as exc:
            broken[path] = exc
            continue
        tasks[spec.name] = spec
    return tasks, broken


def preset_task(name: str, preset: str) -> TaskSpec | None:
    """The declaration `--preset PRESET` judges task `name` with: the task itself when it is declared for
    that preset, else the one that extends it with `preset = PRESET`, else None."""
    tasks = available_tasks()
    if name in tasks and tasks[name].preset == preset:
        return tasks[name]
    return next((t for t in tasks.values() if t.extends == name and t.preset == preset), None)


def available_tasks() -> dict[str, TaskSpec]:
    return dict(_registry(programs_dir())[0])


def broken_declarations() -> dict[Path, TaskError]:
    """Declarations that could not be read, each with its one-line error (shown by `cejudge tasks`)."""
    return dict(_registry(programs_dir())[1])


def load_task(name: str | TaskSpec) -> TaskSpec:
    """Look a task up by name; unknown names get a "did you mean" and the list of tasks."""
    if isinstance(name, TaskSpec):
        return name
    tasks, broken = _registry(programs_dir())
    if name in tasks:
        return tasks[name]
    for path, error in broken.items():
        if path.stem == name:
            raise error
    close = difflib.get_close_matches(name, list(tasks), n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    unread = [f"; {len(broken)} declaration(s) could not be read, the first: {e}" for e in broken.values()]
    raise TaskError(
        f"unknown task '{name}': {hint}available: {', '.join(sorted(tasks)) or '(none)'}"
        + "".join(unread[:1])
    )
