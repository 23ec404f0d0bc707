"""Is a response written in the language it must be in? Language identification, not an LLM.

A translation into the wrong language, or the source copied untranslated, is the bottom of any translation
scale (LitEval's level 1: "untranslated"). Measured on the embedded 1.5B backbone, the judge cannot see it:
asked "is the translation written in English?" it answered P(yes) about 0.5 for every translation, right or
wrong, and scored copies of the source 5-7 (docs/measurements/embedded-obvious-items.md). A language
identifier sees it at a glance, so a task can declare the check (`check_response_language = true`) and
CE-Judge's pointwise judge then gives such a response the scale's lowest level, saying why in the record,
without asking the LLM.

The identifier is py3langid (langid.py's model, 97 languages, normalised probabilities). It is only
trusted where it is sure: at least `MIN_LETTERS` letters (a Han, kana or Hangul character counts as
three), the expected language below `RULED_OUT` and another one at least `PLAUSIBLE`. Everything else is
"unsure", and the LLM judges as usual. Macro-language variants count as the expected language (Wu or
Cantonese for Chinese, Norwegian Bokmal for Norwegian): a judge must not punish a dialect as a wrong language.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from cejudge_dspy.data import language_name
from cejudge_dspy.errors import InputError

MIN_LETTERS = 20  # shorter texts ("Paris", "9") carry too little evidence
PLAUSIBLE = 0.5  # with the expected language ruled out, a clear leader among the others (es over gl, pt)
RULED_OUT = 0.01
# A Han, kana or Hangul character carries about as much evidence as three Latin letters.
_DENSE = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")
# Codes py3langid may return for a language that is the expected one, or a variety of it.
_SAME: dict[str, frozenset[str]] = {
    "zh": frozenset({"zh", "wuu", "yue"}),
    "no": frozenset({"no", "nb", "nn"}),
    "nb": frozenset({"no", "nb", "nn"}),
    "ms": frozenset({"ms", "id"}),
    "sr": frozenset({"sr", "hr", "bs"}),
    "hr": frozenset({"sr", "hr", "bs"}),
    "bs": frozenset({"sr", "hr", "bs"}),
}


@dataclass(frozen=True)
class LanguageCheck:
    """The identifier's finding: "yes" (written in `expected`), "no" (surely another language) or
    "unsure" (too short, or not sure enough to overrule the judge)."""

    expected: str
    verdict: Literal["yes", "no", "unsure"]
    detected: str | None = None
    p_detected: float | None = None
    p_expected: float | None = None

    def describe(self) -> str:
        if self.verdict != "no" or self.detected is None:
            return f"language check: {self.verdict}"
        return (
            f"the response is written in {_name(self.detected)} (p = {self.p_detected:.2f}), not in "
            f"{language_name(self.expected)} (p = {self.p_expected:.3f}), by language identification"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "expected": self.expected,
            "verdict": self.verdict,
            "detected": self.detected,
            "p_detected": self.p_detected,
            "p_expected": self.p_expected,
        }


def check_language(text: str, expected: str) -> LanguageCheck:
    """Whether `text` is written in `expected` (a canonical code, e.g. "en", "zh-CN")."""
    base = expected.split("-")[0].lower()
    same = _SAME.get(base, frozenset({base}))
    if _evidence(text) < MIN_LETTERS:
        return LanguageCheck(expected, "unsure")
    ranked = _identifier().rank(text)
    p = {code: float(prob) for code, prob in ranked}
    detected, p_detected = ranked[0][0], float(ranked[0][1])
    p_expected = sum(p.get(code, 0.0) for code in same)
    # Surely another language: the expected one is ruled out and another one clearly leads (a Spanish
    # text whose probability splits over es/gl/pt still rules English out).
    if detected in same:
        verdict: Literal["yes", "no", "unsure"] = "yes"
    elif p_expected < RULED_OUT and p_detected >= PLAUSIBLE:
        verdict = "no"
    else:
        verdict = "unsure"
    return LanguageCheck(expected, verdict, detected, round(p_detected, 4), round(p_expected, 6))


def _evidence(text: str) -> int:
    """Letters in `text`, a dense-script character counted as three."""
    total = 0
    for ch in text:
        if ch.isalpha():
            total += 3 if unicodedata.name(ch, "").startswith(_DENSE) else 1
    return total


@cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _name(code: str) -> str:
    try:
        return language_name(code)
    except InputError:  # a code our table lacks (py3langid knows a few more): show the code
        return code
