"""Translation to English behind one protocol: the judge backbone (`llm`), Google Translate, or none."""

from cejudge_dspy.translate._translators import (
    LLMTranslator,
    NoTranslator,
    Translator,
    make_translator,
    translate_many,
)

__all__ = [
    "LLMTranslator",
    "NoTranslator",
    "Translator",
    "make_translator",
    "translate_many",
]
