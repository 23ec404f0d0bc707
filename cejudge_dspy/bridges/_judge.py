"""One judge for another framework's loop: a task's judge program and its backbone, asked about one
response (pointwise) or one response against a reference (pairwise) at a time.

The backbone is chosen by the caller, never here: a `BackboneOptions` (the backbone and its settings, as
`evaluate` takes them), a spec string (`"simulated:0"`, `"embedded"`, `"hosted_vllm/..."`: the backbone
with its default settings), a `dspy.LM`, or nothing, in which case the judge runs on whatever LM is current
(`dspy.context(lm=...)` or `dspy.configure`) when it is asked. Every judgment runs
inside `dspy.context(lm=..., trace=None)`: the judge's own calls never enter the trace of the program a
metric is scoring (GEPA reflects on that trace). A thread gets its own copy of the program (DSPy's
`Evaluate` calls a metric from several threads; each runs the judge's async pipeline on its own loop).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any, TypedDict

import dspy

from cejudge_dspy import backbones
from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.data import Item, normalize_language, require_text
from cejudge_dspy.errors import BackboneError, InputError, known_keywords
from cejudge_dspy.judges import JudgeOptions, check_method_backbone, run_program
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.tasks import TaskSpec, load_task

# The methods whose score is not on the task's [scale]: CheckEval's share of Yes; G-Eval's Likert levels
# (1-5, G-Eval's SummEval scale) where a task declares no scale.
_SHARE_METHODS = frozenset({"checkeval"})
_GEVAL_LEVELS = (1, 5)

# A judge's backbone, as every bridge takes it: its settings (a spec alone: the default ones), a `dspy.LM`
# as it is, or None: the LM current at each call.
Backbone = BackboneOptions | str | dspy.BaseLM | None


class JudgeArgs(TypedDict, total=False):
    """The judge and its backbone, declared once: `BridgeJudge`'s keyword arguments, which `JudgeMetric`
    and `inspect_scorer` take as they are (`**judge`) beside the task and the method."""

    options: JudgeOptions | None  # the judge's options (`JudgeOptions`, as `evaluate` takes them)
    backbone: Backbone  # a BackboneOptions, a spec such as "simulated:0", a dspy.LM, or None


JUDGE_ARGS = tuple(JudgeArgs.__annotations__)


@dataclass(frozen=True)
class Judgment:
    """A response's judgment: the JudgeResult, and its score in [0, 1] (None when unparsed).

    Pointwise, the score is the judge's score mapped from its range onto [0, 1]; pairwise it is the
    verdict for the response (A) against the reference (B): 1 if the response is better, 0.5 for a tie,
    0 if the reference is better."""

    result: JudgeResult
    score: float | None
    score_range: tuple[float, float] | None

    @property
    def ok(self) -> bool:
        return self.result.ok and self.score is not None


class BridgeJudge:
    """A task's judge (`method`, `options`) on a `backbone` (see the module docstring), for one item at a
    time."""

    @known_keywords
    def __init__(
        self,
        task: str | TaskSpec,
        method: str | None = None,
        *,
        options: JudgeOptions | None = None,
        backbone: Backbone = None,
    ) -> None:
        self.spec = load_task(task)
        if options is None:
            options = JudgeOptions(method=method or "cejudge")
        elif method is not None and method != options.method:
            raise InputError(
                f"method '{method}' and options.method '{options.method}' differ", field="method"
            )
        options.check(self.spec)
        self.options = options
        self.method = options.method
        self._programs = threading.local()
        # Built here for this thread, so that a bad option or program fails now, not in the middle of a run.
        self._programs.program = run_program(self.spec, options=options)
        self._lm, self._adapter = _backbone(self.method, backbone)

    @property
    def mode(self) -> str:
        return self.spec.mode

    def program(self) -> dspy.Module:
        """This thread's copy of the judge program."""
        program = getattr(self._programs, "program", None)
        if program is None:
            program = self._programs.program = run_program(self.spec, options=self.options)
        return program

    def item(
        self,
        instruction: Any,
        response: Any,
        *,
        reference: Any = None,
        language: Any = None,
        response_language: Any = None,
        item_id: str = "item",
    ) -> Item:
        """The judge's item: pointwise the response alone, pairwise the response as A and the reference as B.
        An empty or missing text is an InputError naming the item and the field."""
        lang = (
            normalize_language(str(language), item=item_id)
            if language
            else self.spec.dataset.default_language
        )
        texts = {"instruction": require_text(instruction, "instruction", item_id)}
        if self.mode == "pairwise":
            texts["response_a"] = require_text(response, "response", item_id)
            texts["response_b"] = require_text(reference, "reference", item_id)
            return Item(id=item_id, mode="pairwise", language=lang, **texts)
        texts["response"] = require_text(response, "response", item_id)
        target = (
            normalize_language(str(response_language), item=item_id, field="response_language")
            if response_language
            else None
        )
        return Item(id=item_id, mode="pointwise", language=lang, response_language=target, **texts)

    def judge(self, item: Item) -> Judgment:
        with self._context():
            prediction = self.program()(**item.inputs())
        return self._judgment(prediction.result)

    async def ajudge(self, item: Item) -> Judgment:
        with self._context():
            prediction = await self.program().acall(**item.inputs())
        return self._judgment(prediction.result)

    def _context(self) -> Any:
        lm = self._lm if self._lm is not None else dspy.settings.lm
        if lm is None:
            raise BackboneError(
                "the judge has no backbone: pass backbone='simulated:0' (or another backbone spec, a "
                "BackboneOptions or a dspy.LM), or call it inside `with dspy.context(lm=...)`"
            )
        extra = {"adapter": self._adapter} if self._adapter is not None else {}
        return dspy.context(lm=lm, trace=None, **extra)

    def score_range(self) -> tuple[float, float] | None:
        """The range of the judge's pointwise score (None pairwise)."""
        if self.mode == "pairwise":
            return None
        if self.method in _SHARE_METHODS:
            return (0.0, 1.0)
        if self.spec.scale:
            low, high = self.spec.scale_range
            return float(low), float(high)
        return tuple(map(float, _GEVAL_LEVELS)) if self.method == "geval" else (0.0, 1.0)  # type: ignore[return-value]

    def _judgment(self, result: JudgeResult) -> Judgment:
        if not result.ok:
            return Judgment(result, None, self.score_range())
        if self.mode == "pairwise":
            score = {"A": 1.0, "tie": 0.5, "B": 0.0}.get(result.verdict or "")
            return Judgment(result, score, None)
        low, high = self.score_range() or (0.0, 1.0)
        raw = result.score
        if raw is None or not math.isfinite(raw):
            return Judgment(result, None, (low, high))
        return Judgment(result, min(1.0, max(0.0, (raw - low) / (high - low))), (low, high))


def _backbone(method: str, backbone: Backbone) -> tuple[Any, Any]:
    """(the LM, the adapter) a judgment runs on: built from the backbone's settings, or given, or (None,
    None): the current."""
    if backbone is None:
        return None, None
    if isinstance(backbone, dspy.BaseLM):
        return backbone, None
    settings = backbones.backbone_options(backbone, kinds="a BackboneOptions, a backbone spec or a dspy.LM")
    check_method_backbone(method, settings.lm, settings.api_base)
    # Looked up on the face at call time: one road to a backbone, the one the docs' tests substitute.
    lm = backbones.make_lm(settings.lm, **settings.kwargs())
    return lm, backbones.preferred_adapter(settings.lm, settings.adapter)
