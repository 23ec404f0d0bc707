"""Where a task's rows come from: its Hugging Face dataset (read with `datasets`), or local files (read
by _files.py, never through the `datasets` cache).

The file conventions (formats, CSV delimiter, directories) are listed in _loader.py's docstring.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cejudge_dspy.data._files import FORMATS, LocalFile, Row, require_regular_file
from cejudge_dspy.errors import DataError
from cejudge_dspy.tasks import TaskSpec

_HINT = "pass an existing file or directory with --data PATH"


def _cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:  # datasets wraps the parser error that says what is wrong
        exc = exc.__cause__
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


@dataclass
class Source:
    """One source of rows: where it is (for messages), the id stem, the local file (None for the hub),
    its columns, and `rows(needed)` to read them."""

    where: str
    stem: str
    file: Path | None
    columns: list[str]
    _local: LocalFile | None = None
    _hub: Any = None

    def rows(self, needed: list[str]) -> Iterator[Row]:
        if self._local is not None:
            yield from self._local.rows(needed)
            return
        for index, values in enumerate(self._hub.select_columns(needed).to_list()):
            yield index, None, values


def _no_hub_dataset(task: TaskSpec) -> str:
    """Where a task without a hub dataset gets its data, what a file or folder must hold, the command, and
    (when the declaration names one) a sample to try it on: built from the declaration."""
    spec = task.dataset
    columns = ", ".join(f"{column} ({field})" for field, column in spec.fields.items() if "{" not in column)
    csv = f"; CSV cells separated by {spec.delimiter!r}" if spec.delimiter else ""
    pair = "; the language pair read from the file name (de-en.csv)" if spec.language_from_filename else ""
    example = "de-en.csv" if spec.language_from_filename else "items.jsonl"
    return " ".join(
        part
        for part in (
            f"task '{task.name}' declares no hub dataset{': ' + spec.origin if spec.origin else ''}.",
            f"Pass a file or a folder of files (.jsonl/.json/.csv/.tsv/.parquet) with --data PATH, each row "
            f"with the columns {columns or 'the task maps'}{csv}{pair}:",
            f"`python optimize.py --task {task.name} --data {example}` or "
            f"`cejudge evaluate --task {task.name} --data {example}`.",
            f"To try it here: {spec.try_with}." if spec.try_with else "",
        )
        if part
    )


def _hub_source(task: TaskSpec) -> Source:
    spec = task.dataset
    if not spec.hub_id:
        raise DataError(_no_hub_dataset(task))
    import datasets  # slow import, needed only when hub data is read

    try:
        ds = datasets.load_dataset(spec.hub_id, spec.config or None, split=spec.split)
    except Exception as exc:  # offline, unknown id, bad config: all end the same way for the user
        raise DataError(
            f"cannot load '{spec.hub_id}' (config {spec.config or 'default'}, split {spec.split}) "
            "from the "
            f"Hugging Face hub ({_cause(exc)}); download it elsewhere and pass the local file with "
            "--data PATH (.jsonl/.json/.csv/.tsv/.parquet or a directory of them)"
        ) from exc
    stem = spec.hub_id.rsplit("/", 1)[-1]
    return Source(f"hub dataset {spec.hub_id}", stem, None, list(ds.column_names), _hub=ds)


def _require_utf8_name(path: Path) -> None:
    """A file name that is not UTF-8 (its bytes reach Python as lone surrogates) could be neither printed
    nor recorded in run.json: one line, with the bad bytes shown as \\xNN."""
    name = str(path)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(name).decode("utf-8", errors="backslashreplace")
        raise DataError(f"data path {shown}: the file name is not UTF-8; rename it") from None


def local_files(path: str) -> list[Path]:
    """The data files a `--data PATH` names, in the order they are read: the file itself, or a directory's
    files with a data suffix in name order. Decided by `stat` alone, so a named pipe or a device is
    refused before anything opens it (opening a pipe waits for a writer)."""
    root = Path(path).expanduser()
    _require_utf8_name(root)
    try:
        mode = root.stat().st_mode
    except FileNotFoundError:
        raise DataError(f"data path {root} does not exist; {_HINT}") from None
    except OSError as exc:
        raise DataError(f"data path {root}: cannot read ({exc.strerror}); {_HINT}") from None
    if stat.S_ISDIR(mode):
        entries = sorted(f for f in root.iterdir() if f.suffix.lower() in FORMATS and not f.is_dir())
        for entry in entries:
            _require_utf8_name(entry)
            require_regular_file(entry, f"remove it from {root} or pass the files one by one")
        if not entries:
            raise DataError(
                f"directory {root} holds no {'/'.join(FORMATS)} files; pass a file or another folder"
            )
        return entries
    require_regular_file(root, "pass a regular file (or a directory of them) with --data PATH")
    if root.suffix.lower() not in FORMATS:
        raise DataError(f"{root}: unsupported file type; use one of {', '.join(FORMATS)}")
    return [root]


def _sources(task: TaskSpec, path: str | None, keep: set[str], stream: bool = False) -> Iterator[Source]:
    """Each source in turn, opened only when the previous one is done; see LocalFile for `keep` and
    `stream`."""
    if path is None:
        yield _hub_source(task)
        return
    for file in local_files(path):
        local = LocalFile(file, task.dataset.delimiter, keep, stream)
        yield Source(str(file), file.stem, file, local.columns, _local=local)


def fingerprint(task: TaskSpec, path: str | None) -> str:
    """What the data is, for a run's identity: a SHA-256 over the local files (names and bytes, in the
    order they are read), or the hub id, config and split for the task's hub dataset."""
    if path is None:
        spec = task.dataset
        return f"hub:{spec.hub_id}/{spec.config or 'default'}/{spec.split}"
    digest = hashlib.sha256()
    for file in local_files(path):
        digest.update(file.name.encode() + b"\0")
        with file.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()[:16]
