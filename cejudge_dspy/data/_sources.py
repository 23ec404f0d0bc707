"""Where a task's rows come from: its Hugging Face dataset, or local files read with `datasets`.

The file conventions (formats, CSV delimiter, directories) are listed in _loader.py's docstring.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import DataError
from cejudge_dspy.tasks import TaskSpec

FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet"}


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


def _check_utf8(file: Path) -> None:
    """Arrow reads invalid UTF-8 into a column and fails later with a traceback: refuse it here."""
    import codecs

    decoder, line = codecs.getincrementaldecoder("utf-8")(), 1
    with file.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                line += block[: exc.start].count(b"\n")
                raise DataError(
                    f"{file} line {line}: not UTF-8 text (byte {block[exc.start]:#04x}); "
                    "save the file as UTF-8"
                ) from None
            line += block.count(b"\n")
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise DataError(f"{file}: ends inside a UTF-8 character; save the file as UTF-8") from None


def _read_file(file: Path, declared_delimiter: str) -> Any:
    import datasets  # slow import, needed only when data is read

    kind, kwargs = FORMATS[file.suffix.lower()], {}
    if kind != "parquet":
        with file.open("rb") as fh:
            head = fh.read(1 << 16)
        if not head.strip():
            raise DataError(f"{file} is empty; pass a file with one item per row")
        if kind == "csv" and len([line for line in head.splitlines() if line.strip()]) < 2:
            raise DataError(f"{file} has a header but no rows; pass a file with one item per row")
        _check_utf8(file)
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


def fingerprint(task: TaskSpec, path: str | None) -> str:
    """What the data is, for a run's identity: a SHA-256 over the local files (names and bytes, in the
    order they are read), or the hub id, config and split for the task's hub dataset."""
    if path is None:
        spec = task.dataset
        return f"hub:{spec.hub_id}/{spec.config or 'default'}/{spec.split}"
    root = Path(path).expanduser()
    files = (
        sorted(f for f in root.iterdir() if f.is_file() and f.suffix.lower() in FORMATS)
        if root.is_dir()
        else [root]
    )
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode() + b"\0")
        with file.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()[:16]
