"""User-facing errors.

Every error a user can cause (bad input, unknown task, unreachable backbone, missing model file)
is a `CEJudgeError` whose message is one line that says what is wrong and how to fix it. The CLI
prints that line and exits non-zero; Python callers can catch the base class.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal


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


def known_keywords(function: Callable[..., Any] | None = None, *, also: Iterable[str] = ()) -> Any:
    """`function` (a constructor or factory) refusing a keyword it does not have with one line naming the
    nearest one it has, instead of Python's bare TypeError or a `**kwargs` that swallows it. `also`: the
    keywords its `**kwargs` passes on (a TypedDict's keys), known too; `@known_keywords(also=...)`."""
    import functools
    import inspect

    if function is None:
        return functools.partial(known_keywords, also=tuple(also))
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    known = [p.name for p in inspect.signature(function).parameters.values() if p.kind in named]
    known = [k for k in known if k != "self"] + [k for k in also if k not in known]
    what = function.__qualname__.removesuffix(".__init__")

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        check_names(kwargs, known, f"{what} option")
        return function(*args, **kwargs)

    return checked


# --- options: one declaration of an option and its bounds, for JudgeOptions and BackboneOptions ------------
# A field's `Option` says how it is spelt as a flag, its help, its kind, the bounds of a number and where it
# applies. `Option.problem` is the one bounds check every option goes through (the constructor, a flag, a
# `--config` key); `typed_mapping` reads a `--config` table's keys for any such object. Here, beside the
# errors, because every layer declares options with it and the CLI builds its flags from them without DSPy.

# How a flag is spelt: a value from `choices`, a number, free text, `--x/--no-x` (None unless given),
# `--no-x` for a field that is on by default, `--x` for one that is off by default, or `--x on|off`.
Kind = Literal["choice", "number", "text", "switch", "negated", "flag", "on_off"]


@dataclass(frozen=True)
class Option:
    """What a field of an options object is as a flag, and where it applies."""

    flag: str
    help: str
    kind: Kind = "choice"
    choices: tuple[str, ...] = ()
    group: str = "program"
    # Which runs have the option (None: all); elsewhere its identity entry is None.
    applies: Callable[..., bool] | None = None
    # The one line for an option given where it does not apply (None: accepted and unused there).
    refusal: Callable[..., str] | None = None
    # Bounds of a number, with what it is for the message; `whole`: an integer.
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    whole: bool = False
    what: str = ""
    # The value a run identity records where the option applies (default: the field's value).
    recorded: Callable[..., Any] | None = None
    # The keyword argument the factories take (default: the field's value).
    kwarg: Callable[[Any], Any] | None = None
    in_identity: bool = True
    # Given more than once, the flag names a panel's members (cli/_panel.py); a --config file has one value.
    repeatable: bool = False
    # A number or text that may be left unset (None).
    optional: bool = False

    @property
    def dest(self) -> str:
        """The argparse attribute the flag sets."""
        return self.flag.removeprefix("--").replace("-", "_")

    def describe(self) -> str:
        """A number's range as a help text says it."""
        if self.low is not None and self.high is not None and not self.low_open:
            return f"{_number(self.low)} to {_number(self.high)}"
        if self.low is not None:
            return f"{'above' if self.low_open else 'at least'} {_number(self.low)}"
        return "a finite number"

    def problem(self, value: Any) -> str | None:
        """What is wrong with `value` for this option (None: nothing), as the tail of a one-line error: the
        bounds of a number (NaN and infinities are never in them) or the choices of a choice. The one
        check the flag, a `--config` file and the constructor all go through."""
        if value is None and self.optional:
            return None
        if self.kind == "choice" and value not in self.choices:
            return f"must be one of {', '.join(self.choices)}, got {value!r}"
        if self.kind != "number":
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be a number, got {value!r}"
        if not math.isfinite(value):
            return f"must be a finite number ({self.what}), got {value}"
        if self.whole and not float(value).is_integer():
            return f"must be a whole number ({self.what}), got {value}"
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            bound = "above" if self.low_open else "at least"
            return f"must be {bound} {_number(self.low)} ({self.what}), got {value}"
        if self.high is not None and (value >= self.high if self.high_open else value > self.high):
            bound = "below" if self.high_open else "at most"
            return f"must be {bound} {_number(self.high)} ({self.what}), got {value}"
        return None


def check_options(options: Sequence[tuple[str, Option]], values: Any) -> None:
    """Each option's value on `values` (an options object) through `Option.problem`: the first problem is
    one InputError naming the option as Python spells it (the CLI names its flag instead)."""
    for name, opt in options:
        if (problem := opt.problem(getattr(values, name))) is not None:
            raise InputError(problem, option=name)


class DeclaredOptions:
    """Base of a frozen dataclass of options whose every field carries its `Option` (`metadata["option"]`):
    `JudgeOptions` and `BackboneOptions`. Making one runs the one bounds check of every field, so a Python
    caller, a flag and a `--config` key meet the same rule: a NaN never reaches a backbone or a run.json."""

    def __post_init__(self) -> None:
        check_options(self.options(), self)

    @classmethod
    def options(cls) -> list[tuple[str, Option]]:
        """(field name, Option) in declaration order."""
        return [(f.name, f.metadata["option"]) for f in fields(cls)]  # type: ignore[arg-type]


def typed_mapping(
    options: Sequence[tuple[str, Option]], values: Mapping[str, Any], source: str
) -> dict[str, Any]:
    """A `--config` file's table for these options: field names as keys, TOML values typed as the fields
    are; an unknown key (with the nearest known one) or a wrong value is one line naming `source`."""
    known = dict(options)
    try:
        check_names(values, list(known), "option")
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    chosen: dict[str, Any] = {}
    for key, value in values.items():
        chosen[key] = _typed(key, known[key], value, source)
        if (problem := known[key].problem(chosen[key])) is not None:
            raise InputError(f"{source}: option '{key}' {problem}")
    return chosen


def _typed(key: str, opt: Option, value: Any, source: str) -> Any:
    """A config file's value for one option, checked against the option's kind."""

    def wrong(expected: str) -> InputError:
        return InputError(f"{source}: option '{key}' must be {expected}, got {value!r}")

    if opt.kind in ("switch", "negated", "flag", "on_off"):
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if opt.kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise wrong("a number")
        return (int(value) if float(value).is_integer() else value) if opt.whole else float(value)
    if not isinstance(value, str):
        raise wrong("a string")
    if opt.kind == "choice" and value not in opt.choices:
        raise wrong("one of " + ", ".join(opt.choices))
    return value


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
