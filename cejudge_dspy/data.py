"""Items from data: a task's dataset mapping applied to local files or to its Hugging Face dataset.

Conventions (also shown by `cejudge tasks show` through `task_summary`):

- Source: `path` is a `.jsonl`/`.json`/`.csv`/`.tsv`/`.parquet` file or a directory of them (read in
  name order, not recursively); without `path` the task's hub id/config/split is loaded. CSV cells are
  read as text; the delimiter is the declared one when the header contains it, else the most frequent of
  `;`, `,`, tab in the header (`.tsv` is always tab).
- Mapping: each canonical field (ITEM_FIELDS) reads one column, or a template such as
  `"{context}\\n\\n{source}"` that joins several. Command-line `fields`/`constants` override the
  declaration; a command-line entry for a field drops the declaration's entry of the other kind for it.
  A field with both a column and a constant keeps only rows whose column equals the constant
  (case-insensitively; that is how `reasoning` takes MM-Eval's reasoning rows); a source without that
  column gets the constant. Ids: the `id` column, else `<file stem>/<row index>` (0-based, in the file).
- Languages: a `language_pair` column (`de-en`: language=de, response_language=en), else a `language`
  column (codes or English names, normalised), else the pair in the file name (`de-en.csv`,
  `liteval_de-en.csv`) when the task reads languages from file names, else the declared default.
- Labels: pairwise "A"/"B"/"tie" in any case; pointwise a number (strings such as "4,5" parsed) or a
  dict of scores (CheckEval) kept as dict[str, float]. No mapped label means unlabelled items.
- Row problems (empty text, bad label, unknown language, duplicate id) are collected over all rows that
  pass the filters and raised as one InputError that lists them, so a file is fixed in one pass.
- Filters: `languages` match the instruction language (`zh` also matches `zh-CN`) or a pair (`de-en`);
  `subsets` match the subset case-insensitively. `limit` then samples per language key (language, or
  language-response_language for translations) in proportion to its share, at least one per key when
  `limit` allows, with a seeded RNG per key; the sample keeps file order.
"""

from __future__ import annotations

import csv
import difflib
import json
import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import DataError, InputError
from .items import Item, Label
from .languages import normalize_language, split_pair
from .tasks import ITEM_FIELDS, TaskSpec

FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet"}
TEXT_FIELDS = {
    "pointwise": ("instruction", "response"),
    "pairwise": ("instruction", "response_a", "response_b"),
}
PAIRWISE_LABELS = {"a": "A", "b": "B", "tie": "tie"}
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_LISTED = 10  # row problems spelled out in one error; the rest are counted


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


def _adapt_to_file(
    fields: dict[str, str], constants: dict[str, str], columns: list[str], from_cli: set[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Fit the declared mapping to a local file, so a file in the common schema needs no flags.

    The declaration describes its own dataset (MM-Eval's `chosen`/`rejected`, its `label = "A"`, its
    subset filter). In a local file, a field whose declared column is absent reads the column named
    after the field itself (`response_a`, `label`, ...), and such a column replaces a declared constant.
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
            and fld in c
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


@contextmanager
def _quiet(datasets: Any) -> Iterator[None]:
    # Local files load in milliseconds: a progress bar per file is noise. Hub downloads keep theirs.
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def _cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:  # datasets wraps the parser error that says what is wrong
        exc = exc.__cause__
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


def _read_file(file: Path, declared_delimiter: str) -> Any:
    import datasets  # slow import, needed only when data is read

    kind, kwargs = FORMATS[file.suffix.lower()], {}
    if kind == "csv":
        with file.open(encoding="utf-8-sig", errors="replace") as fh:
            header = fh.readline()
        if file.suffix.lower() == ".tsv":
            sep = "\t"
        elif declared_delimiter and declared_delimiter in header:
            sep = declared_delimiter
        else:
            sep = max((";", ",", "\t"), key=header.count) if any(d in header for d in ";,\t") else ","
        names = next(csv.reader([header], delimiter=sep))
        # Every cell as text: ids keep leading zeros and "NA"/"None" stay answers, not missing values.
        features = datasets.Features({n: datasets.Value("string") for n in names})
        kwargs = {"delimiter": sep, "encoding": "utf-8-sig", "keep_default_na": False, "features": features}
    try:
        with _quiet(datasets):
            return datasets.load_dataset(kind, data_files=str(file), split="train", **kwargs)
    except Exception as exc:  # any parser failure is a data problem the user fixes in the file
        raise DataError(f"cannot read {file} as {file.suffix.lower()[1:]}: {_cause(exc)}") from exc


def _sources(task: TaskSpec, path: str | None) -> Iterator[tuple[str, str, Path | None, Any]]:
    """(where, id stem, file or None, dataset) for each source."""
    spec = task.dataset
    if path is None:
        if not spec.hub_id:
            raise DataError(
                f"task '{task.name}' declares no hub dataset; pass a local file or directory "
                "with --data PATH (.jsonl/.json/.csv/.tsv/.parquet)"
            )
        import datasets

        try:
            ds = datasets.load_dataset(spec.hub_id, spec.config or None, split=spec.split)
        except Exception as exc:  # offline, unknown id, bad config: all end the same way for the user
            raise DataError(
                f"cannot load '{spec.hub_id}' (config {spec.config or 'default'}, split {spec.split}) "
                "from the "
                f"Hugging Face hub ({_cause(exc)}); download it elsewhere and pass the local file with "
                "--data PATH (.jsonl/.json/.csv/.tsv/.parquet or a directory of them)"
            ) from exc
        yield f"hub dataset {spec.hub_id}", spec.hub_id.rsplit("/", 1)[-1], None, ds
        return
    root = Path(path).expanduser()
    if root.is_dir():
        files = sorted(f for f in root.iterdir() if f.is_file() and f.suffix.lower() in FORMATS)
        if not files:
            raise DataError(
                f"directory {root} holds no {'/'.join(FORMATS)} files; pass a file or another folder"
            )
    elif root.is_file():
        if root.suffix.lower() not in FORMATS:
            raise DataError(f"{root}: unsupported file type; use one of {', '.join(FORMATS)}")
        files = [root]
    else:
        raise DataError(
            f"data path {root} does not exist; pass an existing file or directory with --data PATH"
        )
    for file in files:
        yield str(file), file.stem, file, _read_file(file, spec.delimiter)


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


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, str):
        text = value.strip()
        value = text.replace(",", ".") if text.count(",") == 1 and "." not in text else text  # "4,5"
    number = float(value)
    if math.isnan(number):
        raise ValueError
    return number


def parse_label(value: Any, task: TaskSpec, item: str) -> Label:
    """A gold label in the item's form: "A"/"B"/"tie", a float, or dict[str, float]; InputError if not."""
    if _blank(value):
        raise InputError("empty label; fill it or drop the label mapping", item=item, field="label")
    if task.mode == "pairwise":
        if isinstance(value, str) and value.strip().casefold() in PAIRWISE_LABELS:
            return PAIRWISE_LABELS[value.strip().casefold()]
        raise InputError(f"pairwise label must be 'A', 'B' or 'tie', got {value!r}", item=item, field="label")
    try:
        if isinstance(value, str) and value.strip().startswith("{"):
            value = json.loads(value)
        if not isinstance(value, dict):
            return _number(value)
        scores = {str(k): _number(v) for k, v in value.items() if v is not None}
    except (ValueError, TypeError):
        raise InputError(
            f"expected a number or a dict of numbers, got {value!r}", item=item, field="label"
        ) from None
    lacking = [d.human_key for d in task.dimensions if d.human_key not in scores]
    if lacking or not scores:
        raise InputError(
            f"scores lack {', '.join(lacking) or 'any value'}; present: {', '.join(scores) or 'none'}",
            item=item,
            field="label",
        )
    return scores


def _language_filter(languages: Sequence[str]) -> list[tuple[str, str | None]]:
    wanted = []
    for value in languages:
        try:
            wanted.append((normalize_language(value, field="languages"), None))
        except InputError:
            if not re.search(r"[-_]", value):  # a single unknown language: keep its "did you mean"
                raise
            wanted.append(split_pair(value, field="languages"))  # "de-en", "German-English"
    return wanted


def _wanted(language: str, response_language: str | None, wanted: list[tuple[str, str | None]]) -> bool:
    base = language.partition("-")[0]
    return any(
        (lang == language or ("-" not in lang and lang == base)) and tgt in (None, response_language)
        for lang, tgt in wanted
    )


def _same(field: str, value: Any, constant: str) -> bool:
    if field == "language":  # "German" in the column and "de" declared are the same language
        try:
            return normalize_language(str(value)) == normalize_language(constant)
        except InputError:
            pass
    return str(value).strip().casefold() == constant.strip().casefold()


def _pair_from_name(task: TaskSpec, file: Path) -> tuple[str, str]:
    parts = file.stem.split("_")
    for start in range(len(parts)):  # "de-en", "en_zh", or a prefixed "liteval_de-en"
        try:
            return split_pair("_".join(parts[start:]))
        except InputError:
            continue
    raise DataError(
        f"{file}: task '{task.name}' reads the language pair from the file name, but "
        f"'{file.name}' names none; rename it SOURCE-TARGET{file.suffix} (e.g. de-en{file.suffix}) "
        "or map --field language_pair=COLUMN"
    )


def _shown(counter: Counter[str]) -> str:
    return ", ".join(v for v, _ in counter.most_common(8)) or "none"


def _optional_language(raw: dict[str, Any], field: str, item_id: str) -> str | None:
    return None if _blank(raw.get(field)) else normalize_language(str(raw[field]), item=item_id, field=field)


def _languages(
    raw: dict[str, Any], item_id: str, file_pair: tuple[str, str] | None, default: str
) -> tuple[str, str | None]:
    """(language, response_language): pair column, else language column, else file name, else default."""
    if not _blank(raw.get("language_pair")):
        return split_pair(str(raw["language_pair"]), item=item_id)
    if _blank(raw.get("language")) and file_pair:
        return file_pair
    language = _optional_language(raw, "language", item_id) or default
    return language, _optional_language(raw, "response_language", item_id)


class _Loader:
    """Turns mapped rows into items, counting what the filters drop and collecting row problems."""

    def __init__(
        self,
        task: TaskSpec,
        constants: dict[str, str],
        languages: Sequence[str] | None,
        subsets: Sequence[str] | None,
    ) -> None:
        self.task, self.constants = task, constants
        self.languages = _language_filter(languages) if languages else None
        self.subsets = {s.strip().casefold() for s in subsets} if subsets else None
        self.default = normalize_language(task.dataset.default_language, field="default_language")
        self.items: list[Item] = []
        self.problems: list[InputError] = []
        self.seen: dict[str, Counter[str]] = defaultdict(Counter)  # values met, to explain an empty result
        self.dropped: Counter[str] = Counter()

    def row(
        self,
        raw: dict[str, Any],
        restricts: dict[str, str],
        where: str,
        stem: str,
        index: int,
        file_pair: tuple[str, str] | None,
        constants: dict[str, str],
    ) -> None:
        for f, c in restricts.items():
            self.seen[f][str(raw[f])] += 1
            if not _blank(raw[f]) and not _same(f, raw[f], c):
                self.dropped[f"not {f}={c!r} as declared"] += 1
                return
        # Kept rows take the declared spelling ("Reasoning" -> "reasoning"), so subsets group cleanly.
        raw |= {f: c for f, c in constants.items() if f in restricts or _blank(raw.get(f))}
        item_id = f"{stem}/{index}" if _blank(raw.get("id")) else str(raw["id"]).strip()
        subset = None if _blank(raw.get("subset")) else str(raw["subset"]).strip()
        self.seen["subset"][subset or "(none)"] += 1
        if self.subsets is not None and (subset or "").casefold() not in self.subsets:
            self.dropped["outside --subsets"] += 1
            return
        try:
            language, response_language = _languages(raw, item_id, file_pair, self.default)
        except InputError as exc:
            self.problems.append(exc)
            return
        self.seen["language"][language] += 1
        values: dict[str, Any] = {"language": language, "response_language": response_language}
        if self.languages is not None and not _wanted(language, response_language, self.languages):
            self.dropped["outside --languages"] += 1
            return
        before = len(self.problems)
        for f in TEXT_FIELDS[self.task.mode]:
            value = raw.get(f)
            if _blank(value) or isinstance(value, (dict, list)):
                what = (
                    "empty or missing text" if _blank(value) else f"expected text, got {type(value).__name__}"
                )
                self.problems.append(InputError(what, item=item_id, field=f))
            else:
                values[f] = str(value)
        if "label" in raw:  # mapped or constant; unmapped means unlabelled data
            try:
                values["label"] = parse_label(raw["label"], self.task, item_id)
            except InputError as exc:
                self.problems.append(exc)
        if len(self.problems) == before:
            group = None if _blank(raw.get("group")) else str(raw["group"])
            meta = {"source": where, "row": index}
            self.items.append(
                Item(id=item_id, mode=self.task.mode, subset=subset, group=group, meta=meta, **values)
            )

    def check(self, wheres: list[str], rows: int) -> None:
        """Raise the collected row problems as one InputError, or a DataError when nothing is left."""
        counts = Counter(item.id for item in self.items)
        self.problems += [
            InputError(
                "id is not unique; map a unique column with --field id=COLUMN, or drop "
                "the id mapping to number rows",
                item=i,
                field="id",
            )
            for i, n in counts.items()
            if n > 1
        ]
        if len(self.problems) == 1:
            raise self.problems[0]
        if self.problems:
            listed = "; ".join(str(p) for p in self.problems[:_LISTED])
            more = f"; and {len(self.problems) - _LISTED} more" if len(self.problems) > _LISTED else ""
            error = InputError(f"{len(self.problems)} problems in the data: {listed}{more}")
            error.item, error.field = self.problems[0].item, self.problems[0].field
            raise error
        if not self.items:
            dropped = ", ".join(f"{n} {why}" for why, n in self.dropped.items()) or "the data is empty"
            present = "; ".join(f"{f} values present: {_shown(c)}" for f, c in self.seen.items())
            raise DataError(f"no items from {', '.join(wheres)}: {rows} rows read, {dropped}. {present}")


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
) -> list[Item]:
    """Read, map, validate, filter and (with `limit`) sample a task's items; see the module docstring."""
    if limit is not None and limit < 1:
        raise InputError(f"limit must be a positive number of items, got {limit}", field="limit")
    fields_, constants_ = _mapping(task, fields, constants)
    loader = _Loader(task, constants_, languages, subsets)
    wheres, rows_read = [], 0
    for where, stem, file, ds in _sources(task, path):
        wheres.append(where)
        columns = list(ds.column_names)
        if file is None:
            f_src, c_src = fields_, constants_
            restricts_from = c_src
        else:
            f_src, c_src = _adapt_to_file(
                fields_, constants_, columns, set(fields or {}) | set(constants or {})
            )
            restricts_from = {k: v for k, v in c_src.items() if k in (constants or {})}
        usable = _check_columns(task, where, columns, f_src, c_src)
        restricts = {f: c for f, c in restricts_from.items() if f in usable}
        named = {"language", "language_pair"} & (set(usable) | set(constants_))
        by_name = file is not None and task.dataset.language_from_filename and not named
        file_pair = _pair_from_name(task, file) if by_name else None
        needed = sorted({c for spec in usable.values() for c in _columns_of(spec)})
        for index, row in enumerate(ds.select_columns(needed).to_list()):
            loader.row(
                {f: _read(spec, row) for f, spec in usable.items()},
                restricts,
                where,
                stem,
                index,
                file_pair,
                c_src,
            )
        rows_read += len(ds)
    loader.check(wheres, rows_read)
    return stratified_sample(loader.items, limit, seed) if limit is not None else loader.items


def _stratum(item: Item) -> str:
    return f"{item.language}-{item.response_language}" if item.response_language else item.language


def stratified_sample(items: Sequence[Item], limit: int, seed: int = 42) -> list[Item]:
    """`limit` items, each language stratum in proportion to its size (largest remainder), at least one
    per stratum when `limit` allows; each stratum draws with its own seeded RNG, so adding a language
    leaves the others' picks unchanged; the result keeps the input order."""
    if limit >= len(items):
        return list(items)
    strata: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        strata[_stratum(item)].append(index)
    keys, total = list(strata), len(items)
    alloc = {k: limit * len(strata[k]) // total for k in keys}
    by_rest = sorted(keys, key=lambda k: -(limit * len(strata[k]) % total))  # stable: file order breaks ties
    for k in by_rest[: limit - sum(alloc.values())]:
        alloc[k] += 1
    if limit >= len(keys):
        for k in (k for k in keys if alloc[k] == 0):
            # Take the seat from the stratum most over its exact share that can spare one.
            donor = max(
                (d for d in keys if alloc[d] > 1), key=lambda d: alloc[d] - limit * len(strata[d]) / total
            )
            alloc[donor] -= 1
            alloc[k] = 1
    chosen = [i for k in keys for i in random.Random(f"{seed}/{k}").sample(strata[k], alloc[k])]
    return [items[i] for i in sorted(chosen)]


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
        "id": f"column '{fields['id']}'" if "id" in fields else "<file stem>/<row index>",
        "language": language,
        "label": label,
        "group": f"column '{fields['group']}'" if "group" in fields else None,
    }
