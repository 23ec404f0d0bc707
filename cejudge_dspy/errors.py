"""User-facing errors.

Every error a user can cause (bad input, unknown task, unreachable backbone, missing model file)
is a `CEJudgeError` whose message is one line that says what is wrong and how to fix it. The CLI
prints that line and exits non-zero; Python callers can catch the base class.
"""

from __future__ import annotations


class CEJudgeError(Exception):
    """Base class: the message is a complete, one-line explanation with a fix."""

    exit_code: int = 2


class InputError(CEJudgeError, ValueError):
    """An item or argument is malformed; the message names the item and the field."""

    def __init__(self, message: str, *, item: str | None = None, field: str | None = None) -> None:
        # A command-line flag names itself ("--response-a: is missing"); a data field is quoted.
        named = (field if field.startswith("-") else f"field '{field}'") if field else ""
        where = ", ".join(p for p in (f"item {item}" if item else "", named) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.item = item
        self.field = field


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
