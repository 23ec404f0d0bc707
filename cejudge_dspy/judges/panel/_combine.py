"""One item's panel verdict from its members' results: pure arithmetic, no LM.

Pairwise: each member that gave a verdict votes A, B or tie. The `majority` is the verdict more than half of
the voting members gave; when none has that many the outcome is "no majority" (kept with the votes). The
panel's headline verdict is the majority, and "tie" under no majority: a panel that cannot agree does not
pick a side (a metric scores it as a tie verdict, wrong against an A or B label). Beside it: the mean of the
members' order-debiased p(A) (a member without token probabilities enters with its verdict: A 1, B 0, tie
0.5) and the verdict that mean gives with the tie band.

Pointwise: each member's score (its headline: the expected score under the probability rule). The panel's
headline score is their mean; the majority is over the scores rounded to a level.

Per item, the agreement: the share of voting members that gave the most common vote, the entropy of the
votes (bits; 0 when all agree) and, pointwise, the spread of the scores (standard deviation and range).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cejudge_dspy.judges.verdicts import DEFAULT_TIE_BAND, JudgeResult, unparsed, verdict_from_preference
from cejudge_dspy.usage import Usage

NO_MAJORITY = "no majority"
_VERDICT_P_A = {"A": 1.0, "B": 0.0, "tie": 0.5}


@dataclass
class MemberOutcome:
    """What one member gave for one item: its result (None when it errored), or the error, and its time."""

    name: str
    status: str  # "ok" | "unparsed" | "error", as a record's
    result: JudgeResult | None
    error: str | None = None
    seconds: float = 0.0
    # What the member's backbone gave it (judges.backbone_features), as a record's `features`.
    features: dict[str, bool | str | None] | None = None

    def vote(self) -> Any:
        """The member's verdict (pairwise) or score (pointwise); None when it gave none."""
        if self.status != "ok" or self.result is None:
            return None
        return self.result.verdict if self.result.mode == "pairwise" else self.result.score

    def p_a(self) -> float | None:
        """Pairwise: the member's order-debiased p(A), else its verdict as one (None: no verdict)."""
        probs = self.result.probabilities if self.result is not None else None
        if probs is not None and probs.ok and probs.p_a is not None and self.vote() is not None:
            return float(probs.p_a)
        vote = self.vote()
        return _VERDICT_P_A.get(vote) if isinstance(vote, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The member's entry in a record's `members`."""
        return {
            "name": self.name,
            "status": self.status,
            "result": self.result.to_dict() if self.result is not None else None,
            "error": self.error,
            "seconds": self.seconds,
        } | ({"features": dict(self.features)} if self.features is not None else {})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemberOutcome:
        result = data.get("result")
        return cls(
            name=str(data["name"]),
            status=str(data["status"]),
            result=JudgeResult.from_dict(result) if isinstance(result, dict) else None,
            error=data.get("error"),
            seconds=float(data.get("seconds") or 0.0),
            features=data.get("features"),
        )


def majority(votes: Sequence[Any]) -> Any:
    """The vote more than half of `votes` (the members that voted) gave, else NO_MAJORITY (None: no votes)."""
    if not votes:
        return None
    top, n = Counter(votes).most_common(1)[0]
    return top if n * 2 > len(votes) else NO_MAJORITY


def vote_entropy(votes: Sequence[Any]) -> float | None:
    """Shannon entropy (bits) of the distribution of `votes`: 0 when all agree, 1 for an even 2-way split."""
    if not votes:
        return None
    n = len(votes)
    return abs(-sum((c / n) * math.log2(c / n) for c in Counter(votes).values()))


def agreement_share(votes: Sequence[Any]) -> float | None:
    """The share of voting members that gave the most common vote (the panel's majority, when it has one)."""
    return Counter(votes).most_common(1)[0][1] / len(votes) if votes else None


def combine(
    mode: Literal["pairwise", "pointwise"],
    members: Sequence[MemberOutcome],
    tie_band: float = DEFAULT_TIE_BAND,
) -> JudgeResult:
    """The panel's result for one item (see the module docstring): the headline, and in
    `details["panel"]` the votes, the outcome, the mean rule and the item's agreement. Unparsed when no
    member gave a verdict or score."""
    usage = Usage()
    for m in members:
        if m.result is not None:
            usage.add(m.result.usage)
    voted = [m for m in members if m.vote() is not None]
    if not voted:
        reasons = "; ".join(f"{m.name}: {m.error or m.status}" for m in members)
        return unparsed(mode, "panel", f"no member gave a verdict ({reasons})", method="panel", usage=usage)
    votes = {m.name: m.vote() for m in members}
    if mode == "pairwise":
        return _pairwise(voted, votes, tie_band, usage)
    return _pointwise(voted, votes, usage)


def _pairwise(
    voted: Sequence[MemberOutcome], votes: dict[str, Any], tie_band: float, usage: Usage
) -> JudgeResult:
    ballots = [m.vote() for m in voted]
    outcome = majority(ballots)
    p_as = [p for m in voted if (p := m.p_a()) is not None]
    mean_p_a = sum(p_as) / len(p_as) if p_as else None
    panel = {
        "outcome": outcome,
        "votes": votes,
        "p_a": {m.name: m.p_a() for m in voted},
        "mean_p_a": mean_p_a,
        "mean_verdict": verdict_from_preference(mean_p_a, tie_band) if mean_p_a is not None else None,
        "tie_band": tie_band,
        "voting": len(ballots),
        "agreement": agreement_share(ballots),
        "entropy": vote_entropy(ballots),
    }
    verdict = "tie" if outcome == NO_MAJORITY else outcome
    return JudgeResult(
        mode="pairwise", status="ok", method="panel", verdict=verdict, usage=usage, details={"panel": panel}
    )


def _pointwise(voted: Sequence[MemberOutcome], votes: dict[str, Any], usage: Usage) -> JudgeResult:
    scores = [float(m.vote()) for m in voted]
    mean = sum(scores) / len(scores)
    levels = [round(s) for s in scores]
    panel = {
        "outcome": majority(levels),
        "votes": votes,
        "mean": mean,
        "sd": math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores)),
        "range": max(scores) - min(scores),
        "voting": len(scores),
        "agreement": agreement_share(levels),
        "entropy": vote_entropy(levels),
    }
    return JudgeResult(
        mode="pointwise", status="ok", method="panel", score=mean, usage=usage, details={"panel": panel}
    )
