"""The ranking term of the pointwise tuning metric: is this item ordered right against the training items?

A pointwise task is measured by a rank correlation (Kendall tau-b for `literary`), which only asks whether
the judge orders items as people do. Closeness to the human score does not: on the shipped `literary`
program, tuning raised per-item closeness while dev concordance fell from 0.200 to -0.600. But optimizers
score one item at a time (DSPy metrics see one example and its prediction), so the batch's own Kendall tau
is out of reach. What is in reach is a fixed reference: before tuning, the starting program scores every
training item once; those (human score, judge score) pairs are the *anchors*. An item's ranking term is
then the share of anchors it is ordered right against: its score above an anchor's score exactly when its
human score is above the anchor's (a tied judge score counts half; anchors with the same human score, the
item itself, and anchors the starting program left unparsed do not count). Summed over items, that is a
concordance estimate on the judge's own scale, so a candidate gains by ordering items better, not by moving
every score towards the middle. The anchors stay fixed for the whole run, so candidates are compared on the
same footing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# The metric is RANK_WEIGHT x this term + (1 - RANK_WEIGHT) x closeness: ranking first, closeness (which
# keeps the scores on the task's scale) a secondary term.
RANK_WEIGHT = 0.75


@dataclass(frozen=True)
class Anchor:
    """A training item as the starting program scored it."""

    id: str
    gold: float
    score: float


@dataclass(frozen=True)
class Ranking:
    """An item against the anchors: `value` in 0..1 over `compared` anchors; the misordered ones."""

    value: float
    compared: int
    too_high: tuple[Anchor, ...] = ()  # people rated these higher, the judge scored the item above them
    too_low: tuple[Anchor, ...] = ()  # people rated these lower, the judge scored the item below them


def against_anchors(item_id: str, gold: float, score: float, anchors: Sequence[Anchor]) -> Ranking | None:
    """The item's ranking term, or None when no anchor can be compared with it."""
    total, compared = 0.0, 0
    too_high: list[Anchor] = []
    too_low: list[Anchor] = []
    for a in anchors:
        if a.id == item_id or a.gold == gold:
            continue
        compared += 1
        if score == a.score:
            total += 0.5
        elif (score > a.score) == (gold > a.gold):
            total += 1.0
        elif score > a.score:
            too_high.append(a)
        else:
            too_low.append(a)
    if not compared:
        return None
    return Ranking(total / compared, compared, tuple(too_high), tuple(too_low))


def describe(ranking: Ranking, limit: int = 3) -> str:
    """One feedback line for GEPA's reflection: how the item ranks and against which anchors it is wrong."""
    text = (
        f"Ranking: ordered right against {ranking.value:.2f} of {ranking.compared} training items "
        "(their scores from the starting program)."
    )

    def some(anchors: tuple[Anchor, ...]) -> str:
        shown = ", ".join(f"human {a.gold:g} / judge {a.score:.2f}" for a in anchors[:limit])
        return shown + (f" and {len(anchors) - limit} more" if len(anchors) > limit else "")

    if ranking.too_high:
        text += f" Scored above items people rated higher: {some(ranking.too_high)}."
    if ranking.too_low:
        text += f" Scored below items people rated lower: {some(ranking.too_low)}."
    return text
