"""The program flags of `cejudge judge` and `cejudge evaluate`, built from the judge's options object
(`JudgeOptions`: one field per option, with its flag, help and kind), and `--config FILE`, a TOML file of
the same options that the flags given on the command line override.

A program flag has no argparse default: the namespace holds only the flags given, so `program_flags` knows
which they are without parsing twice, and fills the rest from a --config file, then a preset, then
JudgeOptions' defaults (flags > config file > preset > defaults)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, fields
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
        help="a TOML file of judge and backbone options (the flags' names with underscores, e.g. tie_band = "
        "0.1, concepts = false, temperature = 0.2); flags given on the command line win",
    )
    for f in fields(options):
        add_flag(groups[f.metadata["option"].group], f.metadata["option"])
    p.set_defaults(method_all=None)


class Repeatable(argparse.Action):
    """A flag that may be given more than once (`--lm a --lm b`, `--method cejudge --method direct`): the
    attribute holds the last value given, as a plain flag's would, and `<dest>_all` every value in order,
    which `evaluate` and `judge` read as a panel (cli/_panel.py)."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option: Any = None) -> None:
        setattr(
            namespace, f"{self.dest}_all", [*(getattr(namespace, f"{self.dest}_all", None) or []), values]
        )
        setattr(namespace, self.dest, values)


def add_flag(g: Any, opt: Option) -> None:
    """The flag of one option (a field of JudgeOptions or BackboneOptions), its range in its help."""
    unset = argparse.SUPPRESS  # the namespace holds an option's flag only when it is given
    helped = opt.help.replace("{range}", opt.describe())
    if opt.repeatable:
        g.add_argument(opt.flag, default=unset, action=Repeatable, help=helped)
    elif opt.kind == "choice":
        g.add_argument(opt.flag, default=unset, choices=opt.choices, help=helped)
    elif opt.kind == "number":
        g.add_argument(opt.flag, type=int if opt.whole else float, default=unset, help=helped)
    elif opt.kind == "text":
        g.add_argument(opt.flag, default=unset, help=helped)
    elif opt.kind == "switch":
        g.add_argument(opt.flag, action=argparse.BooleanOptionalAction, default=unset, help=helped)
    elif opt.kind in ("negated", "flag"):
        g.add_argument(opt.flag, action="store_true", default=unset, help=helped)
    else:  # on_off
        g.add_argument(opt.flag, default=unset, choices=("on", "off"), help=helped)


def given_options(args: argparse.Namespace, options: Any = JudgeOptions) -> dict[str, Any]:
    """The options (of JudgeOptions or BackboneOptions) the command line gave, by field name, typed as the
    fields are."""
    flags, values = vars(args), {}
    for name, opt in options.options():
        if opt.dest not in flags:
            continue
        raw = flags[opt.dest]
        values[name] = not raw if opt.kind == "negated" else raw == "on" if opt.kind == "on_off" else raw
    return values


def config_options(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The judge's and the backbone's options of a `--config` TOML file, by field name; a wrong key or
    value is one line naming the file and the key (the nearest known key of either for a typo)."""
    from cejudge_dspy.backbones import BackboneOptions
    from cejudge_dspy.errors import typed_mapping

    table = read_toml(Path(path), partial(InputError, field="--config"))
    typed_mapping([*JudgeOptions.options(), *BackboneOptions.options()], table, str(path))
    lm = {k: v for k, v in table.items() if k in dict(BackboneOptions.options())}
    judge = JudgeOptions.from_mapping({k: v for k, v in table.items() if k not in lm}, str(path))
    backbone = BackboneOptions.from_mapping(lm, str(path))
    return {name: getattr(judge, name) for name in table if name not in lm}, {
        name: getattr(backbone, name) for name in lm
    }


@dataclass(frozen=True)
class ProgramFlags:
    """The program flags of a command, read once: the task, the judge's options from the flags and the
    --config file (`given`, by field name) and every --method given (several: a panel)."""

    task: str | None
    given: Mapping[str, Any]
    methods: list[str]
    cls: type[JudgeOptions] = JudgeOptions

    def options(self, preset: Mapping[str, Any] | None = None) -> JudgeOptions:
        """The judge's options: these flags over the preset's values over the defaults; a value out of its
        bounds is one line naming its flag."""
        try:
            return self.cls(**{**(preset or {}), **self.given})
        except InputError as exc:
            raise as_flag(exc) from None


def program_flags(args: argparse.Namespace, cls: type[JudgeOptions] = JudgeOptions) -> ProgramFlags:
    """The command's program flags: given flags win over a --config file's options."""
    given = given_options(args, cls)
    if args.config:
        given = {**config_options(args.config)[0], **given}
    methods = list(dict.fromkeys(args.method_all or [given.get("method", "cejudge")]))
    return ProgramFlags(args.task, given, methods, cls)


def judge_options(args: argparse.Namespace, cls: type[JudgeOptions] = JudgeOptions) -> JudgeOptions:
    """The judge's options a command's flags hold (flags over a --config file, no preset)."""
    return program_flags(args, cls).options()


# Library options whose flag is not `--` + the name with dashes (the judge's: their Option's flag).
_FLAGS = {"languages": "--language", "subsets": "--subset", "run": "run"}


def flag_of(option: str) -> str:
    """The flag of a library option (`tie_band` -> `--tie-band`, `concepts` -> `--no-concepts`)."""
    from cejudge_dspy.backbones import BackboneOptions

    known = {name: opt.flag for name, opt in [*JudgeOptions.options(), *BackboneOptions.options()]}
    return known.get(option) or _FLAGS.get(option) or "--" + option.replace("_", "-")


def as_flag(exc: InputError) -> InputError:
    """The library's error naming an option as Python spells it (`tie_band`), naming its flag instead."""
    return exc if exc.option is None else InputError(exc.detail, item=exc.item, field=flag_of(exc.option))
