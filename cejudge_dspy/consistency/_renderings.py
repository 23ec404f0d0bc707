"""Renderings: an item's instruction and responses in one of the languages a consistency run checks, and
the renderings file that keeps them (`renderings.jsonl`, one line per item and language).

A rendering comes from the item's own parallel version in that language when it has one, is the original
when every text is already in that language, and is otherwise written by the translator (`translate`,
built for that target). Each is appended to the file once it exists, so a rerun translates nothing twice
and a person can read what was judged. A translation that fails is a line with status `error`: its item
is left out of that language's run, and the next run tries it again.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cejudge_dspy.data import Item, normalize_language
from cejudge_dspy.errors import CEJudgeError, TranslationError
from cejudge_dspy.files import MAX_RESULTS_BYTES, parse_json, read_bytes
from cejudge_dspy.runs import append_record
from cejudge_dspy.translate import Translator

TEXT_FIELDS = {
    "pairwise": ("instruction", "response_a", "response_b"),
    "pointwise": ("instruction", "response"),
}
# Where a rendering's texts came from, besides the translator's name.
PARALLEL, ORIGINAL = "parallel", "original"


@dataclass
class Rendering:
    """One line of renderings.jsonl: item `id` in `language`, its texts and where they came from."""

    id: str
    language: str
    source: str  # the translator's name, "parallel" (the item's own version) or "original" (no change)
    status: str = "ok"  # "ok" | "error"
    texts: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rendering:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


def field_language(item: Item, name: str) -> str:
    """The language a text of `item` is written in: a pointwise response's own, else the item's."""
    if name == "response" and item.response_language:
        return normalize_language(item.response_language)
    return normalize_language(item.language or "en")


def rendered_item(item: Item, rendering: Rendering) -> Item:
    """`item` as judged in the rendering's language: the same id and label, its texts replaced."""
    language = normalize_language(rendering.language)
    changes: dict[str, Any] = {"language": language}
    if item.mode == "pointwise":
        changes["response_language"] = None  # instruction and response now share the language
    return dataclasses.replace(item, **changes, **rendering.texts)


def read_renderings(path: Path) -> dict[tuple[str, str], Rendering]:
    """The renderings a file holds by (id, language), the last line of each winning; an unreadable line
    (a torn last line after a crash) is skipped, so its rendering is made again."""
    out: dict[tuple[str, str], Rendering] = {}
    if not path.exists():
        return out
    text = read_bytes(path, CEJudgeError, limit=MAX_RESULTS_BYTES).decode("utf-8", errors="replace")
    for line in text.splitlines():
        try:
            rendering = Rendering.from_dict(parse_json(line, str(path), CEJudgeError))
        except (CEJudgeError, ValueError, TypeError, AttributeError):
            continue
        out[(rendering.id, rendering.language)] = rendering
    return out


async def render_items(
    items: Sequence[Item],
    languages: Sequence[str],
    translator_for: Callable[[str], Translator],
    path: Path,
    *,
    parallel: Mapping[tuple[str, str], dict[str, str]] | None = None,
    concurrency: int = 1,
    on_rendering: Callable[[Rendering], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> dict[tuple[str, str], Rendering]:
    """Every item in every language, from the file where it is there already, else made and appended.

    `translator_for(language)` builds the translator into `language` (once per language); `parallel` maps
    (item id, language) to the item's own texts in that language. Concurrency is shared by all texts;
    `on_start(n)` is told how many renderings are still to make."""
    done = read_renderings(path)
    translators = {lang: translator_for(lang) for lang in languages}
    gate = asyncio.Semaphore(max(1, concurrency))
    parallel = parallel or {}

    async def one(item: Item, language: str) -> None:
        async with gate:
            rendering = await _render(
                item, language, translators[language], parallel.get((item.id, language))
            )
        append_record(path, rendering.to_dict())
        done[(item.id, language)] = rendering
        if on_rendering is not None:
            on_rendering(rendering)

    todo = [
        (item, lang)
        for item in items
        for lang in languages
        if (old := done.get((item.id, lang))) is None or old.status != "ok"
    ]
    if on_start is not None:
        on_start(len(todo))
    await asyncio.gather(*(one(item, lang) for item, lang in todo))
    return done


async def _render(item: Item, language: str, translator: Translator, own: dict[str, str] | None) -> Rendering:
    """The item's own texts where it has them, the texts already in `language` as they are, the translator's
    for the rest; the source names the translator when it wrote any text."""
    own = own or {}
    names = TEXT_FIELDS[item.mode]
    todo = [n for n in names if n not in own and field_language(item, n) != language]
    try:
        written = await asyncio.gather(
            *(translator.translate(getattr(item, n), field_language(item, n)) for n in todo)
        )
    except TranslationError as exc:
        return Rendering(item.id, language, translator.name, "error", error=str(exc))
    translated = dict(zip(todo, written, strict=True))
    texts = {n: own.get(n, translated.get(n, getattr(item, n))) for n in names}
    source = translator.name if todo else PARALLEL if own else ORIGINAL
    return Rendering(item.id, language, source, texts=texts)
