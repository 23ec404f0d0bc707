"""User-facing errors.

Every error a user can cause (bad input, unknown task, unreachable backbone, missing model file)
is a `CEJudgeError` whose message is one line that says what is wrong and how to fix it. The CLI
prints that line and exits non-zero; Python callers can catch the base class.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Any


class CEJudgeError(Exception):
    """Base class: the message is a complete, one-line explanation with a fix."""

    exit_code: int = 2


class InputError(CEJudgeError, ValueError):
    """An item or argument is malformed; the message names the item and the field."""

    def __init__(
        self, message: str, *, item: str | None = None, field: str | None = None, option: str | None = None
    ) -> None:
        # A command-line flag names itself ("--response-a: is missing"); a data field is quoted; a Python
        # option as Python spells it ("tie_band: must be ..."), which the CLI re-words as its flag.
        named = (field if field.startswith("-") else f"field '{field}'") if field else (option or "")
        where = ", ".join(p for p in (f"item {item}" if item else "", named) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.item = item
        self.field = field
        self.option = option
        self.detail = message


class TaskError(CEJudgeError, KeyError):
    """Unknown or malformed task declaration."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class BackboneError(CEJudgeError):
    """The judge model cannot be built, loaded or reached."""

    exit_code = 3


class DataError(CEJudgeError):
    """A dataset file or hub id cannot be read, or lacks a mapped column."""


class TranslationError(CEJudgeError):
    """A translator could not translate (offline, unsupported language, service error)."""


def check_names(given: Iterable[str], known: Iterable[str], what: str) -> None:
    """An unknown keyword is one line naming the nearest known one: `tie_bnad` is not silently ignored."""
    known = list(known)
    for name in given:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise InputError(f"unknown {what} '{name}': {hint}known: {', '.join(known)}")


def known_keywords(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a constructor or factory) refusing a keyword it does not have with one line naming the
    nearest one it has, instead of Python's bare TypeError or a `**kwargs` that swallows it."""
    import functools
    import inspect

    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    known = [p.name for p in inspect.signature(function).parameters.values() if p.kind in named]
    known = [k for k in known if k != "self"]
    what = function.__qualname__.removesuffix(".__init__")

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        check_names(kwargs, known, f"{what} option")
        return function(*args, **kwargs)

    return checked
