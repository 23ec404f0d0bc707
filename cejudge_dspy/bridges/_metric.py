"""`JudgeMetric`: a task's judge as a DSPy metric, for `dspy.Evaluate` and as GEPA's feedback metric.

    fields = {"instruction": "text", "response": "translation"}
    metric = JudgeMetric("literary", backbone="simulated:0", fields=fields)
    dspy.Evaluate(devset=dev, metric=metric)(program)
    dspy.GEPA(metric=metric, reflection_lm=...).compile(program, trainset=train, valset=dev)

A call takes DSPy's metric arguments `(example, pred, trace=None, pred_name=None, pred_trace=None)` and
returns `dspy.Prediction(score=..., feedback=..., result=...)`: the score in [0, 1], the feedback in
words (_feedback.py) and the JudgeResult behind both. What is read where (`fields`, each overridable):

- `instruction` from the example (default field `instruction`): what the program was asked;
- `response` from the prediction (default `response`): what the program answered;
- `reference` from the example (default `reference`), pairwise tasks only: the answer the response is
  compared with, shown to the judge as response B;
- `language` and `response_language` from the example when it has them, else the constructor's
  `language` / `response_language`, else the task's default language.

Pointwise tasks score the response on the task's scale, mapped onto [0, 1]; pairwise tasks give 1 when
the judge prefers the response, 0.5 for a tie (or orders that disagree), 0 when it prefers the reference.
A judgment the judge's output could not give (unparsed) raises `UnparsedJudgment` by default, which
`dspy.Evaluate` counts as a failed example; with `unparsed_score=` it is that score instead, with
feedback that says the judge failed, not the response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import dspy

from cejudge_dspy.bridges._feedback import feedback_text
from cejudge_dspy.bridges._judge import JUDGE_ARGS, BridgeJudge, JudgeArgs, Judgment
from cejudge_dspy.errors import CEJudgeError, InputError, known_keywords
from cejudge_dspy.tasks import TaskSpec

if TYPE_CHECKING:
    from typing_extensions import Unpack

DEFAULT_FIELDS = {
    "instruction": "instruction",
    "response": "response",
    "reference": "reference",
    "language": "language",
    "response_language": "response_language",
}


class UnparsedJudgment(CEJudgeError):
    """The judge's output could not be read, so there is no score for this response (the message says
    which stage failed and why); `result` is the unparsed JudgeResult."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


class JudgeMetric:
    """A task's judge as a DSPy metric (see the module docstring).

    `method` / `options`: the judge (`JudgeOptions`, as `evaluate` takes them). `backbone`: the judge's
    backbone, a `BackboneOptions` (`BackboneOptions(lm="hosted_vllm/M", api_base=..., temperature=...)`), a
    spec such as `"simulated:0"` or `"embedded"` (its default settings) or a `dspy.LM`; None runs the judge
    on the LM current at each call (`dspy.context(lm=...)`), which inside `dspy.Evaluate` or GEPA is the
    program's own LM. `options` and `backbone` are `BridgeJudge`'s (`JudgeArgs`); an unknown keyword is
    refused with the nearest known one."""

    @known_keywords(also=JUDGE_ARGS)
    def __init__(
        self,
        task: str | TaskSpec,
        method: str | None = None,
        *,
        fields: Mapping[str, str] | None = None,
        language: str | None = None,
        response_language: str | None = None,
        unparsed_score: float | None = None,
        **judge: Unpack[JudgeArgs],
    ) -> None:
        unknown = sorted(set(fields or {}) - set(DEFAULT_FIELDS))
        if unknown:
            raise InputError(
                f"unknown field '{unknown[0]}'; known: {', '.join(DEFAULT_FIELDS)}", field="fields"
            )
        self.judge = BridgeJudge(task, method, **judge)
        self.fields = {**DEFAULT_FIELDS, **(fields or {})}
        self.language, self.response_language = language, response_language
        self.unparsed_score = unparsed_score
        self.__name__ = f"JudgeMetric({self.judge.spec.name}, {self.judge.method})"  # what Evaluate logs

    def __call__(
        self,
        example: Any,
        pred: Any,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> dspy.Prediction:
        """Judge `pred` (against the example's reference, pairwise); see the module docstring. `trace`,
        `pred_name` and `pred_trace` are DSPy's and GEPA's: the judgment is of the program's final output,
        so one judgment answers every predictor GEPA asks about."""
        judgment = self.judge.judge(self.item(example, pred))
        return self.prediction(judgment)

    def item(self, example: Any, pred: Any) -> Any:
        """The judge's item for one example and prediction (an InputError names a missing field)."""
        f = self.fields
        item_id = str(_get(example, "id") or "example")
        if pred is None or _get(pred, f["response"]) is None:
            raise InputError(
                f"the prediction has no field '{f['response']}'; map it with fields={{'response': NAME}}",
                item=item_id,
                field="response",
            )
        for key in ("instruction", *(("reference",) if self.judge.mode == "pairwise" else ())):
            if _get(example, f[key]) is None:
                raise InputError(
                    f"the example has no field '{f[key]}'; map it with fields={{'{key}': NAME}}",
                    item=item_id,
                    field=key,
                )
        return self.judge.item(
            _get(example, f["instruction"]),
            _get(pred, f["response"]),
            reference=_get(example, f["reference"]),
            language=_get(example, f["language"]) or self.language,
            response_language=_get(example, f["response_language"]) or self.response_language,
            item_id=item_id,
        )

    def prediction(self, judgment: Judgment) -> dspy.Prediction:
        feedback = feedback_text(judgment)
        if judgment.ok:
            return dspy.Prediction(score=judgment.score, feedback=feedback, result=judgment.result)
        if self.unparsed_score is None:
            raise UnparsedJudgment(feedback, judgment.result)
        return dspy.Prediction(score=float(self.unparsed_score), feedback=feedback, result=judgment.result)


def _get(obj: Any, name: str) -> Any:
    """A field of a dspy.Example or Prediction (or a mapping, or any object), None when absent."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    try:
        return obj[name]  # Example and Prediction answer both ways; this one does not warn
    except (KeyError, TypeError, IndexError, AttributeError):
        return getattr(obj, name, None)
