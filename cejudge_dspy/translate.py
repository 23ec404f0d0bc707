"""Translators from a source language into English, used before CE-Judge builds its checklists.

Three implementations share one contract (`Translator`): ``none`` passes text through, ``google``
calls Google Translate through deep-translator (needs the network), ``llm`` wraps the judge's own
DSPy translation stage (works offline; the default). English is never sent to any translator.
Results are cached per (translator, language, text), and a request already in flight is awaited
rather than repeated, so a judge can translate the same instruction for many responses for free.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import logging
import os
import re
import weakref
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import deep_translator
import requests
from deep_translator import exceptions as dt_errors
from deep_translator.constants import GOOGLE_LANGUAGES_TO_CODES

from cejudge_dspy.errors import CEJudgeError, InputError, TranslationError
from cejudge_dspy.languages import is_english, language_name, normalize_language

log = logging.getLogger(__name__)

GOOGLE_CHAR_LIMIT = 5000
"""deep-translator refuses texts of this many characters or more."""

Stage = Callable[[str, str], Awaitable[str]]
_Key = tuple[str, str, str]


@runtime_checkable
class Translator(Protocol):
    name: str

    async def translate(self, text: str, language: str) -> str:
        """Translate `text` from `language` (a canonical source code) into English."""
        ...


def _one_line(exc: BaseException, limit: int = 160) -> str:
    # deep-translator messages can span lines (one lists every supported language).
    first = (str(exc).strip().splitlines() or [""])[0]
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


class NoTranslator:
    """``none``: judge the original text."""

    name = "none"

    async def translate(self, text: str, language: str) -> str:
        return text


class _CachedTranslator:
    """Shared English short-cut, result cache and in-flight de-duplication."""

    name = "cached"

    def __init__(self) -> None:
        self._cache: dict[_Key, str] = {}
        self._pending: dict[_Key, asyncio.Task[str]] = {}

    async def translate(self, text: str, language: str) -> str:
        code = normalize_language(language)
        if is_english(code) or not text.strip():
            return text
        key = (self.name, code, text)
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


class LLMTranslator(_CachedTranslator):
    """``llm``: the judge's translation stage, called as ``stage(text, language_name)``."""

    name = "llm"

    def __init__(self, stage: Stage) -> None:
        super().__init__()
        self._stage = stage

    async def _translate(self, text: str, code: str) -> str:
        try:
            result = self._stage(text, language_name(code))
            if inspect.isawaitable(result):  # tolerate a plain function as the stage
                result = await result
        except CEJudgeError:
            raise
        except Exception as exc:
            raise TranslationError(
                f"LLM translation from {language_name(code)} ('{code}') failed ({_one_line(exc)}); "
                "check the judge backbone or use --translator none"
            ) from exc
        if not isinstance(result, str) or not result.strip():
            raise TranslationError(
                f"LLM translation from {language_name(code)} ('{code}') came back empty; "
                "try a stronger backbone, --translator google or --translator none"
            )
        return result


# Canonical codes Google spells differently; other region variants fall back to the base language.
_GOOGLE_CODES = {"zh": "zh-CN", "zh-HK": "zh-TW", "he": "iw", "jv": "jw", "nb": "no", "nn": "no"}
_GOOGLE_SUPPORTED = frozenset(GOOGLE_LANGUAGES_TO_CODES.values())


def google_code(code: str) -> str:
    """The code deep-translator's GoogleTranslator expects for a canonical code."""
    code = normalize_language(code)
    mapped = _GOOGLE_CODES.get(code, code)
    if mapped not in _GOOGLE_SUPPORTED:
        mapped = mapped.partition("-")[0]
    if mapped not in _GOOGLE_SUPPORTED:
        raise TranslationError(
            f"Google Translate does not support {language_name(code)} ('{code}'); "
            "use --translator llm or --translator none"
        )
    return mapped


# Boundaries from coarse to fine: paragraphs, lines, sentences, words. Latin sentence ends need
# following whitespace so "3.14" or "e.g.x" is never cut; CJK full stops end a sentence on their own.
_BOUNDARIES = (
    re.compile(r"\n[ \t]*\n\s*"),
    re.compile(r"\n\s*"),
    re.compile(r"[.!?…;؟।][\"'”’»)\]]*\s+|[。！？；][」』”’)）]*\s*"),
    re.compile(r"\s+"),
)


def split_text(text: str, limit: int = GOOGLE_CHAR_LIMIT - 1) -> list[str]:
    """Split `text` into pieces of at most `limit` characters that join back to `text` exactly.

    Cuts at the coarsest boundary that works (paragraph, line, sentence, word); a single word longer
    than `limit` is the only thing ever cut in the middle.
    """
    return _split(text, limit, 0)


def _split(text: str, limit: int, level: int) -> list[str]:
    if len(text) <= limit:
        return [text]
    if level == len(_BOUNDARIES):
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    cuts = [m.end() for m in _BOUNDARIES[level].finditer(text) if 0 < m.end() < len(text)]
    chunks: list[str] = []
    current = ""
    for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True):
        part = text[a:b]
        if len(part) > limit:
            chunks += [current] if current else []
            chunks += _split(part, limit, level + 1)
            current = ""
        elif len(current) + len(part) > limit:
            chunks.append(current)
            current = part
        else:
            current += part
    return chunks + ([current] if current else [])


def default_cache_file() -> Path:
    """``$CEJUDGE_CACHE/translations.jsonl``, else ``~/.cache/cejudge-dspy/translations.jsonl``."""
    root = os.environ.get("CEJUDGE_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "cejudge-dspy") / "translations.jsonl"


class GoogleTranslator(_CachedTranslator):
    """``google``: Google Translate via deep-translator, source -> English.

    `sleep` is awaited between retries (delay ``backoff * 2**attempt``); tests pass a fake.
    `persist` keeps translations in an append-only JSON-lines file across runs (`cache_file`,
    default `default_cache_file()`), since each Google call is slow and rate limited.
    """

    name = "google"
    _FATAL = (
        dt_errors.NotValidPayload,
        dt_errors.NotValidLength,
        dt_errors.LanguageNotSupportedException,
        dt_errors.InvalidSourceOrTargetLanguage,
    )

    def __init__(
        self,
        *,
        retries: int = 3,
        backoff: float = 1.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        max_concurrency: int = 4,
        persist: bool = True,
        cache_file: str | os.PathLike[str] | None = None,
        proxies: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.retries, self.backoff, self._sleep = max(0, retries), backoff, sleep
        self.max_concurrency, self.proxies = max(1, max_concurrency), proxies
        self.cache_file: Path | None = Path(cache_file) if cache_file else default_cache_file()
        if not persist:
            self.cache_file = None
        self._loaded = False
        self._needs_newline = False
        # one semaphore per event loop: a semaphore is bound to the loop that first waits on it
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    async def _translate(self, text: str, code: str) -> str:
        source = google_code(code)
        pieces = split_text(text, GOOGLE_CHAR_LIMIT - 1)
        return "".join(await asyncio.gather(*(self._piece(p, source, code) for p in pieces)))

    async def _piece(self, piece: str, source: str, code: str) -> str:
        core = piece.strip()
        if not core:
            return piece
        # deep-translator strips its input and output; put the piece's own whitespace back.
        lead, trail = piece[: len(piece) - len(piece.lstrip())], piece[len(piece.rstrip()) :]
        return lead + await self._call(core, source, code) + trail

    async def _call(self, text: str, source: str, code: str) -> str:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
        error: Exception = RuntimeError("no attempt made")
        for attempt in range(self.retries + 1):
            if attempt:
                await self._sleep(self.backoff * 2 ** (attempt - 1))
            try:
                async with semaphore:
                    return await asyncio.to_thread(self._request, text, source)
            except self._FATAL as exc:
                error = exc
                break
            except Exception as exc:  # network, HTTP 429/5xx, page layout: all worth another try
                error = exc
        offline = isinstance(error, requests.exceptions.ConnectionError)
        reason = "cannot reach translate.google.com (offline?)" if offline else _one_line(error)
        raise TranslationError(
            f"Google Translate failed for {language_name(code)} ('{code}') after {attempt + 1} attempt(s): "
            f"{reason}; use --translator llm (offline) or --translator none"
        ) from error

    def _request(self, text: str, source: str) -> str:
        # A fresh client per call: deep-translator keeps the request text on the instance, so
        # sharing one across threads would mix texts. Looked up on the module so tests can patch it.
        client = deep_translator.GoogleTranslator(source=source, target="en", proxies=self.proxies)
        result = client.translate(text)
        return text if result is None else str(result)  # None: Google echoed the input back

    def _lookup(self, key: _Key) -> str | None:
        if not self._loaded:
            self._loaded = True
            self._load()
        return super()._lookup(key)

    def _load(self) -> None:
        if self.cache_file is None or not self.cache_file.is_file():
            return
        try:
            raw = self.cache_file.read_bytes()
        except OSError as exc:
            log.warning("ignoring unreadable translation cache %s: %s", self.cache_file, exc)
            return
        self._needs_newline = bool(raw) and not raw.endswith(b"\n")
        for line in raw.decode("utf-8", errors="replace").splitlines():
            try:  # a run killed mid-write leaves a truncated last line: skip it
                rec = json.loads(line)
                key = (rec["translator"], rec["language"], rec["text"])
                value = rec["translation"]
            except (ValueError, KeyError, TypeError):
                continue
            if key[0] == self.name and all(isinstance(v, str) for v in (*key, value)):
                self._cache[key] = value

    def _store(self, key: _Key, translation: str) -> None:
        super()._store(key, translation)
        if self.cache_file is None:
            return
        record = dict(zip(("translator", "language", "text"), key, strict=True), translation=translation)
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            with self.cache_file.open("a", encoding="utf-8") as f:
                f.write(("\n" if self._needs_newline else "") + json.dumps(record, ensure_ascii=False) + "\n")
            self._needs_newline = False
        except OSError as exc:  # the cache only saves time; keep translating without it
            log.warning("translation cache %s disabled: %s", self.cache_file, exc)
            self.cache_file = None


_TRANSLATORS: dict[str, type] = {"none": NoTranslator, "google": GoogleTranslator, "llm": LLMTranslator}


def make_translator(name: str, *, stage: Stage | None = None, **options: Any) -> Translator:
    """Build a translator by name; `stage` is used by ``llm`` only, `options` go to the constructor."""
    key = str(name).strip().lower()
    choices = ", ".join(sorted(_TRANSLATORS))
    if key not in _TRANSLATORS:
        close = difflib.get_close_matches(key, list(_TRANSLATORS), n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else ";"
        raise InputError(f"unknown translator {name!r}{hint} choose one of: {choices}", field="translator")
    cls = _TRANSLATORS[key]
    allowed = set(inspect.signature(cls).parameters) - {"stage"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise InputError(
            f"translator '{key}' does not take option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(allowed)) or 'none'}",
            field="translator",
        )
    if cls is LLMTranslator:
        if stage is None:
            raise InputError(
                "translator 'llm' needs the judge's translation stage; build it through the judge, "
                "or use --translator google or none",
                field="translator",
            )
        return LLMTranslator(stage)
    return cls(**options)


async def translate_many(translator: Translator, texts: Iterable[str], language: str) -> list[str]:
    """Translate several texts concurrently; duplicates share one request through the cache."""
    return list(await asyncio.gather(*(translator.translate(t, language) for t in texts)))
