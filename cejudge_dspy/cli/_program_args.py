"""The program flags of `cejudge judge` and `cejudge evaluate`, built from the judge's options object
(`JudgeOptions`: one field per option, with its flag, help and kind), and `--config FILE`, a TOML file of
the same options that the flags given on the command line override."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import fields
from functools import partial
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import InputError
from cejudge_dspy.files import read_toml
from cejudge_dspy.judges import JudgeOptions, Option

_GROUPS = {"program": "program", "ablations": "ablations (CE-Judge)"}


def add_program_args(p: argparse.ArgumentParser, options: type[JudgeOptions] = JudgeOptions) -> None:
    """The program flags: `--task`, `--config` and one flag per field of `options`."""
    groups = {key: p.add_argument_group(title) for key, title in _GROUPS.items()}
    groups["program"].add_argument("--task", default=None, help="declared task (see `cejudge tasks`)")
    groups["program"].add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="a TOML file of judge options (the flags' names with underscores, e.g. tie_band = 0.1, "
        "concepts = false); flags given on the command line win",
    )
    defaults = options()
    for f in fields(options):
        opt: Option = f.metadata["option"]
        _add_flag(groups[opt.group], opt, getattr(defaults, f.name))


class Repeatable(argparse.Action):
    """A flag that may be given more than once (`--lm a --lm b`, `--method cejudge --method direct`): the
    attribute holds the last value given, as a plain flag's would, and `<dest>_all` every value in order,
    which `evaluate` and `judge` read as a panel (cli/_panel.py)."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option: Any = None) -> None:
        setattr(
            namespace, f"{self.dest}_all", [*(getattr(namespace, f"{self.dest}_all", None) or []), values]
        )
        setattr(namespace, self.dest, values)


def _add_flag(g: Any, opt: Option, default: Any) -> None:
    if opt.repeatable:
        g.add_argument(opt.flag, default=default, action=Repeatable, help=opt.help)
    elif opt.kind == "choice":
        g.add_argument(opt.flag, default=default, choices=opt.choices, help=opt.help)
    elif opt.kind == "number":
        g.add_argument(opt.flag, type=float, default=default, help=opt.help)
    elif opt.kind == "text":
        g.add_argument(opt.flag, default=default, help=opt.help)
    elif opt.kind == "switch":
        g.add_argument(opt.flag, action=argparse.BooleanOptionalAction, default=None, help=opt.help)
    elif opt.kind == "negated":
        g.add_argument(opt.flag, action="store_true", help=opt.help)
    else:  # on_off
        g.add_argument(opt.flag, default=None, choices=("on", "off"), help=opt.help)


def judge_options(args: argparse.Namespace, options: type[JudgeOptions] = JudgeOptions) -> JudgeOptions:
    """The judge's options a command's flags hold (the same on the driver and on every Ray worker)."""
    return options.from_namespace(args)


def option_dests() -> list[str]:
    """The argparse attributes of the judge's options."""
    return [opt.dest for _, opt in JudgeOptions.options()]


def apply_config(args: argparse.Namespace, given: set[str]) -> set[str]:
    """Set the options of `args.config` (a TOML file) that the command line did not give; returns the
    attributes it set, which a preset then leaves alone (flags > config file > preset > defaults)."""
    path = Path(args.config)
    table = read_toml(path, partial(InputError, field="--config"))
    options = JudgeOptions.from_mapping(table, str(path))
    chosen = set(table)
    set_here: set[str] = set()
    for name, opt in JudgeOptions.options():
        if name not in chosen or opt.dest in given:
            continue
        value = getattr(options, name)
        if opt.kind == "negated":
            value = not value
        elif opt.kind == "on_off":
            value = "on" if value else "off"
        setattr(args, opt.dest, value)
        set_here.add(opt.dest)
    return set_here


def given_dests(parser: argparse.ArgumentParser, argv: Sequence[str], dests: Sequence[str]) -> set[str]:
    """The `dests` of `parser` (a command's parser) that `argv` (the command's own arguments) sets.

    Parses again into a namespace whose dests hold a sentinel: argparse fills in a default only for a dest
    the namespace lacks, so a dest that lost its sentinel was given, however it was spelt
    (`--translator=llm`, an abbreviation)."""
    unset = object()
    namespace = argparse.Namespace(**dict.fromkeys(dests, unset))
    parser.parse_known_args(list(argv), namespace=namespace)
    return {dest for dest in dests if getattr(namespace, dest) is not unset}
