"""The values the judge's options choose from, and their defaults: pure data, no DSPy.

The judges that use them import them from here, and `JudgeOptions` (_options.py) builds the CLI's flags from
them; keeping them apart from the judges' DSPy code lets `cejudge evaluate --help` answer without
importing DSPy (tests/cli/test_startup.py).
"""

from __future__ import annotations

from typing import Literal

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
