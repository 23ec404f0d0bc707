"""Which columns fill which item fields: the declared mapping, command-line overrides, and how they fit
a source's columns. The conventions are listed in _loader.py's docstring."""

from __future__ import annotations

import difflib
import math
import re
from typing import Any

from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.tasks import ITEM_FIELDS, TaskSpec

TEXT_FIELDS = {
    "pointwise": ("instruction", "response"),
    "pairwise": ("instruction", "response_a", "response_b"),
}
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def _mapping(
    task: TaskSpec, fields: dict[str, str] | None, constants: dict[str, str] | None
) -> tuple[dict[str, str], dict[str, str]]:
    cli_f, cli_c = dict(fields or {}), dict(constants or {})
    for key, value in (cli_f | cli_c).items():
        if key not in ITEM_FIELDS:
            raise InputError(f"unknown item field '{key}'; known: {', '.join(ITEM_FIELDS)}", field=key)
        if not str(value).strip():
            raise InputError(f"empty value for '{key}'; write FIELD=COLUMN", field=key)
    # The command line says how a field is filled; a declared entry of the other kind must not linger as
    # a row filter (e.g. `--field label=label` on MM-Eval-shaped data whose declaration fixes label "A").
    f = {k: v for k, v in task.dataset.fields.items() if k not in cli_c or k in cli_f} | cli_f
    c = {k: str(v) for k, v in task.dataset.constants.items() if k not in cli_f or k in cli_c} | cli_c
    return f, c


def field_mapping(
    task: TaskSpec, fields: dict[str, str] | None, constants: dict[str, str] | None
) -> tuple[dict[str, str], dict[str, str]]:
    """The (fields, constants) a load uses: the declaration with command-line overrides applied."""
    return _mapping(task, fields, constants)


def _adapt_to_file(
    fields: dict[str, str], constants: dict[str, str], columns: list[str], from_cli: set[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Fit the declared mapping to a local file, so a file in the common schema needs no flags.

    The declaration describes its own dataset (MM-Eval's `chosen`/`rejected`, its subset filter; for a
    file not read through those columns, `_loader.py` then drops its constants). In a local file, a
    field whose declared column is absent reads the column named after the field itself (`response_a`,
    `label`, ...), and such a column replaces a declared constant; an `id` column names the items even
    where the declaration maps no id.
    Declared constants do not filter rows of local files (pass `--subset` for that); they fill fields
    the file lacks. Command-line mappings are taken as given.
    """
    f, c = dict(fields), dict(constants)
    for fld in ITEM_FIELDS:
        if fld in from_cli or fld not in columns:
            continue
        declared = f.get(fld)
        if (
            declared is None
            and (fld in c or fld == "id")  # a file's own ids name its items: results and reports say them
            or (declared is not None and any(col not in columns for col in _columns_of(declared)))
        ):
            f[fld] = fld
            c.pop(fld, None)
    return f, c


def _columns_of(spec: str) -> list[str]:
    return _PLACEHOLDER.findall(spec) or [spec]


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == ""


def _read(spec: str, row: dict[str, Any]) -> Any:
    names = _PLACEHOLDER.findall(spec)
    if not names:
        return row.get(spec)
    if all(_blank(row.get(n)) for n in names):  # an unfilled template is missing text, not boilerplate
        return None
    return _PLACEHOLDER.sub(lambda m: "" if _blank(row.get(m[1])) else str(row[m[1]]), spec)


def _check_columns(
    task: TaskSpec, where: str, columns: list[str], fields: dict[str, str], constants: dict[str, str]
) -> dict[str, str]:
    """The fields this source can fill from its columns; DataError if a needed column is absent."""
    missing_required = [f for f in TEXT_FIELDS[task.mode] if f not in fields and f not in constants]
    if missing_required:
        raise DataError(
            f"{where}: task '{task.name}' is {task.mode} and maps no column to "
            f"{', '.join(missing_required)}; add --field {missing_required[0]}=COLUMN "
            f"(available columns: {', '.join(columns)})"
        )
    usable, problems = {}, []
    for fld, spec in fields.items():
        absent = [c for c in _columns_of(spec) if c not in columns]
        if not absent:
            usable[fld] = spec
        elif fld not in constants:  # with a constant the column is optional: the constant fills in
            close = difflib.get_close_matches(absent[0], columns, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(
                f"column '{absent[0]}' for {fld} not found{hint}; fix: --field {fld}=COLUMN"
                + ("" if fld in TEXT_FIELDS[task.mode] else f" or a constant {fld} value")
            )
    if problems:
        raise DataError(f"{where}: {'; '.join(problems)}. Available columns: {', '.join(columns)}")
    return usable
