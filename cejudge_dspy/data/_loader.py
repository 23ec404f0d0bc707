"""Items from data: a task's dataset mapping applied to local files or to its Hugging Face dataset.

Conventions (also shown by `cejudge tasks show` through `task_summary`):

- Source: `path` is a `.jsonl`/`.json`/`.csv`/`.tsv`/`.parquet` file or a directory of them (read in
  name order, not recursively); without `path` the task's hub id/config/split is loaded with
  `datasets`. Local files are read directly, never from the `datasets` cache, so an edited file is read
  as it is now. Named pipes and devices are refused before anything opens them. JSONL: one object per
  line, blank lines skipped, the columns are the union of the rows' keys (a key a row lacks reads as
  missing). `.json`: a list of objects (or JSON Lines), read whole. CSV cells are read as text; the
  delimiter is the declared one when the header contains it, else the most frequent of `;`, `,`, tab
  in the header (`.tsv` is always tab). Problems name the line a row starts on (JSONL, CSV) or its row
  (JSON list, Parquet, hub).
- Mapping: each canonical field (ITEM_FIELDS) reads one column, or a template such as
  `"{context}\\n\\n{source}"` that joins several. Command-line `fields`/`constants` override the
  declaration; a command-line entry for a field drops the declaration's entry of the other kind for it.
  A field with both a column and a constant keeps only rows whose column equals the constant
  (case-insensitively; that is how `reasoning` takes MM-Eval's reasoning rows); a source without that
  column gets the constant. Declared constants go with the declared columns: they apply to the hub
  dataset and to a local copy read through the declared columns, never to a file read through its own
  (`response_a`, ... or command-line fields), which gets only command-line constants and may lack the
  declared label column. Ids: the mapped id (declared or `--field id=...`), else a local file's own
  `id` column, else `<file stem>/<row index>` (0-based, blank lines not counted); a blank id cell also
  falls back to `<file stem>/<row index>`.
- Languages: a `language_pair` column (`de-en`: language=de, response_language=en), else a `language`
  column (codes or English names, normalised), else the pair in the file name (`de-en.csv`,
  `liteval_de-en.csv`) when the task reads languages from file names, else the declared default.
- Labels: pairwise "A"/"B"/"tie" in any case; pointwise a finite number (strings such as "4,5"
  parsed; NaN and infinities refused, as JSON cannot hold them), or for a task with score dimensions
  (CheckEval) also a dict of scores kept as dict[str, float]. No mapped label means unlabelled items;
  an empty label cell (or a row without the key) leaves that item unlabelled, so a file may be partly
  labelled (summaries say how many items were scored).
- Row problems (empty text, bad label, unknown language, duplicate id) are collected over all rows that
  pass the filters and raised as one InputError that lists them, so a file is fixed in one pass.
- Filters: `languages` match the instruction language (`zh` also matches `zh-CN`) or a pair (`de-en`);
  `subsets` match the subset case-insensitively. `limit` then samples per language key (language, or
  language-response_language for translations) in proportion to its share, at least one per key when
  `limit` allows, with a seeded RNG per key; the sample keeps file order. Such a sample may pick the
  last row, so it reads and checks every row (streaming: one row at a time, keeping only the mapped
  columns, without an Arrow copy). `first` takes the first `limit` items in file order instead and stops
  reading there: rows past them are neither read nor checked, and a JSONL file's columns are then its
  first row's keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cejudge_dspy.data._items import Item
from cejudge_dspy.data._mapping import (
    TEXT_FIELDS,
    _adapt_to_file,
    _check_columns,
    _columns_of,
    _mapping,
    _read,
)
from cejudge_dspy.data._rows import _Loader, _pair_from_name
from cejudge_dspy.data._sampling import stratified_sample
from cejudge_dspy.data._sources import FORMATS, Source, _sources
from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import ITEM_FIELDS, TaskSpec

# The pieces live in _files.py and _sources.py (reading), _mapping.py (columns -> fields), _rows.py
# (rows -> items) and _sampling.py; the package's __init__ is what other packages import.


def load_items(
    task: TaskSpec,
    path: str | None = None,
    *,
    fields: dict[str, str] | None = None,
    constants: dict[str, str] | None = None,
    languages: Sequence[str] | None = None,
    subsets: Sequence[str] | None = None,
    limit: int | None = None,
    seed: int = 42,
    first: bool = False,
) -> list[Item]:
    """Read, map, validate, filter and (with `limit`) sample a task's items; see the module docstring.

    With `first`, `limit` takes the first items in file order instead of the stratified sample, and
    reading stops there: nothing past them is read or checked."""
    if limit is not None and limit < 1:
        raise InputError(f"limit must be a positive number of items, got {limit}", field="limit")
    if first and limit is None:
        raise InputError("first needs a limit: the number of items to take", field="first")
    fields_, constants_ = _mapping(task, fields, constants)
    loader = _Loader(task, constants_, languages, subsets)
    # A full JSON read holds only the columns a mapping may use: the mapped ones and the field names.
    keep = set(ITEM_FIELDS) | {c for spec in fields_.values() for c in _columns_of(spec)}
    cli = set(fields or {}) | set(constants or {})
    wheres, rows_read = [], 0
    for source in _sources(task, path, keep, stream=first):
        wheres.append(source.where)
        stop = limit if first else None
        rows_read += _load_source(task, loader, source, (fields_, constants_), cli, constants or {}, stop)
        if first and limit is not None and len(loader.items) >= limit:
            break
    loader.check(wheres, rows_read)
    if limit is None:
        return loader.items
    return loader.items[:limit] if first else stratified_sample(loader.items, limit, seed)


def _load_source(
    task: TaskSpec,
    loader: _Loader,
    source: Source,
    mapping: tuple[dict[str, str], dict[str, str]],
    cli: set[str],
    cli_constants: dict[str, str],
    stop: int | None,
) -> int:
    """Feed one source's rows to the loader (until it holds `stop` items); the number of rows read."""
    fields_, constants_ = mapping
    if source.file is None:
        f_src, c_src = fields_, constants_
        restricts_from = c_src
    else:
        f_src, c_src = _adapt_to_file(fields_, constants_, source.columns, cli)
        if not _declared_mapping_used(task, source.columns, cli):
            f_src, c_src = _own_columns(f_src, c_src, source.columns, cli, cli_constants)
        restricts_from = {k: v for k, v in c_src.items() if k in cli_constants}
    usable = _check_columns(task, source.where, source.columns, f_src, c_src)
    restricts = {f: c for f, c in restricts_from.items() if f in usable}
    named = {"language", "language_pair"} & (set(usable) | set(constants_))
    by_name = source.file is not None and task.dataset.language_from_filename and not named
    file_pair = _pair_from_name(task, source.file) if by_name and source.file else None
    needed = sorted({c for spec in usable.values() for c in _columns_of(spec)})
    read = 0
    for index, line, row in source.rows(needed):
        read += 1
        mapped = {f: _read(spec, row) for f, spec in usable.items()}
        loader.row(mapped, restricts, source.where, source.stem, index, line, file_pair, c_src)
        if stop is not None and len(loader.items) >= stop:
            break
    return read


def _own_columns(
    fields: dict[str, str],
    constants: dict[str, str],
    columns: list[str],
    cli: set[str],
    cli_constants: dict[str, str],
) -> tuple[dict[str, str], dict[str, str]]:
    """The mapping of a file read through its own columns: the declared constants describe the declared
    dataset (MM-Eval's `chosen` is response A, hence label A), so only the caller's constants remain. A
    declared column that a dropped constant made optional stays optional: that field is left empty; so
    does a declared label column the file lacks (its items are unlabelled)."""
    optional = {k for k in constants if k not in cli_constants} | {"label"}
    kept = {f: spec for f, spec in fields.items() if f in cli or f not in optional or _present(spec, columns)}
    return kept, {k: v for k, v in constants.items() if k in cli_constants}


def _present(spec: str, columns: list[str]) -> bool:
    return all(c in columns for c in _columns_of(spec))


def _declared_mapping_used(task: TaskSpec, columns: list[str], cli: set[str]) -> bool:
    """Whether a local file is read through the task's declared mapping (a local copy of the declared
    dataset: every required text field read from its declared column, none remapped on the command line).
    A declaration that maps no text field binds its constants to no columns, so they describe any file."""
    declared = task.dataset.fields
    required = TEXT_FIELDS[task.mode]
    if not any(f in declared for f in required):
        return True
    return all(f in declared and f not in cli and _present(declared[f], columns) for f in required)


def task_summary(task: TaskSpec) -> dict[str, Any]:
    """The declared data mapping in plain terms, for `cejudge tasks show`."""
    spec = task.dataset
    fields, constants = _mapping(task, None, None)
    if "language_pair" in fields:
        language = f"pair from column '{fields['language_pair']}'"
    elif "language" in fields:
        language = f"column '{fields['language']}'"
    elif spec.language_from_filename:
        language = "pair from the file name (e.g. de-en.csv)"
    else:
        language = f"'{constants.get('language', spec.default_language)}' for every item"
    if "label" in fields:
        kind = (
            "A/B/tie" if task.mode == "pairwise" else "scores per dimension" if task.dimensions else "number"
        )
        label = f"{kind} from column '{fields['label']}'"
    else:
        label = f"always '{constants['label']}'" if "label" in constants else "none (unlabelled)"
    return {
        "task": task.name,
        "mode": task.mode,
        "metric": task.metric,
        "source": f"{spec.hub_id} (config {spec.config or 'default'}, split {spec.split})"
        if spec.hub_id
        else "local files only: --data PATH",
        "formats": list(FORMATS),
        "delimiter": spec.delimiter or "auto (; , tab)",
        "required": list(TEXT_FIELDS[task.mode]),
        "fields": fields,
        "constants": {k: v for k, v in constants.items() if k not in fields},
        "keeps_only": {k: v for k, v in constants.items() if k in fields},
        "id": f"column '{fields['id']}'"
        if "id" in fields
        else "a local file's 'id' column, else <file stem>/<row index>",
        "language": language,
        "label": label,
        "group": f"column '{fields['group']}'" if "group" in fields else None,
    }
