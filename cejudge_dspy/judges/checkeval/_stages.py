"""The LLM stages of a CheckEval checklist build: diversify and elaborate the seeds, filter what they wrote.

All of them, and CheckEval's own answering stage, work on one sub-dimension at a time, so they share
the inputs that name it (`SubDimensionSignature`, filled by `subdimension_inputs`).
"""

from __future__ import annotations

import re
from typing import Any

import dspy

from cejudge_dspy.judges._machinery._stage import Stage, clean_list
from cejudge_dspy.judges.cejudge import TASK_DESC
from cejudge_dspy.tasks import Dimension, SubDimension, TaskSpec

# What the filter may decide; "filter_failed" is added by the builder when the filter call failed, the
# retry included, so the question went unreviewed.
DECISIONS = ("keep", "yes_means_worse", "off_dimension", "duplicate")


class SubDimensionSignature(dspy.Signature):
    """The sub-dimension of a task's dimension that a set of yes/no questions belongs to."""

    # Subclasses inherit these fields first, in this order, so their prompts and saved state read as if
    # each declared them itself; every subclass has its own docstring, which stays its instructions.
    task: str = dspy.InputField(desc=TASK_DESC)
    dimension: str = dspy.InputField(desc="The evaluation dimension the questions belong to.")
    dimension_definition: str = dspy.InputField(desc="What the dimension means, as declared by the task.")
    subdimension: str = dspy.InputField(desc="The sub-dimension: one facet of the dimension.")
    subdimension_definition: str = dspy.InputField(desc="What the sub-dimension covers.")


def subdimension_inputs(spec: TaskSpec, dim: Dimension, sub: SubDimension) -> dict[str, Any]:
    """The `SubDimensionSignature` inputs for one sub-dimension of `spec`."""
    return dict(
        task=spec.task,
        dimension=dim.name,
        dimension_definition=dim.definition.strip(),
        subdimension=sub.name,
        subdimension_definition=sub.definition.strip(),
    )


class DiversifyQuestions(SubDimensionSignature):
    """Write new yes/no evaluation questions that look at a sub-dimension from angles its seed questions miss.

    Each seed question checks one aspect of the sub-dimension. Write new questions about other aspects of the
    same sub-dimension, not rewordings of the seeds. Every question asks about one thing, can be answered with
    yes or no by reading the texts being evaluated, and is phrased so that "yes" means better quality. Ask
    about the response (compared with its source where the sub-dimension needs it), never about the source
    alone. Stay inside the sub-dimension: do not ask about other qualities of the text."""

    seeds: list[str] = dspy.InputField(desc="The seed yes/no questions of the sub-dimension.")
    diversified: list[str] = dspy.OutputField(
        desc="2 to 5 new yes/no questions on aspects the seeds do not cover."
    )


class ElaborateQuestions(SubDimensionSignature):
    """Break seed yes/no evaluation questions down into finer, more specific questions.

    For each seed question, write questions that check one part or one concrete case of it, so that together
    they examine the seed in more detail than the seed alone. Every question asks about one thing, can be
    answered with yes or no by reading the texts being evaluated, and is phrased so that "yes" means better
    quality. Ask about the response (compared with its source where the sub-dimension needs it), never about
    the source alone. Stay inside the sub-dimension."""

    seeds: list[str] = dspy.InputField(desc="The seed yes/no questions of the sub-dimension.")
    elaborated: list[str] = dspy.OutputField(
        desc="2 to 6 finer yes/no questions, each more specific than a seed."
    )


class FilterQuestions(SubDimensionSignature):
    """Review candidate yes/no evaluation questions for a sub-dimension and decide whether to keep each one.

    Give exactly one decision per candidate, in the candidates' order:
    - "yes_means_worse": a "yes" answer would mean lower quality (e.g. "Does the text contain errors?").
    - "off_dimension": the question checks a quality other than this sub-dimension of this dimension, or it
      asks about the source text alone instead of the response being evaluated.
    - "duplicate": it asks the same thing as an accepted question (from any sub-dimension of the dimension)
      or as an earlier candidate.
    - "keep": none of the above applies."""

    accepted: list[str] = dspy.InputField(
        desc="Questions already in the checklist for this dimension, from all of its sub-dimensions: "
        "its seed questions and the generated questions kept so far."
    )
    candidates: list[str] = dspy.InputField(desc="The generated questions to review, in order.")
    # list[str], not list[Literal]: a strict Literal fails the call on "Keep" or "keep."; check() maps them.
    decisions: list[str] = dspy.OutputField(
        desc='One per candidate, in order: "keep", "yes_means_worse", "off_dimension" or "duplicate".'
    )


class Diversify(Stage):
    signature = DiversifyQuestions

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        pred.diversified = clean_list(pred.diversified, "diversified")
        return pred


class Elaborate(Stage):
    signature = ElaborateQuestions

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        pred.elaborated = clean_list(pred.elaborated, "elaborated")
        return pred


class Filter(Stage):
    signature = FilterQuestions

    def check(self, pred: dspy.Prediction, inputs: dict[str, Any]) -> dspy.Prediction:
        decisions = clean_list(pred.decisions, "decisions")
        if len(decisions) != len(inputs["candidates"]):
            # Misaligned decisions cannot be attributed to questions: reject rather than guess.
            raise ValueError(f"{len(decisions)} decisions for {len(inputs['candidates'])} candidates")
        pred.decisions = [_decision(d) for d in decisions]
        return pred


def _decision(text: str) -> str:
    word = re.sub(r"[^a-z]+", "_", text.lower()).strip("_")
    for decision in DECISIONS:
        if word == decision or word.startswith(decision + "_"):
            return decision
    raise ValueError(f"unknown decision {text!r}; expected one of {', '.join(DECISIONS)}")
