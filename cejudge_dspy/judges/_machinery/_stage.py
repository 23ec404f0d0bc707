"""The stage machinery every method shares: one typed signature per stage, plus the output checks
DSPy's types cannot express.

A stage call either returns a checked `dspy.Prediction` or raises `StageFailure` with the reason;
the judges turn a failure into an explicit unparsed outcome. An answer the backbone cut at the token
budget (`backbones.AnswerCutShort`, finish_reason "length") is such a failure, whatever it would parse
as. A malformed output is retried once through the other adapter (ChatAdapter already falls back to
JSONAdapter on a parse error, so a parse error under ChatAdapter is final; a failed check, or a failure
under any other adapter, gets one more try through the other one).
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from typing import Any, Literal

import dspy
from dspy.utils.exceptions import AdapterParseError

from cejudge_dspy.backbones import AnswerCutShort, error_line, whole_answers
from cejudge_dspy.errors import BackboneError
from cejudge_dspy.judges._machinery._memo_adapters import MEMO_ADAPTERS, memo_adapter
from cejudge_dspy.judges._machinery._probability_readings import (
    asks_probabilities,
    logprob_config,
    mark_unavailable,
    order_reading,
    refuses_logprobs,
    tokens_of,
)
from cejudge_dspy.judges.verdicts import OrderResult, swap_verdict
from cejudge_dspy.usage import record_call


class StageFailure(Exception):
    """A stage's output could not be parsed or failed its check, after the retry."""

    def __init__(self, stage: str, reason: str, raw: str | None = None) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason
        self.raw = raw


class Stage(dspy.Module):
    """A `dspy.Predict` over one signature with an output check and one retry through another adapter."""

    signature: type[dspy.Signature]
    label: str = ""  # what the stage does, in words, for progress messages (default: the class name)
    # True for the judgments: ask the backbone for token logprobs (see _probability_readings.py); the
    # prediction then carries `tokens` (a list of TokenChoice, or None when the backbone gives none).
    probabilities: bool = False
    # An output budget sized from the stage's measured outputs (None: the backbone's --max-tokens). It
    # only ever lowers the backbone's budget: a small model that loops at temperature 0 stops early
    # instead of decoding until --max-tokens and failing to parse anyway.
    max_tokens: int | None = None

    def __init__(self) -> None:
        super().__init__()
        self.predict = dspy.Predict(self.signature)

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        """Validate and normalise `pred`; raise ValueError with a reason to reject it."""
        return pred

    async def aforward(self, **inputs: Any) -> dspy.Prediction:
        name = type(self).__name__
        if self.predict.lm is None and dspy.settings.lm is None:
            raise BackboneError(
                "no backbone is configured for this judge: wrap the call in "
                "`with cejudge_dspy.use_backbone('embedded'):` (or dspy.context(lm=...)); "
                "dspy.context does not reach raw threads, so enter it inside each worker thread"
            )
        current = dspy.settings.adapter or dspy.ChatAdapter()
        reason, raw = "no attempt made", None
        lm = self.predict.lm or dspy.settings.lm
        for attempt in (0, 1):
            pred = None
            # The retry's adapter is made only when there is a retry (most calls have none).
            adapter = _other_adapter(current) if attempt else None
            try:
                with dspy.context(adapter=adapter) if adapter else nullcontext(), whole_answers():
                    pred = await self._call(name, lm, inputs)
                if missing := [f for f in self.signature.output_fields if f not in pred]:
                    # An LM that returned no answer (an empty list) gives a prediction without fields.
                    raise ValueError(f"no {', '.join(missing)} in the output")
                return self.check(pred, inputs)
            except AnswerCutShort as exc:
                # Cut at the token budget: not a whole answer, whatever it parses as; another adapter at
                # the same budget would be cut again, so no retry.
                raise StageFailure(name, f"incomplete output ({exc})", exc.text) from None
            except AdapterParseError as exc:
                reason, raw = f"unparseable output ({_first_line(exc)})", exc.lm_response
                # ChatAdapter with its JSON fallback has already tried a second adapter.
                if attempt == 0 and _falls_back_to_json(current):
                    break
            except ValueError as exc:
                reason = f"invalid output ({exc})"
                raw = json.dumps(pred.toDict(), ensure_ascii=False, default=str) if pred is not None else None
        raise StageFailure(name, reason, raw)

    async def _call(self, name: str, lm: Any, inputs: dict[str, Any]) -> dspy.Prediction:
        """One LM call; a judgment asks for logprobs unless the backbone is known not to give them."""
        label = self.label or name
        ask = self.probabilities and asks_probabilities(lm)
        budget = self._budget(lm)
        if not ask:
            pred = await record_call(name, self.predict.acall(**inputs, **budget), label, lm=lm)
            if self.probabilities:
                pred.tokens = None
            return pred
        try:
            pred = await record_call(
                name,
                self.predict.acall(**inputs, config=logprob_config() | budget.get("config", {})),
                label,
                lm=lm,
            )
        except Exception as exc:
            if not refuses_logprobs(exc):
                raise
            mark_unavailable(lm, error_line(exc, limit=160), refused=True)
            pred = await record_call(name, self.predict.acall(**inputs, **budget), label, lm=lm)
            pred.tokens = None
            return pred
        pred.tokens = tokens_of(lm, pred)
        return pred

    def _budget(self, lm: Any) -> dict[str, Any]:
        """`{"config": {"max_tokens": n}}` when the stage's budget is below the backbone's, else {}."""
        kwargs = getattr(lm, "kwargs", None) or {}
        backbone = kwargs.get("max_tokens")
        if self.max_tokens is None or (isinstance(backbone, int) and backbone <= self.max_tokens):
            return {}
        config: dict[str, Any] = {"max_tokens": self.max_tokens}
        extra = kwargs.get("extra_body")
        if isinstance(extra, dict) and "max_tokens" in extra:
            # An `openai/` backbone at a server carries its budget as `max_tokens` in the body too
            # (backbones/_builders.py); the body's would win over this call's, so it is lowered as well.
            config["extra_body"] = {**extra, "max_tokens": self.max_tokens}
        return {"config": config}

    def forward(self, **inputs: Any) -> dspy.Prediction:
        from cejudge_dspy.judges._machinery._sync_bridge import run_sync

        return run_sync(self.aforward(**inputs))


def clean_list(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise ValueError(f"{field} is not a list")
    items = [str(v).strip() for v in value if str(v).strip()]
    if not items:
        raise ValueError(f"{field} is empty")
    return items


def _other_adapter(current: dspy.Adapter) -> dspy.Adapter:
    if isinstance(current, dspy.JSONAdapter):
        other: dspy.Adapter = dspy.ChatAdapter(use_json_adapter_fallback=False)
    else:
        other = dspy.JSONAdapter()
    # In a judging run the current adapter is a memoising one (_memo_adapters.py): so is the retry's.
    return memo_adapter(other) if isinstance(current, MEMO_ADAPTERS) else other


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _falls_back_to_json(adapter: dspy.Adapter) -> bool:
    # JSONAdapter subclasses ChatAdapter, so test it first.
    if isinstance(adapter, dspy.JSONAdapter):
        return False
    return isinstance(adapter, dspy.ChatAdapter) and bool(
        getattr(adapter, "use_json_adapter_fallback", False)
    )


async def judge_order(stage: Stage, order: Literal["AB", "BA"], **shown: Any) -> OrderResult:
    """One presentation order of a pairwise judgment: call the verdict stage on the texts as shown
    (`response_a` first) and map its verdict back to the item's own positions. A failure is recorded
    in the OrderResult, never raised, so the other order still runs."""
    try:
        pred = await stage.acall(**shown)
    except StageFailure as failure:
        return OrderResult(
            order=order, verdict=None, shown_verdict=None, error=failure.reason, raw=failure.raw
        )
    mapped = pred.verdict if order == "AB" else swap_verdict(pred.verdict)
    p_first, why = order_reading(pred)
    return OrderResult(
        order=order,
        verdict=mapped,
        shown_verdict=pred.verdict,
        answers=list(getattr(pred, "answers", None) or []),
        feedback=pred.feedback,
        p_first=p_first,
        probability_error=why,
    )
