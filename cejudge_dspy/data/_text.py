"""What counts as text on the way in: every item text and id is checked once, when it is loaded.

A text the package cannot carry safely is refused with the item and field named, never passed on:

- a lone surrogate (half of an emoji, `"bad \\ud83d"` in JSON) has no UTF-8 form: written into
  results.jsonl it used to stop the record writer for every item in flight, on every rerun;
- a control character other than tab, newline and carriage return (NUL, ESC and the terminal sequences it
  starts, DEL, the C1 controls) is not text a person wrote, and would reach a terminal that shows the item;
- a text made only of white space and invisible characters (zero-width spaces, joiners, BOMs) is empty:
  judging it would grade nothing;
- bytes (a Parquet binary column) are not text: `str(b"hello")` would be judged as "b'hello'".
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls but tab, newline and carriage return; DEL; the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Characters that show nothing: zero-width space/joiners, word joiner, BOM, soft hyphen, Mongolian vowel
# separator, the invisible operators; with str.isspace, what a text "only of invisible characters" holds.
_INVISIBLE = r"\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u180e\u2028\u2029\s"
# One character that shows: searching for it stops at the first (a text's first character, as a rule)
# where removing every invisible character would copy the whole text.
_VISIBLE = re.compile(f"[^{_INVISIBLE}]")
# Either kind of refused character: one scan finds a text clean (nearly every text), and only a text it
# flags is scanned again for the problem to name (a lone surrogate first, wherever it is).
_REFUSED = re.compile(r"[\ud800-\udfff\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")


def text_problem(value: str) -> str | None:
    """Why `value` cannot be judged as text (None when it can)."""
    if _VISIBLE.search(value) and not _REFUSED.search(value):
        return None
    if bad := _SURROGATE.search(value):
        return (
            f"holds half a character (a lone surrogate U+{ord(bad[0]):04X} at position {bad.start()}, "
            "e.g. a cut emoji); fix the text"
        )
    if bad := _CONTROL.search(value):
        return (
            f"holds a control character (U+{ord(bad[0]):04X} at position {bad.start()}), not text; remove it"
        )
    if not _VISIBLE.search(value):
        return (
            "is empty"
            if not value.strip()
            else "is empty (only invisible characters, e.g. zero-width spaces)"
        )
    return None


def kind_problem(value: Any) -> str | None:
    """Why a non-str value cannot stand for a text (None for a str, a number is for the caller)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "expected text, got bytes (a binary column); store the column as text (UTF-8 strings)"
    if isinstance(value, (dict, list, tuple)):
        return f"expected text, got {type(value).__name__}"
    return None


def id_problem(value: Any) -> str | None:
    """Why a row's id cannot be an item id: ids are text or whole numbers, and plain text."""
    if isinstance(value, (bool, dict, list, tuple, bytes, bytearray, memoryview)):
        return (
            f"must be text or a number, got {type(value).__name__}; map another column with --field id=COLUMN"
        )
    return text_problem(str(value).strip())
