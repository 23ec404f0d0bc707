"""Language codes, names and pairs: no network, no model."""

from __future__ import annotations

import pytest

from cejudge_dspy.data import is_english, language_name, normalize_language
from cejudge_dspy.data._languages import LANGUAGES, split_pair
from cejudge_dspy.errors import InputError

MM_EVAL = "ar bn ca de en es eu fr gl it ja ko ru sw te th vi zh".split()
LITEVAL = "en de zh cs ru uk ja".split()


def test_table_covers_benchmark_languages() -> None:
    assert len(LANGUAGES) >= 100
    missing = [code for code in MM_EVAL + LITEVAL if code not in LANGUAGES]
    assert missing == []
    assert {"zh-CN", "zh-TW", "pt-BR"} <= set(LANGUAGES)


def test_every_canonical_code_and_name_normalizes_to_itself() -> None:
    for code, name in LANGUAGES.items():
        assert normalize_language(code) == code
        assert normalize_language(name) == code


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("DE", "de"),
        (" de ", "de"),
        ("German", "de"),
        ("chinese", "zh"),
        ("zh_cn", "zh-CN"),
        ("ZH-tw", "zh-TW"),
        ("pt_BR", "pt-BR"),
        ("Simplified Chinese", "zh-CN"),
        ("deu", "de"),
        ("deu_Latn", "de"),  # FLORES style
        ("zho_Hant", "zh-TW"),
        ("zh-Hans", "zh-CN"),
        ("iw", "he"),  # legacy code
        ("Farsi", "fa"),
        ("haitian_creole", "ht"),
        ("de-AT", "de"),  # a region that does not matter falls back to the language
        ("fr-BE", "fr"),
        ("fr-ca", "fr-CA"),
        ("es-419", "es-419"),
        ("en-us", "en-US"),
    ],
)
def test_normalize_language(value: str, expected: str) -> None:
    assert normalize_language(value) == expected


def test_unknown_language_names_item_field_and_suggests() -> None:
    with pytest.raises(InputError) as err:
        normalize_language("Germn", item="7", field="lang")
    message = str(err.value)
    assert message.startswith("item 7, field 'lang': unknown language 'Germn'")
    assert "did you mean 'de' (German)" in message
    assert "cejudge_dspy.data.LANGUAGES" in message
    assert "\n" not in message
    assert isinstance(err.value, ValueError)


def test_unknown_language_without_close_match_still_says_where_to_look() -> None:
    with pytest.raises(InputError, match=r"unknown language 'qqqq'\. Use an ISO 639-1 code"):
        normalize_language("qqqq")


@pytest.mark.parametrize("value", ["", "   "])
def test_empty_language_is_refused(value: str) -> None:
    with pytest.raises(InputError, match="field 'language'"):
        normalize_language(value)


def test_lowercase_pair_is_not_taken_for_a_language() -> None:
    with pytest.raises(InputError, match="looks like a language pair"):
        normalize_language("de-en", item="3")


def test_is_english_and_language_name() -> None:
    assert is_english("en") and is_english("EN-gb") and is_english("English")
    assert not is_english("de") and not is_english("zh-CN")
    assert not is_english("not-a-language")  # unknown is simply not English
    assert language_name("zh_tw") == "Chinese (Traditional)"
    assert language_name("sw") == "Swahili"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("de-en", ("de", "en")),
        ("en_zh", ("en", "zh")),
        ("EN-DE", ("en", "de")),
        ("zh-CN-en", ("zh-CN", "en")),
        ("en-zh_TW", ("en", "zh-TW")),
        ("en-GB-de", ("en-GB", "de")),
        ("German-English", ("de", "en")),
        ("es-ar", ("es", "ar")),  # asked for a pair, so AR is Arabic rather than Argentina
    ],
)
def test_split_pair(value: str, expected: tuple[str, str]) -> None:
    assert split_pair(value) == expected


@pytest.mark.parametrize("value", ["zh-CN", "pt_br", "fr-CA"])
def test_region_variant_is_one_language_not_a_pair(value: str) -> None:
    with pytest.raises(InputError, match="is a single language"):
        split_pair(value)


@pytest.mark.parametrize("value", ["de-AT", "de", "de-en-fr", "xx-en", ""])
def test_unreadable_pairs(value: str) -> None:
    with pytest.raises(InputError, match="field 'pair'"):
        split_pair(value, field="pair")
