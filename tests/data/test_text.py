"""`text_problem` finds a clean text with one scan (issue #49: 16,000 texts checked on every resume) and
names the same problem as the plain definition: a lone surrogate first, then a control character, then a
text of only white space or invisible characters."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from cejudge_dspy.data._text import text_problem

INVISIBLE = re.compile(r"[\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u180e\u2028\u2029\s]")


def by_definition(value: str) -> str | None:
    """The check as it reads: each kind of problem searched for over the whole text, in order."""
    if bad := re.search(r"[\ud800-\udfff]", value):
        return (
            f"holds half a character (a lone surrogate U+{ord(bad[0]):04X} at position {bad.start()}, "
            "e.g. a cut emoji); fix the text"
        )
    if bad := re.search(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]", value):
        return (
            f"holds a control character (U+{ord(bad[0]):04X} at position {bad.start()}), not text; remove it"
        )
    if not INVISIBLE.sub("", value):
        return (
            "is empty"
            if not value.strip()
            else "is empty (only invisible characters, e.g. zero-width spaces)"
        )
    return None


CHARS = list(
    "a é😀\t\n\r\x00\x08\x0b\x0c\x0e\x1c\x1f\x7f\x85\x9f\xa0\u200b\u200f\u2060\u2064\u2065\ufeff\u00ad"
)
CHARS += ["\u180e", "\u2028", "\u2029", "\u3000", "\ud83d", "\udc00"]


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(CHARS), max_size=8))
def test_the_problem_named_is_the_definitions(value: str) -> None:
    assert text_problem(value) == by_definition(value)


def test_each_problem_is_named() -> None:
    assert text_problem("ok \u200b") is None
    assert text_problem("a\x1b[2Jb \ud83d").startswith(
        "holds half a character (a lone surrogate U+D83D at position 7"
    )
    assert text_problem("a\x1b[2J").startswith("holds a control character (U+001B at position 1)")
    assert text_problem(" \u200b\ufeff") == "is empty (only invisible characters, e.g. zero-width spaces)"
    assert text_problem(" \n") == "is empty"
