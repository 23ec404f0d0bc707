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

from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import TaskSpec, available_tasks, load_task, preset_task


@dataclass(frozen=True)
class Preset:
    """Flag values by argparse dest, and what a pairwise run's table leads with."""

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
            "language_check": "off",
            "likelihood_check": "off",
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
    p.set_defaults(preset_parser=p)


def apply_preset(args: argparse.Namespace, task: str) -> str:
    """Resolve `--preset` for `task`: set the preset's options the user did not give (`args.given_flags`,
    filled by the entry point: flags on the command line or in a --config file) and return the name of
    the declaration to judge with."""
    args.headline = None
    name = getattr(args, "preset", None)
    if not name:
        return task
    if args.method != "cejudge":
        raise InputError(
            f"{name} is CE-Judge's configuration; it does not apply to --method {args.method}",
            field="--preset",
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
    preset, given = PRESETS[name], getattr(args, "given_flags", set())
    options = _applicable(preset, spec)
    for dest, value in options.items():
        if dest not in given:
            setattr(args, dest, value)
    args.headline = preset.headline if spec.mode == "pairwise" else None
    return spec.name


def describe_preset(args: argparse.Namespace, task: str) -> str:
    """One line for stderr: what the preset resolved to (the options that apply to the task's mode),
    and which flags given explicitly overrode it."""
    preset, spec = PRESETS[args.preset], load_task(task)
    given = getattr(args, "given_flags", set())
    dests = list(_applicable(preset, spec))
    if spec.mode == "pointwise":
        dests = [d for d in dests if d not in ("judgment", "orders")]
    shown = [f"{d.replace('_', ' ')} {getattr(args, d)}" for d in dests]
    mine = [s for d, s in zip(dests, shown, strict=True) if d in given]
    head = f"preset {args.preset}: task {task}, " + ", ".join(s for s in shown if s not in mine)
    return head + (f" (given explicitly: {', '.join(mine)})" if mine else "")
