"""The prompts of CE-Judge, one typed signature per stage.

The docstring is the stage's instruction and every field carries a `desc`; task-specific wording
(what is judged, the criteria, the score scale) arrives through input fields declared per task in
`programs/`, so these classes never change per task. The field order is part of the saved-program
format (DSPy restores descriptions by position), so append fields, never insert.
"""

from __future__ import annotations

from typing import Literal

import dspy

TASK_DESC = "What is being judged and in what role, as declared by the task."


class ExtractConcepts(dspy.Signature):
    """Name the skeleton of a text with 1 to 4 generic concepts, written in English.

    A concept is a short abstract noun phrase (2-6 words) for something the text is about or is trying to do,
    such as "step-by-step arithmetic", "formal apology letter" or "first-person narrative voice". Concepts are
    generic: they describe the kind of content, purpose, form or style, not its details, and they never judge
    quality. Read the text in its own language and write the concepts in English. Fewer, broader concepts are
    better than many narrow ones."""

    task: str = dspy.InputField(desc=TASK_DESC)
    kind: Literal["instruction", "response"] = dspy.InputField(
        desc="Whether the text is the instruction (the user's request or source passage) or a response to it."
    )
    text: str = dspy.InputField(desc="The text to analyse, in any language.")
    concepts: list[str] = dspy.OutputField(desc="1 to 4 generic concepts in English, most central first.")


class ExtractLinguisticConcepts(dspy.Signature):
    """List the linguistic concepts of a text that its translator must watch, written in English.

    Read the text in its own language and name what a translation of it into any language has to get right
    to stay consistent: its terminology (names, terms of art, recurring words), its grammar (tense, person,
    sentence structure), its style (register, voice, imagery, rhythm) and its fluency, and anything else of
    that kind. Each concept is a short phrase about this text, such as "present-tense narration" or "formal
    second-person address"; concepts never judge quality. Most important first, one concept per item."""

    task: str = dspy.InputField(desc=TASK_DESC)
    kind: Literal["instruction", "response"] = dspy.InputField(
        desc="Whether the text is the source text (instruction) or a translation of it (response)."
    )
    text: str = dspy.InputField(desc="The text to analyse, in any language.")
    concepts: list[str] = dspy.OutputField(desc="Linguistic concepts in English, most important first.")


class TranslateToEnglish(dspy.Signature):
    """Translate the text into English.

    Translate faithfully and completely: keep the meaning, the structure (paragraphs, lists, code, formulas,
    numbers, names) and the register. Do not summarise, correct, explain or answer the text; if it contains
    errors, translate the errors too. Output only the English translation."""

    source_language: str = dspy.InputField(desc="The language the text is written in.")
    text: str = dspy.InputField(desc="The text to translate.")
    english: str = dspy.OutputField(desc="The complete English translation.")


class ResponseToInstructionChecklist(dspy.Signature):
    """Write a checklist of evaluation questions suggested by a response, anchored in the instruction's concepts.

    Read the response and the concepts of the instruction it answers. List criteria that this response brings
    into play but that the instruction does not state: content it includes, claims it makes, choices of form or
    style it takes, and whether those serve the instruction's concepts. Each item is an open question about
    the response's own words: quote the part it asks about (a one-word response is quoted whole), never
    "the instruction's concepts" in the abstract, and it can be answered by reading the text. Questions
    must not prejudge quality: ask "Does the second step's value follow from the first?" rather than "Why is
    the second step wrong?". Write 1 to 3 questions in English: one is enough for a one-word answer."""

    task: str = dspy.InputField(desc=TASK_DESC)
    instruction_concepts: list[str] = dspy.InputField(desc="Generic concepts of the instruction.")
    response: str = dspy.InputField(desc="The response, translated into English.")
    checklist: list[str] = dspy.OutputField(
        desc="1 to 3 open evaluation questions in English, each quoting the response."
    )


class InstructionToResponseChecklist(dspy.Signature):
    """Write a checklist of evaluation questions implied by an instruction, anchored in the response's concepts.

    Read the instruction and the concepts of a response to it. List what the instruction requires or implies,
    explicitly or implicitly (requested content, constraints, format, language, audience, correctness
    conditions), and turn each requirement into a question about how the response's concepts meet it. Each
    item is an open question that refers to the actual instruction text and can be answered by reading the
    response. Questions must not prejudge quality. Write 1 to 6 questions in English, as many as the
    instruction has requirements: a one-line question has one or two."""

    task: str = dspy.InputField(desc=TASK_DESC)
    instruction: str = dspy.InputField(desc="The instruction, translated into English.")
    response_concepts: list[str] = dspy.InputField(desc="Generic concepts of the response being evaluated.")
    checklist: list[str] = dspy.OutputField(
        desc="1 to 6 open, text-specific evaluation questions in English, one per requirement."
    )


class PointwiseJudgment(dspy.Signature):
    """Judge one response against the instruction and give it a score on the task's scale.

    The instruction and response are given in their original languages; judge them as written. First answer
    the checklist items that are most useful for telling the quality of this response (at most five), each
    briefly and grounded in the text. Then write concise feedback that weighs the strengths and weaknesses
    against the criteria. Finally give the single score whose level description fits the response best."""

    task: str = dspy.InputField(desc=TASK_DESC)
    criteria: str = dspy.InputField(desc="What a good response does, as declared by the task.")
    scale: dict[int, str] = dspy.InputField(desc="Every score level with its description.")
    instruction: str = dspy.InputField(desc="The instruction or source text, untranslated.")
    response: str = dspy.InputField(desc="The response to judge, untranslated.")
    checklist: list[str] = dspy.InputField(desc="Evaluation questions for this response.")
    answers: list[str] = dspy.OutputField(
        desc="Short answers to the most useful checklist items, each naming the item."
    )
    feedback: str = dspy.OutputField(desc="Concise feedback that justifies the score.")
    score: int = dspy.OutputField(desc="One integer level from the scale.")
    # Appended (saved programs restore field descriptions by position): without the languages a small
    # judge cannot tell a translation into the wrong language from a right one.
    source_language: str = dspy.InputField(desc="The language of the instruction or source text.")
    response_language: str = dspy.InputField(desc="The language the response must be written in.")


class PairwiseJudgment(dspy.Signature):
    """Decide which of two responses better follows the instruction.

    The instruction and both responses are given in their original languages; judge them as written. Each
    response comes with its own checklist. First answer the checklist items that best separate the two
    responses (at most five in all), each briefly and grounded in the texts. Then write concise feedback
    comparing the two against the criteria. Finally name the better response: A or B. The order in which the
    responses appear says nothing about their quality."""

    task: str = dspy.InputField(desc=TASK_DESC)
    criteria: str = dspy.InputField(desc="What a good response does, as declared by the task.")
    instruction: str = dspy.InputField(desc="The instruction, untranslated.")
    response_a: str = dspy.InputField(desc="Response A, untranslated.")
    response_b: str = dspy.InputField(desc="Response B, untranslated.")
    checklist_a: list[str] = dspy.InputField(desc="Evaluation questions for response A.")
    checklist_b: list[str] = dspy.InputField(desc="Evaluation questions for response B.")
    answers: list[str] = dspy.OutputField(desc="Short answers to the most discriminating checklist items.")
    feedback: str = dspy.OutputField(desc="Concise comparative feedback that justifies the verdict.")
    verdict: Literal["A", "B"] = dspy.OutputField(desc="The better response: A or B.")


class GradeResponse(dspy.Signature):
    """Decide whether one response does what the instruction asks, using its checklist.

    The instruction and the response are given in their original languages; read them as written. The
    checklist's questions point at what to look at; answer them for yourself, then decide. A response that is
    wrong, off-topic, refuses, or is in the wrong language does not do what is asked. Judge this response on
    its own: no other response is shown, and how long or polite it is does not matter."""

    task: str = dspy.InputField(desc=TASK_DESC)
    criteria: str = dspy.InputField(desc="What a good response does, as declared by the task.")
    instruction: str = dspy.InputField(desc="The instruction, untranslated.")
    response: str = dspy.InputField(desc="The response to grade, untranslated.")
    checklist: list[str] = dspy.InputField(desc="Evaluation questions for this response.")
    fulfils: Literal["yes", "partly", "no"] = dspy.OutputField(
        desc="yes: it does what is asked; partly: with a real flaw; no: it does not."
    )
    feedback: str = dspy.OutputField(desc="One or two sentences naming what decided the grade.")


class ReferenceAnswer(dspy.Signature):
    """Answer the instruction yourself, briefly, so that responses to it can be checked against your answer.

    Where the instruction has one right answer (a fact, a number, a calculation, a translation), give that
    answer. Where it asks for something longer (an essay, a story, code), say in one or two sentences what a
    correct response must contain instead of writing it. Keep it short."""

    task: str = dspy.InputField(desc=TASK_DESC)
    instruction: str = dspy.InputField(desc="The instruction, untranslated.")
    reference: str = dspy.OutputField(desc="Your short answer, or what a correct response must contain.")


class GradeAgainstReference(dspy.Signature):
    """Decide whether one response does what the instruction asks, using its checklist and a reference answer.

    The instruction and the response are given in their original languages; read them as written. The
    reference answer was written by the judge before reading any response: where the instruction has one
    right answer, a response that disagrees with the reference is most likely wrong. The checklist's
    questions point at what to look at; answer them for yourself, then decide. A response that is wrong,
    off-topic, refuses, or is in the wrong language does not do what is asked. Judge this response on its
    own: no other response is shown, and how long or polite it is does not matter."""

    task: str = dspy.InputField(desc=TASK_DESC)
    criteria: str = dspy.InputField(desc="What a good response does, as declared by the task.")
    instruction: str = dspy.InputField(desc="The instruction, untranslated.")
    reference: str = dspy.InputField(desc="The judge's own short answer to the instruction.")
    response: str = dspy.InputField(desc="The response to grade, untranslated.")
    checklist: list[str] = dspy.InputField(desc="Evaluation questions for this response.")
    fulfils: Literal["yes", "partly", "no"] = dspy.OutputField(
        desc="yes: it does what is asked; partly: with a real flaw; no: it does not."
    )
    feedback: str = dspy.OutputField(desc="One or two sentences naming what decided the grade.")


class TranslateForReference(dspy.Signature):
    """Translate the source text into the target language yourself, faithfully and completely, so that a
    translation of it can be checked against yours. Output only your translation."""

    source_language: str = dspy.InputField(desc="The language of the source text.")
    target_language: str = dspy.InputField(desc="The language to translate into.")
    text: str = dspy.InputField(desc="The source text.")
    translation: str = dspy.OutputField(desc="Your complete translation.")


class PointwiseJudgmentWithReference(dspy.Signature):
    """Judge one response against the instruction and give it a score on the task's scale.

    The instruction and response are given in their original languages; judge them as written. A reference
    translation, written by the judge before reading the response, is given: a response that says what the
    reference says is faithful, whatever its wording; one that says something else has errors of meaning.
    First answer the checklist items that are most useful for telling the quality of this response (at most
    five), each briefly and grounded in the text. Then write concise feedback that weighs the strengths and
    weaknesses against the criteria. Finally give the single score whose level description fits the response
    best."""

    task: str = dspy.InputField(desc=TASK_DESC)
    criteria: str = dspy.InputField(desc="What a good response does, as declared by the task.")
    scale: dict[int, str] = dspy.InputField(desc="Every score level with its description.")
    instruction: str = dspy.InputField(desc="The instruction or source text, untranslated.")
    reference: str = dspy.InputField(desc="The judge's own translation of the source text.")
    response: str = dspy.InputField(desc="The response to judge, untranslated.")
    checklist: list[str] = dspy.InputField(desc="Evaluation questions for this response.")
    answers: list[str] = dspy.OutputField(
        desc="Short answers to the most useful checklist items, each naming the item."
    )
    feedback: str = dspy.OutputField(desc="Concise feedback that justifies the score.")
    score: int = dspy.OutputField(desc="One integer level from the scale.")
    source_language: str = dspy.InputField(desc="The language of the instruction or source text.")
    response_language: str = dspy.InputField(desc="The language the response must be written in.")


# The judgment's step the `answers=False` ablation replaces (the pointwise judgments state it word for word).
ANSWER_STEP = (
    "First answer the checklist items that are most useful for telling the quality of this response (at most "
    "five), each briefly and grounded in the text."
)
SILENT_STEP = "Use the checklist's questions to look at the response: answer them for yourself."


def without_answers(signature: type[dspy.Signature]) -> type[dspy.Signature]:
    """`signature` without its `answers` output: the judge reads the checklist and answers it for itself.

    Why: on the embedded 1.5B backbone the written answers are mostly the checklist's questions copied
    back or restated as praise (docs/measurements/embedded-obvious-items.md), and they are most of the
    tokens the judgment writes. Paragraphs are rejoined without their line breaks."""
    text = "\n\n".join(" ".join(p.split()) for p in signature.instructions.split("\n\n"))
    if ANSWER_STEP not in text:
        raise ValueError(f"{signature.__name__} has no answering step to replace")
    return signature.delete("answers").with_instructions(text.replace(ANSWER_STEP, SILENT_STEP))
