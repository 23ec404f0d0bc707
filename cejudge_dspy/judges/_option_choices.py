"""The values the judge's options choose from, and their defaults: pure data, no DSPy.

The judges that use them import them from here, and `JudgeOptions` (_options.py) builds the CLI's flags from
them; keeping them apart from the judges' DSPy code lets `cejudge evaluate --help` answer without
importing DSPy (tests/cli/test_startup.py).
"""

from __future__ import annotations

from typing import Any, Literal

from cejudge_dspy.errors import InputError, Option

# CE-Judge pairwise: grade each response on its own, or the paper's pairwise judgment for every pair.
Judgment = Literal["graded", "pairwise"]
JUDGMENTS: tuple[Judgment, ...] = ("graded", "pairwise")

# CE-Judge's checklist directions, and the texts its judgment reads.
Directions = Literal["both", "r2i", "i2r"]
DIRECTIONS: tuple[Directions, ...] = ("both", "r2i", "i2r")
JudgeOn = Literal["original", "translated"]
JUDGE_ON: tuple[JudgeOn, ...] = ("original", "translated")

# What decides a graded pair whose expected grades are within the grade margin (judges/cejudge/_tiebreak.py).
TieBreaker = Literal["likelihood", "orders"]
TIE_BREAKERS: tuple[TieBreaker, ...] = ("likelihood", "orders")
DEFAULT_TIE_BREAKER: TieBreaker = "likelihood"

# The tie band's width around p(A) = 0.5, in probability. 0: a tie only at exactly 0.5, i.e. the debiased
# preference always picks a side unless the two orders cancel out exactly. Chosen on dev data with `cejudge
# calibrate RUN` (`choose_tie_band` in metrics/_calibration.py: the band with the best accuracy with ties): on
# the embedded model's pairwise_en_dev runs (30 items, 6 gold ties; graded and pairwise judgment) band 0
# scored 0.433 and 0.533, every wider band less (docs/measurements/decision-rules.md).
DEFAULT_TIE_BAND = 0.0

# The gap between two responses' expected grade values that the grades must exceed to decide a pair; at or
# below it a tie-breaker decides (judges/cejudge/_tiebreak.py; by default the backbone's likelihood of each
# response). 0.1, i.e. p(A) within 0.05 of 0.5: the noise level of the embedded 1.5B backbone's grades, chosen
# before the run that tested it: every obvious pair whose verdict changed between the two engines, or between
# two runs of one engine, lay within it (docs/measurements/embedded-obvious-items.md). With the pairwise
# judgment as tie-breaker the default was 0 (it decided 3 of 5 close pairs right, the grades alone 5 of 5,
# in-sample on 20 items).
DEFAULT_GRADE_MARGIN = 0.1

# The prompt format a backbone is asked in (`--adapter`, and a panel member's `adapter`): backbones.ADAPTERS,
# spelt here because the flags and panel files are read without DSPy (tests/cli/test_adapter_flag.py checks
# the two agree).
ADAPTER_CHOICES = ("auto", "chat", "json")


# What a judge's value must be, declared once: `JudgeOptions` builds its flags and `--config` keys on these
# (_options.py adds each one's flag text and where it applies), and the judges' constructors check their
# keyword arguments through `checked`, so a Python caller, a config file and a flag meet the same bounds in
# the same words (issue 47).
RULES: dict[str, Option] = {
    "orders": Option(flag="--orders", help="", choices=("both", "single")),
    "decision": Option(flag="--decision", help="", choices=("probability", "argmax")),
    "tie_band": Option(
        flag="--tie-band",
        help="",
        kind="number",
        low=0.0,
        high=1.0,
        high_open=True,
        what="a width in probability",
    ),
    "judgment": Option(flag="--judgment", help="", choices=JUDGMENTS),
    "grade_margin": Option(
        flag="--grade-margin", help="", kind="number", low=0.0, high=1.0, what="a gap in expected grade"
    ),
    "tie_breaker": Option(flag="--tie-breaker", help="", choices=TIE_BREAKERS),
    "directions": Option(flag="--directions", help="", choices=DIRECTIONS),
    "judge_on": Option(flag="--judge-on", help="", choices=JUDGE_ON),
}


def checked(name: str, value: Any) -> Any:
    """`value` for the judge option `name` when its rule holds; else one InputError naming the option."""
    if (problem := RULES[name].problem(value)) is not None:
        raise InputError(problem, option=name)
    return value


def reference_default(mode: str) -> bool:
    """Whether a CE-Judge judge writes its own reference unless told: the pointwise judge its own
    translation of the source (measured to help on the embedded model:
    docs/measurements/embedded-obvious-items.md), the pairwise one no answer. Here, with the choices, not
    in the CE-Judge package: a run's identity records it, and is made without importing DSPy."""
    return mode == "pointwise"
