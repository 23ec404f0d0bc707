"""What CE-Judge's first stages learn about a response, and the record fields that come from it.

`Understanding` holds one response's concepts, English texts and two checklist directions; `findings`
turns those of every response into the JudgeResult fields (concepts, translations, checklists) so the
judges' `aforward` only has to say what the method does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cejudge_dspy.usage import Usage


@dataclass(frozen=True)
class Understanding:
    """What the first two stages learned about one response (and its instruction)."""

    instruction: str
    response: str
    instruction_concepts: list[str]
    instruction_english: str
    concepts: list[str]
    english: str
    response_to_instruction: list[str]
    instruction_to_response: list[str]

    @property
    def checklist(self) -> list[str]:
        """The concatenated checklist the judgment sees: response->instruction, then the reverse."""
        return self.response_to_instruction + self.instruction_to_response

    @property
    def checklist_parts(self) -> dict[str, list[str]]:
        return {
            "response_to_instruction": self.response_to_instruction,
            "instruction_to_response": self.instruction_to_response,
        }


def findings(usage: Usage, **seen: Understanding) -> dict[str, Any]:
    """The JudgeResult fields the understanding stages fill, keyed by response name ("a", "b" or
    "response"); every response shares the item's instruction."""
    first = next(iter(seen.values()))
    return {
        "usage": usage,
        "concepts": {"instruction": first.instruction_concepts}
        | {name: s.concepts for name, s in seen.items()},
        "translations": translated_only(
            instruction=(first.instruction, first.instruction_english),
            **{name: (s.response, s.english) for name, s in seen.items()},
        ),
        "checklist_parts": {name: s.checklist_parts for name, s in seen.items()},
        "checklists": {name: s.checklist for name, s in seen.items()},
    }


def translated_only(**pairs: tuple[str, str]) -> dict[str, str]:
    """Keep only the texts that were actually translated (English passes through untouched)."""
    return {name: english for name, (original, english) in pairs.items() if english != original}
