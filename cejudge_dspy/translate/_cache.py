"""What the caching translators share: a text already in the target language passed through, results cached
per (translator and target, language, text), and one request per text in flight however many callers wait
for it. The target is English unless a translator is built for another (`cejudge consistency` renders items
into other languages with the same translators)."""

from __future__ import annotations

import asyncio

from cejudge_dspy.data import is_english, normalize_language

_Key = tuple[str, str, str]


def _one_line(exc: BaseException, limit: int = 160) -> str:
    # deep-translator messages can span lines (one lists every supported language).
    first = (str(exc).strip().splitlines() or [""])[0]
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _CachedTranslator:
    """Shared short-cut for a text already in the target language, result cache and in-flight
    de-duplication."""

    name = "cached"

    def __init__(self, target: str = "en") -> None:
        self._cache: dict[_Key, str] = {}
        self._pending: dict[_Key, asyncio.Task[str]] = {}
        self.target = normalize_language(target)
        # The cache key's first part: the translator's name, with the target when it is not English, so
        # one cache file keeps translations into several languages apart ("google>ko").
        self.key_name = self.name if is_english(self.target) else f"{self.name}>{self.target}"

    def _is_target(self, code: str) -> bool:
        return is_english(code) if is_english(self.target) else code == self.target

    async def translate(self, text: str, language: str) -> str:
        code = normalize_language(language)
        if self._is_target(code) or not text.strip():
            return text
        key = (self.key_name, code, text)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        loop = asyncio.get_running_loop()
        task = self._pending.get(key)
        if task is None or task.get_loop() is not loop:  # a task from a finished loop cannot be awaited
            task = loop.create_task(self._run(key, text, code))
            # Retrieve the exception even if every waiter was cancelled, to avoid "never retrieved" noise.
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._pending[key] = task
        # shield: one cancelled waiter must not cancel the translation the other waiters share.
        return await asyncio.shield(task)

    async def _run(self, key: _Key, text: str, code: str) -> str:
        try:
            result = await self._translate(text, code)
            self._store(key, result)
            return result
        finally:
            if self._pending.get(key) is asyncio.current_task():
                del self._pending[key]

    def _lookup(self, key: _Key) -> str | None:
        return self._cache.get(key)

    def _store(self, key: _Key, translation: str) -> None:
        self._cache[key] = translation

    async def _translate(self, text: str, code: str) -> str:
        raise NotImplementedError
