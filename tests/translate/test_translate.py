"""Translators without the network: deep-translator's client and requests are faked."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import deep_translator
import deep_translator.google
import pytest
import requests
from deep_translator import exceptions as dt_errors

from cejudge_dspy.errors import InputError, TranslationError
from cejudge_dspy.translate import LLMTranslator, NoTranslator, Translator, make_translator, translate_many
from cejudge_dspy.translate._google import GOOGLE_CHAR_LIMIT, GoogleTranslator, split_text


class FakeGoogle:
    """Stands in for deep_translator.GoogleTranslator; records (source, text) for each request."""

    calls: list[tuple[str, str]] = []
    failures: list[Exception] = []  # raised one per request, in order, before any success
    delay = 0.0
    lock = threading.Lock()
    target = "en"  # the target every request must ask for (a translator built for another sets it)

    def __init__(self, source: str, target: str, proxies: Any = None) -> None:
        assert target == FakeGoogle.target
        self.source = source

    def translate(self, text: str) -> str:
        assert len(text) < GOOGLE_CHAR_LIMIT  # deep-translator's own check
        with self.lock:
            self.calls.append((self.source, text))
            failure = self.failures.pop(0) if self.failures else None
        time.sleep(self.delay)
        if failure is not None:
            raise failure
        return f"<{text}>"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CEJUDGE_CACHE", str(tmp_path))  # never touch ~/.cache
    return tmp_path


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> type[FakeGoogle]:
    monkeypatch.setattr(FakeGoogle, "calls", [])
    monkeypatch.setattr(FakeGoogle, "failures", [])
    monkeypatch.setattr(FakeGoogle, "target", "en")
    monkeypatch.setattr(deep_translator, "GoogleTranslator", FakeGoogle)
    return FakeGoogle


class RecordingStage:
    def __init__(self, reply: Callable[[str, str], str] = lambda t, lang: f"[{lang}] {t}") -> None:
        self.calls: list[tuple[str, str]] = []
        self.reply = reply

    async def __call__(self, text: str, language: str) -> str:
        self.calls.append((text, language))
        await asyncio.sleep(0.01)  # long enough for concurrent callers to pile up
        return self.reply(text, language)


def sleeps() -> tuple[list[float], Callable[[float], Any]]:
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    return delays, sleep


@pytest.mark.parametrize("language", ["en", "en-GB", "English", "EN_us"])
def test_english_is_never_translated(fake: type[FakeGoogle], language: str) -> None:
    stage = RecordingStage()
    for translator in (GoogleTranslator(), LLMTranslator(stage), NoTranslator()):
        assert asyncio.run(translator.translate("Hello there.", language)) == "Hello there."
    assert fake.calls == [] and stage.calls == []


def test_google_caches_by_text_and_language(fake: type[FakeGoogle]) -> None:
    translator = GoogleTranslator(persist=False)

    async def run() -> list[str]:
        return [
            await translator.translate("Hallo Welt", "de"),
            await translator.translate("Hallo Welt", "German"),  # same language, other spelling
            await translator.translate("Hallo Welt", "nl"),
            await translator.translate("Hallo", "de"),
        ]

    assert asyncio.run(run()) == ["<Hallo Welt>", "<Hallo Welt>", "<Hallo Welt>", "<Hallo>"]
    assert fake.calls == [("de", "Hallo Welt"), ("nl", "Hallo Welt"), ("de", "Hallo")]


def test_concurrent_requests_for_one_text_make_one_call(fake: type[FakeGoogle]) -> None:
    fake.delay = 0.05
    translator = GoogleTranslator(persist=False)
    texts = ["Bonjour"] * 5 + ["Salut"]
    result = asyncio.run(translate_many(translator, texts, "fr"))
    assert result == ["<Bonjour>"] * 5 + ["<Salut>"]
    assert sorted(fake.calls) == [("fr", "Bonjour"), ("fr", "Salut")]


def test_llm_in_flight_dedup_survives_a_cancelled_waiter() -> None:
    stage = RecordingStage()
    translator = LLMTranslator(stage)

    async def run() -> str:
        first = asyncio.create_task(translator.translate("Hola", "es"))
        second = asyncio.create_task(translator.translate("Hola", "es"))
        await asyncio.sleep(0)
        first.cancel()
        return await second

    assert asyncio.run(run()) == "[Spanish] Hola"
    assert stage.calls == [("Hola", "Spanish")]


def test_long_text_is_split_on_sentences_and_rejoined(fake: type[FakeGoogle]) -> None:
    sentence = "Der schnelle braune Fuchs springt über den faulen Hund und läuft davon. "
    text = (sentence * (12_000 // len(sentence) + 1))[:12_000].rsplit(". ", 1)[0] + "."
    assert len(text) > 11_900
    result = asyncio.run(GoogleTranslator(persist=False).translate(text, "de"))
    chunks = split_text(text)
    sent = [t for _, t in fake.calls]
    assert len(sent) >= 3 and all(len(t) <= 5000 for t in sent)
    assert all(t.endswith(".") for t in sent)  # every cut is at a sentence end
    assert sorted(sent) == sorted(c.strip() for c in chunks)
    assert result == " ".join(f"<{c.strip()}>" for c in chunks)


def test_split_text_prefers_paragraphs_then_words_and_cuts_only_giant_words() -> None:
    para = "word " * 700  # 3500 characters, no sentence end
    text = para + "\n\n" + para
    assert split_text(text) == [para + "\n\n", para]
    words = "alpha beta gamma " * 1000
    chunks = split_text(words, 1000)
    assert "".join(chunks) == words and all(len(c) <= 1000 for c in chunks)
    assert all(set(c.split()) <= {"alpha", "beta", "gamma"} for c in chunks)
    giant = "x" * 12_000
    assert [len(c) for c in split_text(giant)] == [4999, 4999, 2002]


def test_split_text_cuts_cjk_after_full_stops_and_keeps_decimals() -> None:
    cjk = "这是一个句子。" * 10
    assert split_text(cjk, 15) == ["这是一个句子。这是一个句子。"] * 5
    assert split_text("Pi is 3.14159 exactly. Yes.", 24) == ["Pi is 3.14159 exactly. ", "Yes."]


@pytest.mark.parametrize(
    ("language", "source"), [("zh", "zh-CN"), ("zh_TW", "zh-TW"), ("he", "iw"), ("pt-BR", "pt")]
)
def test_google_language_codes(fake: type[FakeGoogle], language: str, source: str) -> None:
    asyncio.run(GoogleTranslator(persist=False).translate("text", language))
    assert fake.calls == [(source, "text")]


def test_retry_then_success(fake: type[FakeGoogle]) -> None:
    fake.failures += [dt_errors.TooManyRequests(), dt_errors.RequestError()]
    delays, sleep = sleeps()
    translator = GoogleTranslator(persist=False, retries=3, backoff=1.0, sleep=sleep)
    assert asyncio.run(translator.translate("Ciao", "it")) == "<Ciao>"
    assert len(fake.calls) == 3 and delays == [1.0, 2.0]


def test_retry_exhaustion_raises_one_line_translation_error(fake: type[FakeGoogle]) -> None:
    fake.failures += [dt_errors.RequestError()] * 10
    delays, sleep = sleeps()
    translator = GoogleTranslator(persist=False, retries=2, backoff=0.5, sleep=sleep)
    with pytest.raises(TranslationError) as err:
        asyncio.run(translator.translate("Hallo", "de"))
    message = str(err.value)
    assert "German ('de') after 3 attempt(s)" in message and "RequestError" in message
    assert "--translator llm" in message and "--translator none" in message and "\n" not in message
    assert len(fake.calls) == 3 and delays == [0.5, 1.0]


def test_unsupported_input_is_not_retried(fake: type[FakeGoogle]) -> None:
    fake.failures.append(dt_errors.LanguageNotSupportedException("de", message="No support.\nlong list"))
    with pytest.raises(TranslationError, match=r"after 1 attempt\(s\)"):
        asyncio.run(GoogleTranslator(persist=False, sleep=sleeps()[1]).translate("Hallo", "de"))
    assert len(fake.calls) == 1


def test_language_google_lacks_is_refused_before_any_call(fake: type[FakeGoogle]) -> None:
    with pytest.raises(TranslationError, match=r"does not support Tibetan \('bo'\).*--translator llm"):
        asyncio.run(GoogleTranslator(persist=False).translate("text", "bo"))
    assert fake.calls == []


def test_offline_fake_client(fake: type[FakeGoogle]) -> None:
    fake.failures += [requests.exceptions.ConnectionError("Name or service not known")] * 3
    translator = GoogleTranslator(persist=False, retries=2, sleep=sleeps()[1])
    with pytest.raises(TranslationError, match=r"Japanese \('ja'\).*offline\?.*--translator llm"):
        asyncio.run(translator.translate("こんにちは", "ja"))


def test_offline_real_deep_translator(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise requests.exceptions.ConnectionError("Failed to resolve 'translate.google.com'")

    monkeypatch.setattr(deep_translator.google.requests, "get", no_network)
    translator = GoogleTranslator(persist=False, retries=1, sleep=sleeps()[1])
    with pytest.raises(TranslationError, match="offline"):
        asyncio.run(translator.translate("你好", "zh"))


def test_real_deep_translator_gets_mapped_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    class Response:
        status_code = 200
        text = '<html><div class="t0">Hello</div></html>'

        def close(self) -> None:
            pass

    def get(url: str, params: dict[str, str], proxies: Any = None) -> Response:
        seen.update(params)
        return Response()

    monkeypatch.setattr(deep_translator.google.requests, "get", get)
    assert asyncio.run(GoogleTranslator(persist=False).translate("你好", "zh")) == "Hello"
    assert (seen["sl"], seen["tl"], seen["q"]) == ("zh-CN", "en", "你好")


def test_persistent_cache_survives_restarts_and_truncation(fake: type[FakeGoogle], cache_dir: Path) -> None:
    asyncio.run(GoogleTranslator().translate("Hallo", "de"))
    path = cache_dir / "translations.jsonl"
    with path.open("a", encoding="utf-8") as f:
        f.write('{"translator": "google", "language": "de", "te')  # a run killed mid-write
    assert asyncio.run(GoogleTranslator().translate("Hallo", "de")) == "<Hallo>"
    assert len(fake.calls) == 1  # served from the file
    asyncio.run(GoogleTranslator().translate("Tschüss", "de"))
    lines = path.read_text("utf-8").splitlines()
    assert lines[-2].endswith('"te')  # the new record did not get glued onto the broken line
    assert json.loads(lines[-1]) == {
        "translator": "google",
        "language": "de",
        "text": "Tschüss",
        "translation": "<Tschüss>",
    }
    assert asyncio.run(GoogleTranslator().translate("Tschüss", "de")) == "<Tschüss>"
    assert len(fake.calls) == 2


def test_persist_false_writes_nothing(fake: type[FakeGoogle], cache_dir: Path) -> None:
    asyncio.run(GoogleTranslator(persist=False).translate("Hallo", "de"))
    assert list(cache_dir.iterdir()) == []


def test_llm_translator_passes_language_name_and_caches() -> None:
    stage = RecordingStage()
    translator = LLMTranslator(stage)

    async def run() -> list[str]:
        return [await translator.translate("你好", lang) for lang in ("zh_TW", "zh-TW", "de")]

    assert asyncio.run(run()) == ["[Chinese (Traditional)] 你好"] * 2 + ["[German] 你好"]
    assert stage.calls == [("你好", "Chinese (Traditional)"), ("你好", "German")]


def test_llm_failures_are_translation_errors_and_not_cached() -> None:
    stage = RecordingStage(reply=lambda text, lang: "")
    translator = LLMTranslator(stage)
    for _ in range(2):
        with pytest.raises(TranslationError, match=r"Swahili \('sw'\) came back empty"):
            asyncio.run(translator.translate("Habari", "sw"))
    assert len(stage.calls) == 2

    async def broken(text: str, language: str) -> str:
        raise RuntimeError("backbone exploded")

    with pytest.raises(TranslationError, match="RuntimeError: backbone exploded"):
        asyncio.run(LLMTranslator(broken).translate("Habari", "sw"))


def test_no_translator_returns_text_unchanged() -> None:
    assert asyncio.run(NoTranslator().translate("Guten Tag", "de")) == "Guten Tag"


def test_make_translator() -> None:
    stage = RecordingStage()
    built = [
        make_translator("none"),
        make_translator("Google", persist=False),
        make_translator("llm", stage=stage),
    ]
    assert [t.name for t in built] == ["none", "google", "llm"]
    assert all(isinstance(t, Translator) for t in built)
    with pytest.raises(
        InputError, match=r"field 'translator': unknown translator 'gogle'; did you mean 'google'"
    ):
        make_translator("gogle")
    with pytest.raises(InputError, match="choose one of: google, llm, none"):
        make_translator("deepl-pro-max")
    with pytest.raises(InputError, match="needs the judge's translation stage"):
        make_translator("llm")
    with pytest.raises(InputError, match="does not take option.*retrys"):
        make_translator("google", retrys=2)


def test_a_translator_into_another_language_passes_that_language_through_and_translates_english() -> None:
    stage = RecordingStage()
    translator = make_translator("llm", stage=stage, target="ko")

    async def run() -> list[str]:
        return [
            await translator.translate(t, lang)
            for t, lang in (("안녕", "ko"), ("Hello", "en"), ("Hallo", "de"))
        ]

    assert asyncio.run(run()) == ["안녕", "[English] Hello", "[German] Hallo"]
    assert [lang for _, lang in stage.calls] == ["English", "German"]
    assert asyncio.run(make_translator("none", target="ko").translate("Hello", "en")) == "Hello"


def test_google_into_another_language_asks_for_it_and_keeps_its_cache_apart(
    fake: type[FakeGoogle], cache_dir: Path
) -> None:
    asyncio.run(GoogleTranslator().translate("Hallo", "de"))  # into English, cached as "google"
    fake.target = "ko"
    assert asyncio.run(GoogleTranslator(target="ko").translate("Hallo", "de")) == "<Hallo>"
    assert asyncio.run(GoogleTranslator(target="ko").translate("Hello", "en")) == "<Hello>"
    assert len(fake.calls) == 3  # the English translation of "Hallo" did not answer for Korean
    assert asyncio.run(GoogleTranslator(target="ko").translate("Hallo", "de")) == "<Hallo>"
    assert len(fake.calls) == 3  # a new translator into Korean reads the file's Korean entries
    names = {
        json.loads(x)["translator"]
        for x in (cache_dir / "translations.jsonl").read_text("utf-8").splitlines()
    }
    assert names == {"google", "google>ko"}
