"""Tasks are data: a typed registry fed by the TOML declarations in `programs/`.

A declaration names the judging mode, the wording the stages receive as inputs (so no task is
coded per task), the score scale, where the data lives and how its columns map onto the judge's
inputs, and the meta-metric. Adding a task means adding a file; `load_task("name")` finds it.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from cejudge_dspy.errors import TaskError
from cejudge_dspy.resources import folder

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

Mode = Literal["pointwise", "pairwise"]
METRICS = ("accuracy", "kendall", "spearman", "pearson")
# The canonical item fields a dataset mapping may fill; anything else is a typo.
ITEM_FIELDS = (
    "id",
    "instruction",
    "response",
    "response_a",
    "response_b",
    "label",
    "language",
    "response_language",
    "language_pair",
    "subset",
    "group",
)


def programs_dir() -> Path:
    """Where declarations live: `$CEJUDGE_PROGRAMS`, else the repository's `programs/`."""
    return folder("programs")


@dataclass(frozen=True)
class DatasetSpec:
    """Where a task's items come from and how columns map onto item fields.

    `fields` maps canonical item fields (ITEM_FIELDS) to dataset columns. `constants` fills a field
    with a fixed value (MM-Eval's gold is always the `chosen` column, mapped to response_a, so
    `label = "A"`). `language_from_filename` reads a language pair such as `de-en` from a local file
    name, as LitEval distributes one CSV per pair.
    """

    hub_id: str = ""
    config: str = ""
    split: str = "test"
    delimiter: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    language_from_filename: bool = False
    default_language: str = "en"


@dataclass(frozen=True)
class SubDimension:
    name: str
    definition: str
    seeds: tuple[str, ...]


@dataclass(frozen=True)
class Dimension:
    """A CheckEval evaluation dimension; `human_key` names its human score in the item's label."""

    name: str
    definition: str
    subdimensions: tuple[SubDimension, ...]
    human_key: str = ""


@dataclass(frozen=True)
class TaskSpec:
    """One declared task. `task` and `criteria` are the wording every stage receives as input."""

    name: str
    version: int
    mode: Mode
    description: str
    task: str
    criteria: str
    metric: str
    dataset: DatasetSpec
    scale: dict[int, str] = field(default_factory=dict)
    dimensions: tuple[Dimension, ...] = ()
    path: Path | None = None

    @property
    def scale_range(self) -> tuple[int, int]:
        if not self.scale:
            raise TaskError(f"task '{self.name}' declares no [scale]; it is not a pointwise task")
        return min(self.scale), max(self.scale)


def _require(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in data:
        raise TaskError(f"{where}: missing required key '{key}'")
    value = data[key]
    if not isinstance(value, kind):
        raise TaskError(f"{where}: '{key}' must be {kind.__name__}, got {type(value).__name__}")
    return value


def _parse_dimensions(raw: list[dict[str, Any]], where: str) -> tuple[Dimension, ...]:
    dims = []
    for d in raw:
        subs = tuple(
            SubDimension(
                name=_require(s, "name", str, where),
                definition=s.get("definition", ""),
                seeds=tuple(_require(s, "seeds", list, f"{where} sub-dimension {s.get('name')}")),
            )
            for s in _require(d, "subdimensions", list, f"{where} dimension {d.get('name')}")
        )
        dims.append(
            Dimension(
                name=_require(d, "name", str, where),
                definition=_require(d, "definition", str, where),
                subdimensions=subs,
                human_key=d.get("human_key", d["name"]),
            )
        )
    return tuple(dims)


def parse_task(data: dict[str, Any], path: Path | None = None) -> TaskSpec:
    """Validate one declaration; every problem names the file and the key."""
    where = str(path) if path else "task declaration"
    mode = _require(data, "mode", str, where)
    if mode not in ("pointwise", "pairwise"):
        raise TaskError(f"{where}: mode must be 'pointwise' or 'pairwise', got '{mode}'")
    metric = _require(data, "metric", str, where)
    if metric not in METRICS:
        raise TaskError(f"{where}: metric must be one of {', '.join(METRICS)}, got '{metric}'")
    raw_ds = dict(data.get("dataset", {}))
    fields_ = raw_ds.pop("fields", {})
    unknown = sorted(set(fields_) - set(ITEM_FIELDS))
    if unknown:
        raise TaskError(
            f"{where}: unknown field(s) {unknown} in [dataset.fields]; known: {', '.join(ITEM_FIELDS)}"
        )
    dataset = DatasetSpec(fields=dict(fields_), constants=dict(raw_ds.pop("constants", {})), **raw_ds)
    scale = {int(k): str(v) for k, v in data.get("scale", {}).items()}
    if mode == "pointwise" and not scale and not data.get("dimensions"):
        raise TaskError(f"{where}: a pointwise task needs a [scale] with one description per level")
    if scale and sorted(scale) != list(range(min(scale), max(scale) + 1)):
        raise TaskError(f"{where}: [scale] must describe every level from {min(scale)} to {max(scale)}")
    return TaskSpec(
        name=_require(data, "name", str, where),
        version=int(data.get("version", 1)),
        mode=mode,
        description=data.get("description", ""),
        task=_require(data, "task", str, where).strip(),
        criteria=data.get("criteria", "").strip(),
        metric=metric,
        dataset=dataset,
        scale=scale,
        dimensions=_parse_dimensions(data.get("dimensions", []), where),
        path=path,
    )


@cache
def _registry(directory: Path) -> dict[str, TaskSpec]:
    tasks: dict[str, TaskSpec] = {}
    for path in sorted(directory.glob("*.toml")):
        with path.open("rb") as fh:
            try:
                spec = parse_task(tomllib.load(fh), path)
            except tomllib.TOMLDecodeError as exc:
                raise TaskError(f"{path}: not valid TOML: {exc}") from exc
        if spec.name in tasks:
            raise TaskError(f"{path}: task '{spec.name}' is also declared in {tasks[spec.name].path}")
        tasks[spec.name] = spec
    return tasks


def available_tasks() -> dict[str, TaskSpec]:
    return dict(_registry(programs_dir()))


def load_task(name: str | TaskSpec) -> TaskSpec:
    """Look a task up by name; unknown names get a "did you mean" and the list of tasks."""
    if isinstance(name, TaskSpec):
        return name
    tasks = available_tasks()
    if name in tasks:
        return tasks[name]
    close = difflib.get_close_matches(name, list(tasks), n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise TaskError(f"unknown task '{name}': {hint}available: {', '.join(sorted(tasks)) or '(none)'}")
