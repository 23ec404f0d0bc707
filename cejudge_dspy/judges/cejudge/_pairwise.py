"""CE-Judge's pairwise judge: which of two responses is better, graded one by one or shown as a pair.

Each response's concepts, translation and checklists as for the pointwise judge; then, by default, a grade
per response on its own (_graded.py), and the pairwise judgment in both orders only where the grades do not
separate the pair; `judgment="pairwise"` runs the paper's pairwise judgment on every pair. With
`reference=True` the judge first writes its own short answer to the instruction (reference-guided grading, as
MT-Bench's judge does for maths), and both grades read it; the record keeps it under `details["reference"]`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

import dspy

from cejudge_dspy.data import normalize_language, require_text
from cejudge_dspy.errors import known_keywords
from cejudge_dspy.judges._machinery._probability_readings import (
    check_decision,
    check_tie_band,
    pairwise_probabilities,
    preference_probabilities,
)
from cejudge_dspy.judges._machinery._stage import StageFailure, judge_order
from cejudge_dspy.judges._option_choices import Judgment, checked
from cejudge_dspy.judges.cejudge._graded import (
    GradedCall,
    broken_tie,
    failed_grade,
    grade_from,
    graded_call,
    graded_feedback,
    unread_grades,
)
from cejudge_dspy.judges.cejudge._program import CEJudgeProgram, Directions, JudgeOn
from cejudge_dspy.judges.cejudge._program import unparsed_prediction as _unparsed
from cejudge_dspy.judges.cejudge._stages import GradeJudgment, GradeWithReference, Reference, VerdictJudgment
from cejudge_dspy.judges.cejudge._tiebreak import (
    DEFAULT_TIE_BREAKER,
    TieBreaker,
    likelihood_tie_break,
)
from cejudge_dspy.judges.cejudge._understanding import Understanding, findings
from cejudge_dspy.judges.verdicts import (
    DEFAULT_GRADE_MARGIN,
    DEFAULT_TIE_BAND,
    Decision,
    GradeResult,
    JudgeResult,
    OrderResult,
    decide,
    reconcile,
    unparsed,
)
from cejudge_dspy.tasks import TaskSpec
from cejudge_dspy.translate import Translator
from cejudge_dspy.usage import Usage, about, collecting, expect_more_calls


@dataclass(frozen=True)
class _Graded:
    """The graded judgment's step: both grades, what they decide, and the tie-breaker's note."""

    grades: dict[str, GradeResult]
    call: GradedCall
    tie_note: str


class PairwiseJudge(CEJudgeProgram):
    """Pick the better of two responses.

    `judgment="graded"` (default): each response is graded on its own with its checklist, and the
    pairwise judgment (both orders by default) decides only pairs whose grades do not separate (see
    _graded.py). `judgment="pairwise"`: the paper's judgment, both responses shown at once, for every pair.
    `reference=True` (graded only): both grades also read the judge's own short answer, written first.
    """

    mode = "pairwise"

    @known_keywords
    def __init__(
        self,
        task: str | TaskSpec = "chat",
        translator: str | Translator = "llm",
        orders: Literal["both", "single"] = "both",
        decision: Decision = "probability",
        tie_band: float = DEFAULT_TIE_BAND,
        judgment: Judgment = "graded",
        grade_margin: float = DEFAULT_GRADE_MARGIN,
        reference: bool = False,
        tie_breaker: TieBreaker = DEFAULT_TIE_BREAKER,
        concepts: bool = True,
        directions: Directions = "both",
        judge_on: JudgeOn = "original",
    ) -> None:
        super().__init__(task, translator, concepts=concepts, directions=directions, judge_on=judge_on)
        self.orders = checked("orders", orders)
        self.decision = check_decision(decision)
        self.tie_band = check_tie_band(tie_band)
        self.judgment = checked("judgment", judgment)
        self.grade_margin = float(checked("grade_margin", grade_margin))
        self.tie_breaker = checked("tie_breaker", tie_breaker)
        # With a reference the grades also see the judge's own short answer to the instruction, written
        # first: a small judge that does not work out "6 x 4" while grading "20" does when answering it.
        self.reference = Reference() if reference and judgment == "graded" else None
        self.grade = GradeWithReference() if self.reference else GradeJudgment()
        self.judge = VerdictJudgment()

    async def aforward(
        self, instruction: str, response_a: str, response_b: str, language: str = "en"
    ) -> dspy.Prediction:
        instruction = require_text(instruction, "instruction")
        a, b = require_text(response_a, "response_a"), require_text(response_b, "response_b")
        language = normalize_language(language)
        usage = Usage()
        graded = self.judgment == "graded"
        n_orders = 2 if self.orders == "both" else 1
        with collecting(usage, expected_calls=self._expected_calls(language, graded, n_orders)):
            try:
                # Each response's checklists start as soon as its own concepts and translation are in;
                # the reference answer needs only the instruction.
                seen_a, seen_b, reference = await asyncio.gather(
                    self._understand(instruction, a, language, language, "A"),
                    self._understand(instruction, b, language, language, "B"),
                    self._reference(instruction),
                )
            except StageFailure as failure:
                return _unparsed("pairwise", failure, usage=usage)
            found = findings(usage, a=seen_a, b=seen_b)
            if self.reference:
                found["details"] = {"reference": reference}
            graded_step = (
                await self._grade_both(instruction, (a, b), (seen_a, seen_b), language, reference, found)
                if graded
                else None
            )
            orders: list[OrderResult] = []
            if graded_step is None or graded_step.call.needs_orders(self.decision):
                if graded_step is not None:
                    expect_more_calls(n_orders)
                # The swapped order reuses the checklists: only the judgment is repeated.
                plan = [("AB", seen_a, seen_b)] + ([("BA", seen_b, seen_a)] if n_orders == 2 else [])
                orders = list(await asyncio.gather(*(self._judge_order(*p, language) for p in plan)))
        return self._verdict(graded_step, orders, found)

    def _expected_calls(self, language: str, graded: bool, n_orders: int) -> int:
        """The LM calls an item should take, for its progress (a tie-breaker's orders add theirs later)."""
        # Both responses ask for the instruction's concepts and English; the second request is shared.
        expected = 2 * self._calls_to_understand(language, language) + (2 if graded else n_orders)
        return expected + (1 if self.reference else 0)

    async def _grade_both(
        self,
        instruction: str,
        texts: tuple[str, str],
        seen: tuple[Any, Any],
        language: str,
        reference: dict[str, str | None],
        found: dict[str, Any],
    ) -> _Graded:
        """The graded judgment: each response graded on its own, then the likelihood tie-breaker where the
        grades are within the margin (its reading goes into `found`'s details)."""
        grade_a, grade_b = await asyncio.gather(
            self._grade(seen[0], "A", language, reference),
            self._grade(seen[1], "B", language, reference),
        )
        call, tie_note = graded_call(grade_a, grade_b, self.grade_margin), ""
        if call.needs_orders(self.decision) and self.tie_breaker == "likelihood":
            liked = await likelihood_tie_break(instruction, *texts)
            found.setdefault("details", {})["likelihood"] = liked.to_dict()
            tie_note = liked.describe()
            # Unscored: the grades alone decide where they differ at all (margin 0).
            call = broken_tie(call, liked) if liked.p_a is not None else graded_call(grade_a, grade_b, 0.0)
        return _Graded({"a": grade_a, "b": grade_b}, call, tie_note)

    def _verdict(
        self, graded: _Graded | None, orders: list[OrderResult], found: dict[str, Any]
    ) -> dspy.Prediction:
        """The item's result from the grades (graded judgment) and the orders judged (if any)."""
        grades = graded.grades if graded else {}
        by_orders, consistent = reconcile(orders) if orders else (None, None)
        argmax = graded.call.argmax_verdict if graded and graded.call.argmax_verdict else by_orders
        if graded and argmax is None and not orders:
            argmax = "tie"  # equal labels the expected grades decided: no argmax answer separates them
        if argmax is None:
            failed = next(o for o in orders if o.verdict is None)
            reason = f"order {failed.order}: {failed.error}"
            return unparsed(
                "pairwise", "VerdictJudgment", reason, failed.raw, orders=orders, grades=grades, **found
            ).to_prediction()
        p_graded = (
            graded.call.p_a if graded else None
        )  # p(A) when the grades decided under the probability rule
        probabilities = (
            preference_probabilities(p_graded, self.tie_band)
            if p_graded is not None
            else pairwise_probabilities(orders, self.tie_band)
            if orders
            else unread_grades(grades)
        )
        first = orders[0] if orders else None
        if graded and not orders:
            feedback = graded_feedback(grades, graded.tie_note)
        else:
            feedback = first.feedback if first else ""
        result = JudgeResult(
            mode="pairwise",
            status="ok",
            verdict=argmax,
            consistent=consistent,
            feedback=feedback,
            answers=first.answers if first else [],
            orders=orders,
            probabilities=probabilities,
            grades=grades,
            decided_by=graded.call.decided_by(bool(orders)) if graded else {},
            **found,
        )
        return decide(result, self.decision).to_prediction()

    async def _reference(self, instruction: str) -> dict[str, str | None]:
        """The judge's own answer to the instruction (`reference=True`), for both grades. One that cannot
        be parsed is recorded with its reason, and the grades read "none" in its place."""
        if self.reference is None:
            return {}
        try:
            pred = await self._shared(
                "reference", self.reference, task=self.spec.task, instruction=instruction
            )
        except StageFailure as failure:
            return {"answer": None, "error": failure.reason}
        return {"answer": pred.reference, "error": None}

    async def _grade(
        self, seen: Understanding, which: str, language: str, reference: dict[str, str | None]
    ) -> GradeResult:
        """One response graded on its own, on the untranslated texts (or, ablated, the English ones),
        with its checklist (and the reference answer, when there is one)."""
        shown = self._shown(seen, language, language)
        given = {"reference": reference.get("answer") or "none"} if self.reference else {}
        try:
            # Shared work: a response's grade reads nothing of the other response, so when several
            # systems answer one prompt (`cejudge rank`) each response is graded once, whatever the
            # number of comparisons it enters.
            pred = await about(
                which,
                self._shared(
                    "grade",
                    self.grade,
                    task=self.spec.task,
                    criteria=self.spec.criteria,
                    instruction=shown["instruction"],
                    response=shown["response"],
                    checklist=seen.checklist,
                    **given,
                ),
            )
        except StageFailure as failure:
            return failed_grade(failure)
        return grade_from(pred)

    async def _judge_order(
        self, order: Literal["AB", "BA"], first: Understanding, second: Understanding, language: str
    ) -> OrderResult:
        """The judgment on the untranslated texts (or, ablated, the English ones) as shown (`first` as
        A), with each one's checklist."""
        shown_a, shown_b = self._shown(first, language, language), self._shown(second, language, language)
        return await about(
            shown_first(order),
            judge_order(
                self.judge,
                order,
                task=self.spec.task,
                criteria=self.spec.criteria,
                instruction=shown_a["instruction"],
                response_a=shown_a["response"],
                response_b=shown_b["response"],
                checklist_a=first.checklist,
                checklist_b=second.checklist,
            ),
        )


def shown_first(order: Literal["AB", "BA"]) -> str:
    """What a presentation order is called in progress messages: `A shown first`, `B shown first`."""
    return f"{order[0]} shown first"
