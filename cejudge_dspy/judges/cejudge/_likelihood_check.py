"""Could the backbone itself have written this translation of its source? Its own likelihood, not a judgment.

On the embedded 1.5B backbone the pointwise judge cannot see word salad: it scored a translation's own words
in random order 4.2 of 7 on average, as high as a perfect translation
(docs/measurements/embedded-obvious-items.md). The same model, asked for the probability of each token of that
text as its answer to "Translate this German text into English: <source>", sees it at once: a faithful
translation's tokens are likely (a mean log probability of about -0.5 to -2 per token), a shuffled one's are
not (about -5 to -9). So a task can declare `check_translation_likelihood = true` and CE-Judge's pointwise
judge then gives a translation whose mean token log probability is below `MEAN_FLOOR` the scale's lowest
level, with the figures in the record, without asking the LLM to judge it. It is not a quality score: on real
machine translations it ranks only into-English ones at all (Kendall 0.39 for ru-en, 0.03 for en-de, n 50
each), so it is used only to catch what no judge should score above the bottom.

Only where the check is sure: the floor sits below every real translation measured (see MEAN_FLOOR),
a text of fewer than `MIN_TOKENS` tokens is "unsure", and so is one too long for the scorer's context.
It needs a backbone that can score a given text: local GGUF models (`embedded`, `gguf:PATH`) can, through
their engine's `answer_logprobs`, and so can a server that forces an answer with a grammar and reports the
model's own token log probabilities (llama.cpp's, `backbones/_http_scoring.py`); a backbone that cannot
(a hosted API) does not run the check (the record has no `likelihood_check`, and a warning says so once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cejudge_dspy.data import language_name
from cejudge_dspy.judges._machinery._text_scoring import Scorer

# Chosen with benchmarks/experiments/likelihood_probe.py on the embedded backbone
# (docs/measurements/embedded-obvious-items.md): the six word-salad translations of the obvious set scored
# -4.98 to -8.98 per token; its 30 other translations (wrong meaning, wrong language and copies of the source
# included) -0.40 to -3.19; the 100 real translations of translation_da_dev -0.16 to -4.15, the lowest a
# 6-token title ("The Hipster Rink", human score 35 of 100) that MIN_TOKENS leaves unsure, the next -2.73.
# In-sample, so the floor keeps about half a nat from the nearest case on either side.
MEAN_FLOOR = -4.5
# A mean over a few tokens is noise: a short title or "Paris" is left to the judge.
MIN_TOKENS = 8

Verdict = Literal["implausible", "plausible", "unsure"]


@dataclass(frozen=True)
class LikelihoodCheck:
    """The backbone's mean and minimum token log probability of the translation (with the end of its
    turn) given a request to translate the source; "implausible" below `threshold`."""

    verdict: Verdict
    mean: float | None = None
    minimum: float | None = None
    tokens: int = 0
    threshold: float = MEAN_FLOOR
    reason: str | None = None

    def describe(self) -> str:
        if self.verdict != "implausible" or self.mean is None:
            return f"likelihood check: {self.verdict}" + (f" ({self.reason})" if self.reason else "")
        return (
            f"the backbone finds this text implausible as a translation of the source (mean token log "
            f"probability {self.mean:.2f}, below {self.threshold:g}: word salad or unrelated text)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "mean": self.mean,
            "minimum": self.minimum,
            "tokens": self.tokens,
            "threshold": self.threshold,
            "reason": self.reason,
        }


def translation_messages(source: str, source_language: str, target_language: str) -> list[dict[str, str]]:
    """The request the translation is scored as an answer to (the probe's wording, kept in step)."""
    return [
        {
            "role": "user",
            "content": f"Translate this {language_name(source_language)} text into "
            f"{language_name(target_language)}:\n\n{source}",
        }
    ]


def check_likelihood(
    score: Scorer,
    source: str,
    translation: str,
    source_language: str,
    target_language: str,
    threshold: float = MEAN_FLOOR,
) -> LikelihoodCheck:
    """Whether `translation` is a plausible translation of `source` to the backbone behind `score`."""
    messages = translation_messages(source, source_language, target_language)
    try:
        logprobs = score(messages, translation)
    except ValueError as exc:  # longer than the scorer's context
        return LikelihoodCheck("unsure", threshold=threshold, reason=str(exc))
    # The end-of-turn token is scored too; a text needs a few tokens of its own to be judged.
    if len(logprobs) < MIN_TOKENS + 1:
        return LikelihoodCheck("unsure", tokens=len(logprobs), threshold=threshold, reason="too short")
    mean = sum(logprobs) / len(logprobs)
    verdict: Verdict = "implausible" if mean < threshold else "plausible"
    return LikelihoodCheck(verdict, round(mean, 4), round(min(logprobs), 4), len(logprobs), threshold)
