"""Translators from a source language into English, used before CE-Judge builds its checklists, or into
another target language, used by `cejudge consistency` to render items in the languages it checks.

Three implementations share one contract (`Translator`): ``none`` passes text through, ``google``
calls Google Translate through deep-translator (needs the network), ``llm`` wraps the judge's own
DSPy translation stage (works offline; the default). A text already in the target language (English,
by default) is never sent to any translator. Results are cached per (translator and target, language,
text), and a request already in flight is awaited rather than repeated, so a judge can translate the
same instruction for many responses for free.
The cache lives in _cache.py and ``google`` in _google.py.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from cejudge_dspy.data import language_name
from cejudge_dspy.errors import CEJudgeError, InputError, TranslationError
from cejudge_dspy.translate._cache import _CachedTranslator, _one_line
from cejudge_dspy.translate._google import GoogleTranslator

Stage = Callable[[str, str], Awaitable[str]]


@runtime_checkable
class Translator(Protocol):
    name: str

    async def translate(self, text: str, language: str) -> str:
        """Translate `text` from `language` (a canonical source code) into the translator's target
        (English unless it was built for another)."""
        ...


class NoTranslator:
    """``none``: judge the original text."""

    name = "none"

    def __init__(self, target: str = "en") -> None:
        self.target = target

    async def translate(self, text: str, language: str) -> str:
        return text


class LLMTranslator(_CachedTranslator):
    """``llm``: the judge's translation stage, called as ``stage(text, language_name)``; a translator into
    another `target` than English is given a stage that writes that language."""

    name = "llm"

    def __init__(self, stage: Stage, target: str = "en") -> None:
        super().__init__(target)
        self._stage = stage

    async def _translate(self, text: str, code: str) -> str:
        try:
            result = self._stage(text, language_name(code))
            if inspect.isawaitable(result):  # tolerate a plain function as the stage
                result = await result
        except CEJudgeError:
            raise
        except Exception as exc:
            raise TranslationError(
                f"LLM translation from {language_name(code)} ('{code}') failed ({_one_line(exc)}); "
                "check the judge backbone or use --translator none"
            ) from exc
        if not isinstance(result, str) or not result.strip():
            raise TranslationError(
                f"LLM translation from {language_name(code)} ('{code}') came back empty; "
                "try a stronger backbone, --translator google or --translator none"
            )
        return result


_TRANSLATORS: dict[str, type] = {"none": NoTranslator, "google": GoogleTranslator, "llm": LLMTranslator}


def make_translator(
    name: str, *, stage: Stage | None = None, target: str = "en", **options: Any
) -> Translator:
    """Build a translator by name into `target` (English by default); `stage` is used by ``llm`` only,
    `options` go to the constructor."""
    key = str(name).strip().lower()
    choices = ", ".join(sorted(_TRANSLATORS))
    if key not in _TRANSLATORS:
        close = difflib.get_close_matches(key, list(_TRANSLATORS), n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else ";"
        raise InputError(f"unknown translator {name!r}{hint} choose one of: {choices}", field="translator")
    cls = _TRANSLATORS[key]
    allowed = set(inspect.signature(cls).parameters) - {"stage", "target"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise InputError(
            f"translator '{key}' does not take option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(allowed)) or 'none'}",
            field="translator",
        )
    if cls is LLMTranslator:
        if stage is None:
            raise InputError(
                "translator 'llm' needs the judge's translation stage; build it through the judge, "
                "or use --translator google or none",
                field="translator",
            )
        return LLMTranslator(stage, target)
    return cls(target=target, **options)


async def translate_many(translator: Translator, texts: Iterable[str], language: str) -> list[str]:
    """Translate several texts concurrently; duplicates share one request through the cache."""
    return list(await asyncio.gather(*(translator.translate(t, language) for t in texts)))
