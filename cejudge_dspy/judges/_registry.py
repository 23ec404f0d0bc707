"""Judging methods by name: `--method cejudge|direct|checkeval|geval|likelihood`.

A method is a factory `(task spec, **options) -> dspy.Module` whose `acall(**item.inputs())` returns a
prediction with `.result` (a JudgeResult). `METHODS` is the whole table: adding a method is one line
here and one factory beside its judge. Options are the factory keywords of `JudgeOptions`: an unknown
name is refused with the nearest known one, and a factory is given the options it takes. A method that needs
more of a backbone than text generation is in `SCORING_METHODS`, and `check_method_backbone` refuses it
from the `--lm` spec alone, before a model loads or a run directory opens.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.backbones import is_local
from cejudge_dspy.errors import InputError, TaskError, check_names
from cejudge_dspy.judges._machinery._saved_programs import default_path, load_into, program_identity, resolve
from cejudge_dspy.judges._options import JudgeOptions
from cejudge_dspy.tasks import TaskSpec, load_task

if TYPE_CHECKING:
    import dspy

Factory = Callable[..., "dspy.Module"]

# Each method's factory by where it lives, imported when a program is built: checking a run's options,
# naming its program and resuming a finished run need none of them, nor DSPy (issue 49).
METHODS: dict[str, str] = {
    "cejudge": "cejudge_dspy.judges.cejudge:cejudge_program",
    "direct": "cejudge_dspy.judges.direct:direct_program",
    "checkeval": "cejudge_dspy.judges.checkeval:checkeval_program",
    "geval": "cejudge_dspy.judges.geval:geval_program",
    "likelihood": "cejudge_dspy.judges.likelihood:likelihood_program",
}
# Methods that score a given text with the backbone: local GGUF models can, a server at --api-base may.
SCORING_METHODS = frozenset({"likelihood"})


def method_names() -> list[str]:
    return sorted(METHODS)


def factory_of(method: str) -> Factory:
    """The factory of a method in METHODS (its module imported now)."""
    module, _, name = METHODS[method].partition(":")
    factory: Factory = getattr(importlib.import_module(module), name)
    return factory


def check_method_backbone(method: str, lm: str, api_base: str | None = None) -> None:
    """One line (on `--lm`) when `method` needs a backbone that can score a given text and the spec `lm`
    names one that never can: the simulated backbone, or a hosted API (no `api_base`). Nothing is loaded
    or asked: a server at `api_base` is probed on first use, and the judge refuses it then if it cannot."""
    if method not in SCORING_METHODS or is_local(lm) or (api_base and not str(lm).startswith("simulated")):
        return
    from cejudge_dspy.judges.likelihood import SCORING_BACKBONES

    raise InputError(
        f"backbone '{lm}' cannot score a given text, which --method {method} needs ({SCORING_BACKBONES})",
        field="--lm",
    )


def build_program(task: str | TaskSpec, method: str = "cejudge", **options: Any) -> dspy.Module:
    """Build the hand-written program for a task and method. `options` are JudgeOptions' factory keywords
    (`tie_band=0.2`); an unknown one is refused with the nearest known name, and each method is given
    those it has (the direct judge has no translator)."""
    spec = load_task(task)
    if method not in METHODS:
        close = difflib.get_close_matches(method, list(METHODS), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise TaskError(f"unknown method '{method}': {hint}available: {', '.join(sorted(METHODS))}")
    factory = factory_of(method)
    known = dict.fromkeys([*JudgeOptions().program_kwargs(), *_keywords(factory)])
    check_names(options, known, "judge option")
    return factory(spec, **{k: v for k, v in options.items() if k in _keywords(factory)})


def _keywords(factory: Factory) -> list[str]:
    return [p for p in inspect.signature(factory).parameters if p != "spec"]


def load_program(task: str | TaskSpec, path: str | Path | None = None, **options: Any) -> dspy.Module:
    """The task's base program (`build_program`) with a saved state loaded after checking it."""
    spec = load_task(task)
    return load_into(build_program(spec, "cejudge", **options), spec, path or default_path(spec))


def program_for_task(task: str | TaskSpec, program: str | Path = "auto", **options: Any) -> dspy.Module:
    """ "auto": `optimized/<task>.json` when it exists, else the base program; "base"; or a path."""
    path = resolve(task, program)
    return build_program(task, "cejudge", **options) if path is None else load_program(task, path, **options)


def run_program(
    task: str | TaskSpec,
    method: str = "cejudge",
    program: str | Path = "auto",
    *,
    options: JudgeOptions | None = None,
    **kwargs: Any,
) -> dspy.Module:
    """The program a run judges with: for CE-Judge, what `program` names (auto, base or a saved state);
    the other methods have only their hand-written program. `cejudge evaluate` and every Ray worker of a
    distributed run build it here, so both build the same program from the same flags.

    `options` (a JudgeOptions, checked against the task) gives the method, the program and the factory's
    keyword arguments at once; `kwargs` are the factory's keyword arguments as they are."""
    if options is not None:
        options.check(load_task(task))
        method, program, kwargs = options.method, options.program, {**options.program_kwargs(), **kwargs}
    if method == "cejudge" and str(program) != "base":
        return program_for_task(task, program=program, **kwargs)
    return build_program(task, method, **kwargs)


def run_program_identity(task: str | TaskSpec, method: str = "cejudge", program: str | Path = "auto") -> str:
    """What `run_program` resolves to, for run records: "base", or a tuned state file with its hash."""
    return program_identity(task, program) if method == "cejudge" else "base"
