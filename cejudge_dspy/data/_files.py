"""Local data files read row by row with the standard library (Parquet with pyarrow), never through the
`datasets` cache.

Why not `datasets.load_dataset` for local files: it keys its Arrow cache on a file's path, size and
mtime, so a file edited in place with its mtime restored was read from a stale copy while the run's
identity hashed the new bytes; it converts the whole file into an Arrow copy even when `--limit 5` needs
five rows; and its parser errors name Arrow blocks ("row 0"), not the line a user opens. Reading the rows
ourselves gives the bytes on disk now, one row at a time, with the real line number of each.

A row is `(index, line, values)`: `index` counts the rows of the file from 0 (blank lines are not rows),
`line` is the 1-based line it starts on in a JSONL or CSV file (None for a JSON list or a Parquet file),
and `values` maps column names to Python values (CSV cells are text; a JSONL key missing from a row reads
as None).
"""

from __future__ import annotations

import csv
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from cejudge_dspy.errors import DataError
from cejudge_dspy.files import loads

FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet"}
Row = tuple[int, int | None, dict[str, Any]]
_KINDS = {
    stat.S_ISFIFO: "a named pipe",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
    stat.S_ISDIR: "a directory",
}


def require_regular_file(path: Path, hint: str) -> None:
    """DataError unless `path` is a regular file (or a link to one), decided by `stat` before anything
    opens it: opening a named pipe blocks until a writer comes, and a device never ends."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise DataError(f"{path}: no such file; {hint}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror}); {hint}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS.items() if test(mode)), "not a file")
        raise DataError(f"{path}: not a regular file ({kind}); {hint}")


def _open(file: Path) -> BinaryIO:
    """The one place local data files are opened (tests wrap it to count the bytes read)."""
    return file.open("rb")


def _lines(fh: BinaryIO, file: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, decoded as UTF-8; a BOM (from Excel) is dropped."""
    for number, raw in enumerate(fh, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{file} line {number}: not UTF-8 text (byte {raw[exc.start]:#04x}); save the file as UTF-8"
            ) from None
        yield number, text.removeprefix("\ufeff") if number == 1 else text


def _json_value(text: str, file: Path, number: int | None, kind: str) -> Any:
    try:
        return loads(text)  # json.loads, faster (files.loads)
    except json.JSONDecodeError as exc:
        where = f"line {number}" if number is not None else f"line {exc.lineno}"
        raise DataError(
            f"cannot read {file} as {kind}: {where} is not valid JSON ({exc.msg} at column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits; nesting too deep
        why = "nested too deeply" if isinstance(exc, RecursionError) else _first_line(exc)
        where = f"line {number}" if number is not None else "the file"
        raise DataError(f"cannot read {file} as {kind}: {where} cannot be read as JSON ({why})") from None


def _object(value: Any, file: Path, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(f"{file} {where}: expected a JSON object (one item), got {type(value).__name__}")
    return value


def _jsonl_rows(file: Path) -> Iterator[Row]:
    with _open(file) as fh:
        index = 0
        for number, text in _lines(fh, file):
            if not text.strip():
                continue
            row = _object(_json_value(text, file, number, "jsonl"), file, f"line {number}")
            yield index, number, row
            index += 1


def _json_rows(file: Path) -> Iterator[Row]:
    """A .json file, read whole (a JSON document cannot be read in parts): a list of objects, one object,
    or (as `datasets` also accepted) JSON Lines."""
    with _open(file) as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        number = data[: exc.start].count(b"\n") + 1
        raise DataError(
            f"{file} line {number}: not UTF-8 text (byte {data[exc.start]:#04x}); save the file as UTF-8"
        ) from None
    if not text.strip():
        return
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            _json_value(text, file, None, "json")  # raises with the line and column
        yield from _jsonl_rows(file)
        return
    except (ValueError, RecursionError):
        _json_value(text, file, None, "json")  # raises, naming the problem
        return
    for index, row in enumerate(value if isinstance(value, list) else [value]):
        yield index, None, _object(row, file, f"row {index + 1}")


def _delimiter(file: Path, header: str, declared: str) -> str:
    if file.suffix.lower() == ".tsv":
        return "\t"
    if declared and declared in header:
        return declared
    return max((";", ",", "\t"), key=header.count) if any(d in header for d in ";,\t") else ","


class _Csv:
    """A CSV/TSV file: the header's names, then each record as text cells (no type guessing: ids keep
    leading zeros and "NA"/"None" stay answers, not missing values); a short record's missing cells are
    None, a long one is refused with its line."""

    def __init__(self, file: Path, declared_delimiter: str) -> None:
        self.file = file
        with _open(file) as fh:
            first = next((text for _, text in _lines(fh, file) if text.strip()), None)
        if first is None:
            raise DataError(f"{file} is empty; pass a file with one item per row")
        self.sep = _delimiter(file, first, declared_delimiter)
        self.names = next(csv.reader([first], delimiter=self.sep))
        repeated = sorted({n for n in self.names if self.names.count(n) > 1})
        if repeated:
            raise DataError(f"{file}: column '{repeated[0]}' appears twice in the header; rename one")

    def rows(self) -> Iterator[Row]:
        csv.field_size_limit(2**31 - 1)  # the default (128 KiB a cell) is shorter than a long answer
        with _open(self.file) as fh:
            numbered = _lines(fh, self.file)
            header_line = next(n for n, text in numbered if text.strip())
            reader = csv.reader((text for _, text in numbered), delimiter=self.sep, strict=True)
            index, before = 0, header_line  # csv's line_num counts the lines after the header
            try:
                for cells in reader:
                    start, before = before + 1, header_line + reader.line_num
                    if not cells or (len(cells) == 1 and not cells[0].strip()):
                        continue  # a blank line is not a row
                    if len(cells) > len(self.names):
                        raise DataError(
                            f"{self.file} line {start}: {len(cells)} cells, but the header names "
                            f"{len(self.names)} columns; quote cells that contain the delimiter {self.sep!r}"
                        )
                    yield (
                        index,
                        start,
                        dict(
                            zip(self.names, [*cells, *[None] * (len(self.names) - len(cells))], strict=True)
                        ),
                    )
                    index += 1
            except csv.Error as exc:
                raise DataError(f"cannot read {self.file} as csv: line {before + 1}: {exc}") from None
        if index == 0:
            raise DataError(f"{self.file} has a header but no rows; pass a file with one item per row")


def _parquet(file: Path) -> tuple[list[str], Any]:
    import pyarrow.parquet as pq  # only Parquet needs Arrow

    try:
        parquet = pq.ParquetFile(file)
    except Exception as exc:  # noqa: BLE001 - any parser failure is a problem the user fixes in the file
        raise DataError(f"cannot read {file} as parquet: {type(exc).__name__}: {_first_line(exc)}") from None
    return list(parquet.schema_arrow.names), parquet


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def _parquet_rows(file: Path, parquet: Any, needed: list[str]) -> Iterator[Row]:
    index = 0
    try:
        for batch in parquet.iter_batches(batch_size=256, columns=needed):
            for values in batch.to_pylist():
                yield index, None, values
                index += 1
    except Exception as exc:  # noqa: BLE001 - a damaged row group
        raise DataError(f"cannot read {file} as parquet: {type(exc).__name__}: {_first_line(exc)}") from None


class LocalFile:
    """One local data file: its columns, and its rows restricted to the columns a mapping needs.

    JSON rows carry their own keys, so the columns are the union over all rows; with `stream` (a load
    that stops after its first items) they are the first row's keys, so nothing past the rows used is
    read. `keep` bounds what a full JSON read holds in memory to the columns a mapping may use.
    """

    def __init__(self, file: Path, declared_delimiter: str, keep: set[str], stream: bool) -> None:
        self.file = file
        kind = FORMATS[file.suffix.lower()]
        self._parquet = None
        if kind == "parquet":
            self.columns, self._parquet = _parquet(file)
            self._rows: Iterator[Row] = iter(())
        elif kind == "csv":
            table = _Csv(file, declared_delimiter)
            self.columns, self._rows = table.names, table.rows()
        else:
            rows = _jsonl_rows(file) if file.suffix.lower() == ".jsonl" else _json_rows(file)
            self.columns, self._rows = self._json_columns(rows, keep, stream)

    def _json_columns(self, rows: Iterator[Row], keep: set[str], stream: bool) -> tuple[list[str], Any]:
        if stream:
            first = next(rows, None)
            if first is None:
                raise DataError(f"{self.file} is empty; pass a file with one item per row")
            return list(first[2]), _chain(first, rows)
        columns: dict[str, None] = {}
        kept = []
        for index, line, values in rows:
            columns |= dict.fromkeys(values)
            kept.append((index, line, {k: v for k, v in values.items() if k in keep}))
        if not kept:
            raise DataError(f"{self.file} is empty; pass a file with one item per row")
        return list(columns), _drain(kept)

    def rows(self, needed: list[str]) -> Iterator[Row]:
        """Each row once, with the `needed` columns only (absent keys read as None)."""
        if self._parquet is not None:
            yield from _parquet_rows(self.file, self._parquet, needed)
            return
        for index, line, values in self._rows:
            yield index, line, {c: values.get(c) for c in needed}


def _drain(rows: list[Row]) -> Iterator[Row]:
    """The rows in order, each let go once it is taken: the items built from them replace them."""
    rows.reverse()
    while rows:
        yield rows.pop()


def _chain(first: Row, rest: Iterator[Row]) -> Iterator[Row]:
    yield first
    yield from rest


def read_text_lines(path: Path, hint: str) -> list[str]:
    """The lines of a small text file given on the command line (`--file`, prediction files), after
    checking it is a regular file; UTF-8 with an optional BOM."""
    require_regular_file(path, hint)
    try:
        with path.open("rb") as fh:
            data = fh.read()
        return data.decode("utf-8").removeprefix("\ufeff").splitlines()
    except UnicodeDecodeError as exc:
        number = data[: exc.start].count(b"\n") + 1
        raise DataError(f"{path} line {number}: not UTF-8 text; save the file as UTF-8") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror}); {hint}") from None
