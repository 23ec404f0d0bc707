"""Reading a JSON or TOML file the package is given: every way it fails is one line naming the file.

Every declaration, `--config`, `--panel`, `--program` (and its manifest), run.json, summary.json, line of
results.jsonl and `judge --file` goes through here, so one reader decides what a readable file is:

- a regular file only: a named pipe would block forever waiting for a writer and a device (/dev/zero,
  behind a symlink too) never ends. The file is opened non-blocking and checked with `fstat` on the open
  descriptor, so what is checked is what is read;
- bounded in size (`limit`): a file larger than any the package writes is refused before it fills memory;
- UTF-8, an initial BOM (as Windows editors write) dropped;
- parsed by `loads` (json.loads's value or exception, through orjson where that is the same and faster);
- parsed with nesting depth and number size caught: a parser's RecursionError (thousands of nested
  brackets) or ValueError (an integer of thousands of digits) is the same one line as a syntax error, and
  a document nested deeper than `MAX_DEPTH` is refused before the code that walks it recurses.

Errors are raised as the caller's class (`error(line)`): a task declaration's `TaskError`, a flag's
`partial(InputError, field="--panel")`, a run's `CEJudgeError`. The package's face, `cejudge_dspy.files`,
is where these and the writer are imported from (runs/ and every other layer use them).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from cejudge_dspy.errors import CEJudgeError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

Error = Callable[[str], CEJudgeError]

# No file the package reads this way is near these: a declaration or a config is kilobytes, a program some
# tens of kilobytes, a results file of 100,000 records some hundreds of megabytes.
MAX_BYTES = 64 * 2**20
MAX_RESULTS_BYTES = 8 * 2**30
MAX_DEPTH = 64

_KINDS = {
    stat.S_ISFIFO: "a named pipe",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
    stat.S_ISDIR: "a directory",
}


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a named pipe")."""
    return next((name for test, name in _KINDS.items() if test(mode)), "not a file")


def _size(n: int) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n} bytes"


def read_bytes(path: Path, error: Error, *, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path` (a symlink to one is followed), at most `limit` of them;
    anything else is `error("<path>: <why>")`."""
    try:  # O_NONBLOCK: opening a named pipe returns at once instead of waiting for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{path}: not a regular file ({file_kind(info.st_mode)})")
        if info.st_size > limit:
            raise error(f"{path}: {_size(info.st_size)}, larger than the {_size(limit)} such a file can be")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise error(f"{path}: larger than the {_size(limit)} such a file can be")
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_text(path: Path, error: Error, *, limit: int = MAX_BYTES) -> str:
    """The file's text: UTF-8, an initial BOM dropped."""
    data = read_bytes(path, error, limit=limit)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests lists and objects more than `limit` deep (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))
    return False


def _one_line(exc: BaseException) -> str:
    if "integer string conversion" in str(exc):  # Python's advice (sys.set_int_max_str_digits) is not ours
        return "a number of thousands of digits"
    return " ".join(str(exc).split())[:160]


# Every digit as "0", every other byte as a space: a run of 19 zeros is a run of 19 digits.
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_DIGITS = b"0" * 19  # an integer past 64 bits has at least 19 digits (the largest that fit: 19, 20)


def loads(text: str | bytes) -> Any:
    """`json.loads(text)`: the same value, or the same exception, in less than half the time on the lines
    the package writes (results.jsonl: 41 MB of 4,000 records in 0.25 s instead of 0.5 s).

    orjson parses first. It is stricter than json.loads (NaN and Infinity, a lone surrogate, a BOM, text
    not in UTF-8: all refused) and reads an integer past 64 bits as a float, so on any refusal, and for any
    text holding 19 digits in a row (where such an integer could be), json.loads reads the text instead:
    a value orjson gives is one json.loads gives too, and every error is json.loads's own."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if _LONG_DIGITS not in data.translate(_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def parse_json(text: str | bytes, where: str, error: Error) -> Any:
    """`text` as JSON, or `error("<where>: <why>")`: a syntax error, a nesting too deep or a number too
    large all read the same way."""
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{where}: cannot be read as JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except RecursionError:
        raise error(f"{where}: cannot be read as JSON (nested too deeply)") from None
    except ValueError as exc:  # an integer of thousands of digits; bytes that are not UTF-8
        raise error(f"{where}: cannot be read as JSON ({_one_line(exc)})") from None
    except OverflowError:  # a float literal past float's range in some paths
        raise error(f"{where}: cannot be read as JSON (a number too large)") from None
    # The brackets in the text bound the depth from above: most documents (a results line) skip the walk.
    brackets = (
        text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    )
    if brackets > MAX_DEPTH and too_deep(value):
        raise error(f"{where}: cannot be read as JSON (nested more than {MAX_DEPTH} deep)")
    return value


def read_json(path: Path, error: Error, *, limit: int = MAX_BYTES) -> Any:
    """The JSON value in the file at `path`, or one `error` line naming it."""
    return parse_json(read_text(path, error, limit=limit), str(path), error)


def read_toml(path: Path, error: Error, *, limit: int = MAX_BYTES) -> dict[str, Any]:
    """The table in the TOML file at `path` (a task declaration, a panel file, a `--config` file), or
    `error` raised with the line `<path>: <what is wrong>`."""
    text = read_text(path, error, limit=limit)
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not a TOML file ({_one_line(exc)})") from None
    except RecursionError:
        raise error(f"{path}: cannot be read as TOML (nested too deeply)") from None
    except ValueError as exc:  # a number of thousands of digits
        raise error(f"{path}: cannot be read as TOML ({_one_line(exc)})") from None
    if too_deep(value):
        raise error(f"{path}: cannot be read as TOML (nested more than {MAX_DEPTH} deep)")
    return value
