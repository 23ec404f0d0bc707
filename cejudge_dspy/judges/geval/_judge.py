"""G-Eval, the baseline the CheckEval paper compares against: one Likert score per dimension of a CheckEval
task, read from the judge's token probabilities (Liu et al., 2023, "G-Eval: NLG Evaluation using GPT-4
with Better Human Alignment").

  per dimension, all at once: rate(task, dimension, its definition and aspects, scale, texts) -> score
  dimension score = the sum over the scale's levels of level * P(level) at the score token (argmax kept)
  item score = the mean over the dimensions (none while a dimension has no score: a partial mean is
  another scale)

Records look like CheckEval's (`dimension_scores` per dimension, `score` overall), so `cejudge evaluate`'s
per-dimension agreement tables read them unchanged. `details["dimensions"]` keeps, per dimension, the argmax
level, the distribution over the levels and the expected score, or why the distribution was not read.

Where this differs from the paper's G-Eval: no auto-generated chain-of-thought evaluation steps (the task's
declared sub-dimensions stand in for them, so G-Eval and CheckEval see the same criteria) and the
distribution comes from one call's token probabilities instead of being estimated from 20 samples.
The stage attribute `rate` keys a saved program's JSON: keep its name.
"""

from __future__ import annotations

import asyncio
from typing import Any

import dspy

from cejudge_dspy.data import normalize_language, require_text
from cejudge_dspy.errors import TaskError
from cejudge_dspy.judges._machinery._probability_readings import check_decision, score_probabilities
from cejudge_dspy.judges._machinery._stage import StageFailure
from cejudge_dspy.judges._machinery._sync_bridge import run_sync
from cejudge_dspy.judges.cejudge import TASK_DESC, ScoreJudgment
from cejudge_dspy.judges.verdicts import UNAVAILABLE, Decision, JudgeResult, Probabilities, decide, unparsed
from cejudge_dspy.tasks import Dimension, TaskSpec, load_task
from cejudge_dspy.usage import Usage, about, collecting

DEFAULT_LEVELS = (1, 5)  # G-Eval's SummEval scale, for a task that declares no [scale]
_WORDS_5 = (
    ("Very poor", "hardly met"),
    ("Poor", "met in few respects"),
    ("Fair", "met in some respects, with clear lapses"),
    ("Good", "met in most respects, with minor lapses"),
    ("Excellent", "fully met"),
)


class RateDimension(dspy.Signature):
    """Rate one response on one evaluation dimension with a single level of the Likert scale given.

    Read the instruction (the source or context the response is based on) and the response. Judge only the
    dimension named here, as its definition and aspects describe; every other quality of the text is rated
    separately, so ignore it. Give the one level of the scale that fits the response best on this
    dimension."""

    task: str = dspy.InputField(desc=TASK_DESC)
    dimension: str = dspy.InputField(desc="The evaluation dimension to rate.")
    dimension_definition: str = dspy.InputField(desc="What the dimension means, as declared by the task.")
    aspects: list[str] = dspy.InputField(
        desc="What to check for this dimension, one aspect each (the task's sub-dimensions)."
    )
    scale: dict[int, str] = dspy.InputField(desc="Every level of the scale with what it means here.")
    instruction: str = dspy.InputField(
        desc="The source or context, e.g. the summarised article or the dialogue."
    )
    response: str = dspy.InputField(desc="The response to rate.")
    score: int = dspy.OutputField(desc="One integer level from the scale.")


class Rate(ScoreJudgment):
    """One Likert score; the ScoreJudgment check rejects a level outside the scale and asks for logprobs."""

    signature = RateDimension
    label = "Likert score"


def likert_scale(spec: TaskSpec, dim: Dimension) -> dict[int, str]:
    """The levels of the task's [scale] (1-5 without one), each described for this dimension: the task's
    own level descriptions judge overall quality, which would pull every dimension towards one score."""
    lo, hi = spec.scale_range if spec.scale else DEFAULT_LEVELS
    levels = list(range(lo, hi + 1))
    name = dim.name
    if len(levels) == len(_WORDS_5):
        pairs = zip(levels, _WORDS_5, strict=True)
        return {lv: f"{word} {name}: the definition is {how}." for lv, (word, how) in pairs}
    out = {lv: f"Between the levels around it; a higher level means better {name}." for lv in levels}
    out[lo] = f"The worst {name}: the definition is not met."
    out[hi] = f"The best {name}: the definition is fully met."
    return out


class GEvalJudge(dspy.Module):
    """Score one response with one Likert call per dimension of a CheckEval task (see the module
    docstring)."""

    def __init__(self, task: str | TaskSpec = "summeval", decision: Decision = "probability") -> None:
        super().__init__()
        self.spec = load_task(task)
        self.decision = check_decision(decision)
        if self.spec.mode != "pointwise" or not self.spec.dimensions:
            raise TaskError(
                f"task '{self.spec.name}' declares no [[dimensions]]; G-Eval rates each dimension of a "
                "pointwise task (use --method direct for one overall score)"
            )
        self.rate = Rate()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        instruction, response = require_text(instruction, "instruction"), require_text(response, "response")
        normalize_language(language)
        dims = self.spec.dimensions
        usage = Usage()
        with collecting(usage, expected_calls=len(dims)):  # one call per dimension
            preds = await asyncio.gather(*(about(d.name, self._rate(d, instruction, response)) for d in dims))
        rows: dict[str, dict[str, Any]] = {}
        failures: dict[str, str] = {}
        for dim, (pred, failure) in zip(dims, preds, strict=True):
            if pred is None:
                failures[dim.name] = str(failure)
                continue
            levels = sorted(likert_scale(self.spec, dim))
            probs = score_probabilities(pred, levels)
            rows[dim.name] = {
                "score": pred.score,
                "expected": probs.score,
                "distribution": probs.distribution,
                "probabilities": probs.status,
                "reason": probs.reason,
            }
        details = {"dimensions": rows, "failures": failures, "levels": list(self._levels())}
        if not rows:
            reason = next(iter(failures.values()))
            return unparsed(
                "pointwise", "Rate", reason, method="geval", usage=usage, details=details
            ).to_prediction()
        argmax = {name: row["score"] for name, row in rows.items()}
        result = JudgeResult(
            mode="pointwise",
            status="ok",
            method="geval",
            score=_mean(argmax, len(dims)),
            dimension_scores=argmax,
            usage=usage,
            details=details,
            probabilities=geval_probabilities(rows, len(dims)),
        )
        return decide(result, self.decision).to_prediction()

    async def _rate(
        self, dim: Dimension, instruction: str, response: str
    ) -> tuple[dspy.Prediction | None, str | None]:
        """(prediction, None), or (None, why) when the call failed: that dimension stays unscored."""
        try:
            pred = await self.rate.acall(
                task=self.spec.task,
                dimension=dim.name,
                dimension_definition=dim.definition.strip(),
                aspects=[f"{s.name}: {s.definition.strip()}" for s in dim.subdimensions],
                scale=likert_scale(self.spec, dim),
                instruction=instruction,
                response=response,
            )
        except StageFailure as failure:
            return None, failure.reason
        return pred, None

    def _levels(self) -> tuple[int, int]:
        return self.spec.scale_range if self.spec.scale else DEFAULT_LEVELS

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**kwargs))


def _mean(scores: dict[str, float], n_dimensions: int) -> float | None:
    """The item score: the mean over every dimension, or None while one has no score."""
    return sum(scores.values()) / n_dimensions if len(scores) == n_dimensions else None


def geval_probabilities(rows: dict[str, dict[str, Any]], n_dimensions: int) -> Probabilities:
    """The expected score per dimension and their mean. A dimension whose distribution was not read keeps
    its argmax level there (as a pointwise judge keeps its argmax score), and `reason` names it."""
    statuses = {row["probabilities"] for row in rows.values()}
    if statuses == {"unavailable"}:
        reasons = {str(row["reason"] or UNAVAILABLE) for row in rows.values()}
        return Probabilities(status="unavailable", reason=min(reasons, key=lambda w: (w == UNAVAILABLE, w)))
    if "ok" not in statuses:
        why = "; ".join(f"{name}: {row['reason']}" for name, row in rows.items())
        return Probabilities(status="not_located", reason=why)
    read = {name: row["probabilities"] == "ok" for name, row in rows.items()}
    dims = {name: row["expected"] if read[name] else row["score"] for name, row in rows.items()}
    unread = ", ".join(f"{name} ({row['reason']})" for name, row in rows.items() if not read[name])
    reason = f"expected score not read for {unread}; the argmax level kept there" if unread else None
    return Probabilities(status="ok", reason=reason, score=_mean(dims, n_dimensions), dimension_scores=dims)


def geval_program(spec: TaskSpec, decision: Decision = "probability") -> dspy.Module:
    """The `geval` method: one probability-weighted Likert score per dimension."""
    return GEvalJudge(spec, decision=decision)
