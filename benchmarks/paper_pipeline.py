"""Baselines in the form the paper's released code runs CE-Judge, for the throughput benchmark.

`paper` (the default, `translator="external"`): what the paper's code does. Texts are translated by
Google Translate, batched, before any LLM call, and English is not translated; then the concepts of each
text, then the checklists, then one judgment in one presentation order, each LLM call awaited after the
previous one, nothing shared between items. LLM calls: 8 per pairwise item (3 concepts, 4 checklists, 1
verdict) and 5 per pointwise item. Google Translate is played by `SimulatedExternalTranslator`: no LLM
call, one modelled delay per batch, and no network.

`seq-llm` (`translator="llm"`) is ours, not the paper's: the same sequence with the judge's LLM
translation stage on every text, English included (11 calls per pairwise item, 7 per pointwise). It is
what the paper's pipeline would cost without an external translator.

Same stage modules (so the same prompts and token counts) as `cejudge_dspy.judges.cejudge`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

import dspy

from cejudge_dspy.backbones._simulated import CallLog, current_tag
from cejudge_dspy.data import is_english, language_name, normalize_language
from cejudge_dspy.judges import StageFailure
from cejudge_dspy.judges.cejudge import (
    ChecklistFromInstruction,
    ChecklistFromResponse,
    Concepts,
    ScoreJudgment,
    Translate,
    VerdictJudgment,
)
from cejudge_dspy.judges.verdicts import JudgeResult, OrderResult, unparsed
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.usage import Usage, collecting, current_subject


class SimulatedExternalTranslator:
    """A stand-in for Google Translate (deep-translator, batched), as the paper's code uses it: costs no
    LLM call, takes `batch_latency` seconds per request whatever its size, never reaches the network.
    Implements the `Translator` protocol (`translate`), so `PairwiseJudge(translator=...)` takes it too,
    and `translate_batch` for the paper's one request per item. Requests are logged (stage
    `external_translate`) next to the engine's calls, for the critical path."""

    name = "simulated-google"

    def __init__(self, batch_latency: float = 0.1) -> None:
        self.batch_latency = batch_latency
        self.log: list[CallLog] = []
        self.requests = 0
        self._cache: dict[tuple[str, str], asyncio.Future[list[str]]] = {}

    def reset(self) -> None:
        self.log, self.requests, self._cache = [], 0, {}

    def __deepcopy__(self, memo: dict[int, Any]) -> SimulatedExternalTranslator:
        return self  # one service, however many copies of a program use it

    async def translate_batch(self, texts: Sequence[str], language: str) -> list[str]:
        code = normalize_language(language)
        if is_english(code) or not texts:
            return list(texts)  # English is skipped: no request at all
        self.requests += 1
        self.log.append(
            CallLog(
                "external_translate",
                current_tag.get(),
                0,
                0,
                self.batch_latency,
                language_name(code),
                current_subject(),
            )
        )
        await asyncio.sleep(self.batch_latency)
        return [f"[English] {t}" for t in texts]

    async def translate(self, text: str, language: str) -> str:
        """One text, cached and de-duplicated per (language, text) as cejudge's own translators are."""
        key = (normalize_language(language), text)
        task = self._cache.get(key)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = self._cache[key] = asyncio.ensure_future(self.translate_batch([text], language))
        return (await asyncio.shield(task))[0]


class _Paper(dspy.Module):
    def __init__(
        self,
        task: str | TaskSpec,
        translator: Literal["external", "llm"] = "external",
        batch_latency: float = 0.1,
    ) -> None:
        super().__init__()
        self.spec = load_task(task)
        self.concepts = Concepts()
        self.translate = Translate()
        self.checklist_r2i = ChecklistFromResponse()
        self.checklist_i2r = ChecklistFromInstruction()
        self.translator = SimulatedExternalTranslator(batch_latency) if translator == "external" else None

    async def _front(self, texts: dict[str, tuple[str, str, str]]) -> tuple[dict, dict]:
        """English of every text, then the concepts of every text, one step after another."""
        english: dict[str, str] = {}
        if self.translator is not None:
            # One batched request per language (the item's texts share one here), English skipped.
            by_language: dict[str, list[str]] = {}
            for name, (_, _, language) in texts.items():
                by_language.setdefault(language, []).append(name)
            for language, names in by_language.items():
                out = await self.translator.translate_batch([texts[n][0] for n in names], language)
                english.update(zip(names, out, strict=True))
        else:
            for name, (text, _, language) in texts.items():  # every text, English included
                pred = await self.translate.acall(source_language=language_name(language), text=text)
                english[name] = pred.english
        concepts: dict[str, list[str]] = {}
        for name, (text, kind, _) in texts.items():
            concepts[name] = (await self.concepts.acall(task=self.spec.task, kind=kind, text=text)).concepts
        return concepts, english

    async def _checklist(
        self,
        instruction_concepts: list[str],
        response_concepts: list[str],
        english_instruction: str,
        english_response: str,
    ) -> list[str]:
        r2i = await self.checklist_r2i.acall(
            task=self.spec.task, instruction_concepts=instruction_concepts, response=english_response
        )
        i2r = await self.checklist_i2r.acall(
            task=self.spec.task, instruction=english_instruction, response_concepts=response_concepts
        )
        return r2i.checklist + i2r.checklist


class PaperPointwise(_Paper):
    """5 LLM calls per item (2 concepts, 2 checklists, 1 score); 7 with `translator="llm"`."""

    def __init__(
        self,
        task: str | TaskSpec = "literary",
        translator: Literal["external", "llm"] = "external",
        batch_latency: float = 0.1,
    ) -> None:
        super().__init__(task, translator, batch_latency)
        self.judge = ScoreJudgment()

    async def aforward(
        self, instruction: str, response: str, language: str = "en", response_language: str | None = None
    ) -> dspy.Prediction:
        language = normalize_language(language)
        response_language = normalize_language(response_language) if response_language else language
        usage = Usage()
        with collecting(usage):
            try:
                c, e = await self._front(
                    {
                        "instruction": (instruction, "instruction", language),
                        "response": (response, "response", response_language),
                    }
                )
                checklist = await self._checklist(
                    c["instruction"], c["response"], e["instruction"], e["response"]
                )
                pred = await self.judge.acall(
                    task=self.spec.task,
                    criteria=self.spec.criteria,
                    scale=self.spec.scale,
                    instruction=instruction,
                    response=response,
                    checklist=checklist,
                    # The judgment stage names both languages (as ours does on the originals).
                    source_language=language_name(language),
                    response_language=language_name(response_language),
                )
            except StageFailure as failure:
                failed = unparsed("pointwise", failure.stage, failure.reason, failure.raw, usage=usage)
                return failed.to_prediction()
        return JudgeResult(
            mode="pointwise",
            status="ok",
            method="paper",
            score=pred.score,
            feedback=pred.feedback,
            checklists={"response": checklist},
            usage=usage,
        ).to_prediction()


class PaperPairwise(_Paper):
    """8 LLM calls per item (3 concepts, 4 checklists, 1 verdict, order A/B only); 11 with
    `translator="llm"` (3 translations more)."""

    def __init__(
        self,
        task: str | TaskSpec = "chat",
        translator: Literal["external", "llm"] = "external",
        batch_latency: float = 0.1,
    ) -> None:
        super().__init__(task, translator, batch_latency)
        self.judge = VerdictJudgment()

    async def aforward(
        self, instruction: str, response_a: str, response_b: str, language: str = "en", **_: Any
    ) -> dspy.Prediction:
        language = normalize_language(language)
        usage = Usage()
        with collecting(usage):
            try:
                c, e = await self._front(
                    {
                        "instruction": (instruction, "instruction", language),
                        "a": (response_a, "response", language),
                        "b": (response_b, "response", language),
                    }
                )
                ca = await self._checklist(c["instruction"], c["a"], e["instruction"], e["a"])
                cb = await self._checklist(c["instruction"], c["b"], e["instruction"], e["b"])
                pred = await self.judge.acall(
                    task=self.spec.task,
                    criteria=self.spec.criteria,
                    instruction=instruction,
                    response_a=response_a,
                    response_b=response_b,
                    checklist_a=ca,
                    checklist_b=cb,
                )
            except StageFailure as failure:
                failed = unparsed("pairwise", failure.stage, failure.reason, failure.raw, usage=usage)
                return failed.to_prediction()
        order = OrderResult(
            order="AB", verdict=pred.verdict, shown_verdict=pred.verdict, feedback=pred.feedback
        )
        return JudgeResult(
            mode="pairwise",
            status="ok",
            method="paper",
            verdict=pred.verdict,
            orders=[order],
            feedback=pred.feedback,
            checklists={"a": ca, "b": cb},
            usage=usage,
        ).to_prediction()
