"""Checklist answers under the questions they answer: the judge names a question in free text, so each
answer is placed by the words it repeats (display only)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def match_answers(
    answers: Sequence[str], checklists: dict[str, list[str]]
) -> tuple[dict[tuple[str, int], list[str]], list[str]]:
    """Place each free-text answer under the checklist question it names.

    The judge writes short answers "each naming the item", not numbered ones, so an answer goes to the
    question most of whose words it repeats (at least 60%); the repeated question is cut from the shown
    answer when the answer has the form `question -> answer`. Answers that name no question are
    returned apart, never dropped. Display only: nothing downstream reads this matching."""
    matched: dict[tuple[str, int], list[str]] = {}
    unmatched: list[str] = []
    questions = [(name, i, _words(q)) for name, qs in checklists.items() for i, q in enumerate(qs)]
    for answer in answers:
        said = _words(answer)
        best, best_score = None, 0.0
        for name, i, words in questions:
            score = len(words & said) / len(words) if words else 0.0
            if score > best_score:
                best, best_score = (name, i), score
        if best is None or best_score < 0.6:
            unmatched.append(answer)
            continue
        text, asked = answer, next(words for n, i, words in questions if (n, i) == best)
        for sep in ("->", "→"):
            head, found, tail = answer.partition(sep)
            if found and tail.strip() and len(asked & _words(head)) >= 0.6 * len(asked):
                text = tail.strip()
                break
        matched.setdefault(best, []).append(text)
    return matched, unmatched


def questions_with_answers(
    checklist: Sequence[str], matched: dict[tuple[str, int], list[str]], name: str
) -> Text:
    if not checklist:
        return Text("(none)")
    text = Text()
    for i, question in enumerate(checklist):
        text.append(("\n" if i else "") + f"• {question}")
        for answer in matched.get((name, i), []):
            text.append(f"\n    → {answer}", style="cyan")
    return text
