"""Parsing one declaration: every problem is a TaskError naming the file and the key, never a traceback.

`parse_task` validates a declaration's keys into a TaskSpec (the file is read by files.read_toml);
`inherit` resolves `extends` (a declaration starts from the keys of the task it extends and replaces the
top-level keys it gives; a table such as [scale] or [dataset] is replaced whole).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import TaskError
from cejudge_dspy.tasks._spec import (
    CONCEPT_PROMPTS,
    ITEM_FIELDS,
    METRICS,
    DatasetSpec,
    Dimension,
    SubDimension,
    TaskSpec,
)


def _flag(data: dict[str, Any], key: str, where: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise TaskError(f"{where}: '{key}' must be true or false, got {value!r}")
    return value


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
        subdims = _require(d, "subdimensions", list, f"{where} dimension {d.get('name')}")
        for sub in subdims:
            if not isinstance(sub, dict):
                raise TaskError(f"{where} dimension {d.get('name')}: subdimensions must be tables")
            seeds = sub.get("seeds")
            if isinstance(seeds, list) and not all(isinstance(q, str) and q.strip() for q in seeds):
                raise TaskError(f"{where} sub-dimension {sub.get('name')}: every seed must be question text")
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
                human_key=_human_key(d, where),
            )
        )
    return tuple(dims)


def _human_key(d: dict[str, Any], where: str) -> str:
    key = d.get("human_key", d["name"])
    if not isinstance(key, str) or not key.strip():
        raise TaskError(
            f"{where} dimension {d.get('name')}: human_key must be text (a label key), got {key!r}"
        )
    return key


# Task names become run directory names (runs/<task>-<method>) and terminal text: letters, digits and
# `_ . -`, starting with a letter or digit, so no name can leave ./runs or carry a control character.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# A scale is levels a judge picks from; 0-100 (Direct Assessment) is the widest any benchmark uses.
MAX_SCALE_LEVELS = 101
# `extends` chains deeper than this are a mistake (the shipped ones are one step).
MAX_EXTENDS = 16


def _name(data: dict[str, Any], where: str) -> str:
    name = _require(data, "name", str, where)
    if not _NAME.fullmatch(name) or ".." in name:
        raise TaskError(
            f"{where}: name {name!r} is not a plain task name; use letters, digits, '_', '.' and '-' "
            "(at most 64, starting with a letter or digit)"
        )
    return name


_DATASET_KEYS = {
    "hub_id": str,
    "config": str,
    "split": str,
    "delimiter": str,
    "language_from_filename": bool,
    "default_language": str,
    "origin": str,
    "try_with": str,
}


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise TaskError(f"{where}: [{key}] must be a table, got {type(value).__name__}")
    return value


def _dataset(data: dict[str, Any], where: str) -> DatasetSpec:
    raw = dict(_table(data, "dataset", where))
    fields_ = _table(raw, "fields", f"{where} [dataset]")
    constants = _table(raw, "constants", f"{where} [dataset]")
    raw.pop("fields", None), raw.pop("constants", None)
    for key, value in raw.items():
        if key not in _DATASET_KEYS:
            raise TaskError(f"{where}: unknown key '{key}' in [dataset]; known: {', '.join(_DATASET_KEYS)}")
        if not isinstance(value, _DATASET_KEYS[key]):
            kind = _DATASET_KEYS[key].__name__
            raise TaskError(f"{where}: [dataset] {key} must be {kind}, got {type(value).__name__}")
    delimiter = raw.get("delimiter", "")
    if delimiter and (len(delimiter) != 1 or delimiter in '"\r\n'):
        raise TaskError(f"{where}: [dataset] delimiter must be one character such as ';', got {delimiter!r}")
    parallel = _parallel(fields_, where)
    fields_ = {k: v for k, v in fields_.items() if "@" not in k}
    unknown = sorted(set(fields_) - set(ITEM_FIELDS))
    if unknown:
        raise TaskError(
            f"{where}: unknown field(s) {unknown} in [dataset.fields]; known: {', '.join(ITEM_FIELDS)}"
        )
    for table, values, kinds in (("fields", fields_, (str,)), ("constants", constants, (str, int, float))):
        for key, value in values.items():
            if not isinstance(value, kinds) or isinstance(value, bool) or not str(value).strip():
                raise TaskError(
                    f"{where}: [dataset.{table}] {key} must be a column name (text), got {value!r}"
                    if table == "fields"
                    else f"{where}: [dataset.constants] {key} must be text or a number, got {value!r}"
                )
    return DatasetSpec(
        fields=dict(fields_), constants={k: str(v) for k, v in constants.items()}, parallel=parallel, **raw
    )


# The texts an item may carry in other languages (`instruction@ko = "prompt_ko"`).
PARALLEL_TEXTS = ("instruction", "response", "response_a", "response_b")


def _parallel(fields_: dict[str, Any], where: str) -> dict[str, dict[str, str]]:
    """The [dataset.fields] entries `FIELD@LANG = COLUMN` as {LANG: {FIELD: COLUMN}}."""
    out: dict[str, dict[str, str]] = {}
    for key, column in fields_.items():
        name, at, language = key.partition("@")
        if not at:
            continue
        if name not in PARALLEL_TEXTS or not language.strip():
            raise TaskError(
                f"{where}: [dataset.fields] {key}: a version in another language is TEXT@LANG, TEXT one of "
                f"{', '.join(PARALLEL_TEXTS)} (e.g. instruction@ko)"
            )
        if not isinstance(column, str) or not column.strip():
            raise TaskError(f"{where}: [dataset.fields] {key} must be a column name (text), got {column!r}")
        out.setdefault(language.strip(), {})[name] = column
    return out


def _scale(data: dict[str, Any], where: str) -> tuple[dict[int, str], tuple[int, ...]]:
    """Every level of the scale with its description, and the levels the declaration describes.

    Without `scale_range` every level from the lowest to the highest must be described (a missing one is
    a typo). With `scale_range = [LOW, HIGH]` the declaration may describe a subset that includes both
    ends (LitEval's rubric describes 1, 3, 5 and 7 of a 1-7 scale); a level it leaves out is any whole
    number between, and the judge reads it as lying between its described neighbours."""
    scale: dict[int, str] = {}
    table = _table(data, "scale", where)
    if len(table) > MAX_SCALE_LEVELS:
        raise TaskError(
            f"{where}: [scale] describes {len(table)} levels; a scale has at most {MAX_SCALE_LEVELS}"
        )
    for key, value in table.items():
        if not str(key).strip().lstrip("-").isdigit():
            raise TaskError(f"{where}: [scale] keys must be whole numbers such as 1 = \"...\", got '{key}'")
        if not isinstance(value, str) or not value.strip():
            raise TaskError(f"{where}: [scale] {key} must be a description (text), got {value!r}")
        scale[int(key)] = value
    described = tuple(sorted(scale))
    bounds = data.get("scale_range")
    if bounds is None:
        if scale and described[-1] - described[0] + 1 != len(described):  # sorted, unique: gaps or not
            raise TaskError(
                f"{where}: [scale] must describe every level from {min(scale)} to {max(scale)}, "
                "or declare scale_range = [LOW, HIGH] to describe only some of them"
            )
        return scale, described
    if not (
        isinstance(bounds, list)
        and len(bounds) == 2
        and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
        and bounds[0] < bounds[1]
    ):
        raise TaskError(
            f"{where}: scale_range must be [LOW, HIGH], whole numbers with LOW < HIGH, got {bounds!r}"
        )
    low, high = bounds
    if high - low + 1 > MAX_SCALE_LEVELS:
        raise TaskError(
            f"{where}: scale_range {bounds!r} has {high - low + 1} levels; a scale has at most "
            f"{MAX_SCALE_LEVELS} (such as 0-100)"
        )
    if not scale or described[0] != low or described[-1] != high:
        raise TaskError(f"{where}: [scale] must describe both ends of scale_range, {low} and {high}")
    full = {}
    for level in range(low, high + 1):
        below = max(d for d in described if d <= level)
        above = min(d for d in described if d >= level)
        full[level] = (
            scale[level] if level in scale else f"Not described: between levels {below} and {above}."
        )
    return full, described


def _choice(data: dict[str, Any], key: str, choices: tuple[str, ...], where: str) -> str:
    value = data.get(key, choices[0])
    if value not in choices:
        raise TaskError(f"{where}: '{key}' must be one of {', '.join(choices)}, got {value!r}")
    return value


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise TaskError(f"{where}: '{key}' must be str, got {type(value).__name__}")
    return value.strip()


def parse_task(data: dict[str, Any], path: Path | None = None) -> TaskSpec:
    """Validate one declaration; every problem is a TaskError that names the file and the key."""
    where = str(path) if path else "task declaration"
    try:
        return _parse_task(data, path, where)
    except TaskError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as exc:  # a shape not foreseen
        raise TaskError(f"{where}: malformed declaration ({type(exc).__name__}: {exc})") from None


def _parse_task(data: dict[str, Any], path: Path | None, where: str) -> TaskSpec:
    mode = _require(data, "mode", str, where)
    if mode not in ("pointwise", "pairwise"):
        raise TaskError(f"{where}: mode must be 'pointwise' or 'pairwise', got '{mode}'")
    metric = _require(data, "metric", str, where)
    if metric not in METRICS:
        raise TaskError(f"{where}: metric must be one of {', '.join(METRICS)}, got '{metric}'")
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise TaskError(f"{where}: version must be a whole number >= 1, got {version!r}")
    for key in ("description", "criteria"):
        if not isinstance(data.get(key, ""), str):
            raise TaskError(f"{where}: '{key}' must be str, got {type(data[key]).__name__}")
    dataset = _dataset(data, where)
    scale, described = _scale(data, where)
    if mode == "pointwise" and not scale and not data.get("dimensions"):
        raise TaskError(f"{where}: a pointwise task needs a [scale] with one description per level")
    dimensions = data.get("dimensions", [])
    if not isinstance(dimensions, list) or not all(isinstance(d, dict) for d in dimensions):
        raise TaskError(f"{where}: dimensions must be [[dimensions]] tables")
    return TaskSpec(
        name=_name(data, where),
        version=version,
        mode=mode,
        description=data.get("description", ""),
        task=_require(data, "task", str, where).strip(),
        criteria=data.get("criteria", "").strip(),
        metric=metric,
        dataset=dataset,
        scale=scale,
        dimensions=_parse_dimensions(dimensions, where),
        path=path,
        check_response_language=_flag(data, "check_response_language", where),
        check_translation_likelihood=_flag(data, "check_translation_likelihood", where),
        described_levels=described,
        concepts=_choice(data, "concepts", CONCEPT_PROMPTS, where),
        extends=_text(data, "extends", where),
        preset=_text(data, "preset", where),
    )


def inherit(
    data: dict[str, Any], path: Path, raw: dict[str, tuple[Path, dict[str, Any]]], seen: tuple[str, ...] = ()
) -> dict[str, Any]:
    """`data` over the keys of the task it `extends` (and so on up the chain, at most MAX_EXTENDS steps,
    walked without recursion); see the module docstring."""
    layers, chain = [data], [*seen, str(data.get("name"))]
    current, current_path = data, path
    while (base_name := current.get("extends")) is not None:
        if not isinstance(base_name, str) or base_name not in raw:
            shown = ", ".join(sorted(raw)[:20]) + (", ..." if len(raw) > 20 else "")
            raise TaskError(
                f"{current_path}: extends = {str(base_name)[:80]!r} names no readable declaration; "
                f"declared: {shown}"
            )
        if base_name in chain:
            shown = " -> ".join([*chain[:5], "...", *chain[-3:]] if len(chain) > 8 else chain)
            raise TaskError(f"{path}: extends forms a cycle ({shown} -> {base_name})")
        if len(chain) > MAX_EXTENDS:
            raise TaskError(f"{path}: extends chains more than {MAX_EXTENDS} declarations; shorten the chain")
        chain.append(base_name)
        current_path, current = raw[base_name]
        layers.append(current)
    merged: dict[str, Any] = {}
    for layer in reversed(layers):
        merged |= layer
    return merged
