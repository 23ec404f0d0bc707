"""``google``: Google Translate through deep-translator (needs the network), source -> English (or the
target a translator is built for).

Texts longer than Google's limit are split at the coarsest boundary that fits and joined back exactly;
translations are kept across runs in an append-only JSON-lines file, since each call is slow and rate
limited.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path

import requests
import tenacity

from cejudge_dspy.data import is_english, language_name, normalize_language
from cejudge_dspy.errors import TranslationError
from cejudge_dspy.translate._cache import _CachedTranslator, _Key, _one_line

# The logger keeps the name it had before the split, so existing logging filters still match.
log = logging.getLogger("cejudge_dspy.translate._translators")

GOOGLE_CHAR_LIMIT = 5000
"""deep-translator refuses texts of this many characters or more."""

# Canonical codes Google spells differently; other region variants fall back to the base language.
_GOOGLE_CODES = {"zh": "zh-CN", "zh-HK": "zh-TW", "he": "iw", "jv": "jw", "nb": "no", "nn": "no"}


# deep-translator is imported when Google is asked, not with the package: it imports BeautifulSoup and
# soupsieve (0.1-0.3 s), which a run translating with its LLM, or a resume judging nothing, never uses.
@functools.cache
def _google_supported() -> frozenset[str]:
    from deep_translator.constants import GOOGLE_LANGUAGES_TO_CODES

    return frozenset(GOOGLE_LANGUAGES_TO_CODES.values())


@functools.cache
def _fatal_errors() -> tuple[type[Exception], ...]:
    """What Google refuses (a payload, a length, a language): not worth another try."""
    from deep_translator import exceptions as dt_errors

    return (
        dt_errors.NotValidPayload,
        dt_errors.NotValidLength,
        dt_errors.LanguageNotSupportedException,
        dt_errors.InvalidSourceOrTargetLanguage,
    )


def google_code(code: str) -> str:
    """The code deep-translator's GoogleTranslator expects for a canonical code."""
    code = normalize_language(code)
    mapped = _GOOGLE_CODES.get(code, code)
    if mapped not in _google_supported():
        mapped = mapped.partition("-")[0]
    if mapped not in _google_supported():
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
        target: str = "en",
    ) -> None:
        super().__init__(target)
        self.target_code = "en" if is_english(self.target) else google_code(self.target)
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
        # Network errors, HTTP 429/5xx and page-layout changes are worth another try; a payload, length
        # or language Google refuses is not.
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self.retries + 1),
            wait=tenacity.wait_exponential(multiplier=self.backoff, exp_base=2, min=0),
            retry=tenacity.retry_if_not_exception_type(_fatal_errors()),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    async with semaphore:
                        return await asyncio.to_thread(self._request, text, source)
        except Exception as exc:
            tries = retrying.statistics.get("attempt_number", 1)
            offline = isinstance(exc, requests.exceptions.ConnectionError)
            reason = "cannot reach translate.google.com (offline?)" if offline else _one_line(exc)
            raise TranslationError(
                f"Google Translate failed for {language_name(code)} ('{code}') after {tries} attempt(s): "
                f"{reason}; use --translator llm (offline) or --translator none"
            ) from exc
        raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover

    def _request(self, text: str, source: str) -> str:
        # A fresh client per call: deep-translator keeps the request text on the instance, so
        # sharing one across threads would mix texts. Looked up on the module so tests can patch it.
        import deep_translator

        client = deep_translator.GoogleTranslator(
            source=source, target=self.target_code, proxies=self.proxies
        )
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
            if key[0] == self.key_name and all(isinstance(v, str) for v in (*key, value)):
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
