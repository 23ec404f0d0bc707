"""What a backbone gave the judges: token probabilities, scoring of a given text, a JSON schema per call.

A run records it per item (`Record.features`), so a reader can tell a verdict decided from token
probabilities from one that fell back to the argmax answer, and a likelihood tie-break from a pair the
grades alone decided, without guessing from the server's name:

* `logprobs`: the backbone answered a judgment call with token log probabilities and their alternatives
  (`_probability_readings.tokens_of`); False until it has, and for one that refused the option or gave none;
* `scoring`: it scores a given text as its own answer (`_text_scoring.scorer_of`: a local engine, or a server
  that forces an answer with a grammar), which the likelihood tie-breaker and check need; None for a server
  never asked (no item needed a text scored, so the run sent no probe);
* `schema`: DSPy sends it a JSON schema for structured output (`lm.supports_response_schema`).

Each is read off the backbone's `backbones.capabilities(lm)`.

Beside them a record keeps `adapter`, the prompt format the calls were asked in (`chat` or `json`,
`backbones.adapter_name`): what `--adapter` resolved to, which `auto` in run.json does not say. It is not a
feature the backbone gives, so `missing_features` and `combined_features` read FEATURES only.
"""

from __future__ import annotations

from typing import Any

FEATURES = ("logprobs", "scoring", "schema")


def backbone_features(lm: Any, adapter: Any = None) -> dict[str, bool | str | None]:
    """`{"logprobs": ..., "scoring": ..., "schema": ..., "adapter": ...}` for `lm` as the judges have seen
    it so far, asked through `adapter` (the current `dspy.settings.adapter`; None: DSPy's default, chat)."""
    # Imported here: reading records' features (a resume's summary) never needs the backbones' DSPy side.
    from cejudge_dspy.backbones import adapter_name, capabilities

    asked = {"adapter": adapter_name(adapter)}
    if lm is None:
        return dict.fromkeys(FEATURES, False) | asked
    known = capabilities(lm)
    return {"logprobs": known.logprobs, "scoring": known.scoring, "schema": known.schema} | asked


def missing_features(features: dict[str, Any]) -> list[str]:
    """The features a backbone is known to lack (False, not None), in FEATURES order."""
    return [name for name in FEATURES if features.get(name) is False]


def combined_features(per_item: list[dict[str, Any] | None]) -> dict[str, bool | None]:
    """A run's features from its records': True where any item had it, else False where any was refused
    it, else None (records from before features, or never asked)."""
    known = [f for f in per_item if f]
    combined: dict[str, bool | None] = {}
    for name in FEATURES:
        values = [f.get(name) for f in known]
        combined[name] = True if True in values else (False if False in values else None)
    return combined
