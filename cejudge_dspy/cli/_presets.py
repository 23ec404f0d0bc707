"""`--preset paper` on `cejudge evaluate` and `cejudge judge`: the CE-Judge paper's configuration in one flag.

A preset does two things, and explicit flags win over both:
- it sets program flags (`PRESETS`), except those given on the command line;
- it judges a task with the declaration made for the preset: the one that `extends` the task with
  `preset = "paper"` (programs/literary-paper.toml, chat-paper.toml, reasoning-paper.toml). A task
  without one is refused with the list of tasks that have one.
The run identity records the resolved options as usual, and `preset` and `headline` (the metric a
pairwise run's table leads with) beside them. README "The paper's configuration" lists what still
differs from the paper's released code and why.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from cejudge_dspy.cli._program_args import ProgramFlags
from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.tasks import TaskSpec, available_tasks, load_task, preset_task


@dataclass(frozen=True)
class Preset:
    """JudgeOptions values by field name, and what a pairwise run's table leads with."""

    options: dict[str, Any]
    headline: str
    # Set only where the task has the option (pointwise tasks that declare the check; see `_applicable`).
    pointwise_options: dict[str, Any] = field(default_factory=dict)


PRESETS: dict[str, Preset] = {
    # The paper's released code: one call per stage, the pairwise judgment shown once with the better
    # response first and its written answer parsed (the argmax), Google Translate, no language or
    # likelihood check (pointwise tasks that declare them), no reference translation and the checklist
    # answers written out (pointwise tasks), the hand-written prompts, accuracy with an unparsed
    # answer counted wrong.
    "paper": Preset(
        options={
            "judgment": "pairwise",
            "orders": "single",
            "translator": "google",
            "decision": "argmax",
            "program": "base",
        },
        headline="strict",
        pointwise_options={
            "language_check": False,
            "likelihood_check": False,
            "reference": False,
            "answers": True,
        },
    ),
}


def _applicable(preset: Preset, spec: TaskSpec) -> dict[str, Any]:
    """The preset's options that the task has: the checks only where its declaration asks for them."""
    has = {
        "language_check": spec.check_response_language,
        "likelihood_check": spec.check_translation_likelihood,
        "reference": spec.mode == "pointwise",
        "answers": spec.mode == "pointwise",
    }
    return {**preset.options, **{d: v for d, v in preset.pointwise_options.items() if has.get(d, False)}}


def add_preset_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--preset",
        default=None,
        choices=tuple(PRESETS),
        help="paper: the CE-Judge paper's configuration (the task's paper declaration, the pairwise "
        "judgment once per pair, Google Translate, the argmax rule, no language or likelihood check and no "
        "reference translation, the pointwise judgment's checklist answers written out, strict accuracy "
        "first); flags given explicitly win",
    )


@dataclass(frozen=True)
class Resolved:
    """A command's task and judge once its preset applies: the declaration to judge with, the options, and
    the metric a pairwise run's table leads with."""

    task: str
    options: JudgeOptions
    headline: str | None = None


def resolve_preset(name: str | None, flags: ProgramFlags, task: str) -> Resolved:
    """Resolve `--preset` for `task`: the preset's options the user did not give (on the command line or in
    a --config file) and the name of the declaration to judge with."""
    if not name:
        return Resolved(task, flags.options())
    method = flags.given.get("method", "cejudge")
    if method != "cejudge":
        raise InputError(
            f"{name} is CE-Judge's configuration; it does not apply to --method {method}", field="--preset"
        )
    spec = preset_task(task, name)
    if spec is None:
        load_task(task)  # an unknown task name is reported as such, with its suggestions
        having = sorted(t.extends for t in available_tasks().values() if t.preset == name and t.extends)
        raise InputError(
            f"task '{task}' has no declaration for --preset {name} (one that extends it with "
            f'preset = "{name}"); tasks that have one: {", ".join(having) or "none"}',
            field="--preset",
        )
    preset = PRESETS[name]
    headline = preset.headline if spec.mode == "pairwise" else None
    return Resolved(spec.name, flags.options(_applicable(preset, spec)), headline)


def describe_preset(name: str, flags: ProgramFlags, resolved: Resolved) -> str:
    """One line for stderr: what the preset resolved to (the options that apply to the task's mode),
    and which options given explicitly overrode it."""
    preset, spec = PRESETS[name], load_task(resolved.task)
    names = list(_applicable(preset, spec))
    if spec.mode == "pointwise":
        names = [d for d in names if d not in ("judgment", "orders")]
    shown = [f"{d.replace('_', ' ')} {_spelt(getattr(resolved.options, d), d)}" for d in names]
    mine = [s for d, s in zip(names, shown, strict=True) if d in flags.given]
    head = f"preset {name}: task {resolved.task}, " + ", ".join(s for s in shown if s not in mine)
    return head + (f" (given explicitly: {', '.join(mine)})" if mine else "")


def _spelt(value: Any, name: str) -> Any:
    """A value as its flag spells it (`--language-check off`)."""
    if name in ("language_check", "likelihood_check"):
        return "on" if value is not False else "off"
    return value
