"""Language codes, names and language pairs.

Canonical codes are ISO 639-1 (``de``, ``zh``) plus the few region variants that change what a
translator or a reader does (``zh-CN``/``zh-TW`` script, ``pt-BR``/``pt-PT`` spelling, ...), written
BCP-47 style: lower-case language, upper-case region. `normalize_language` maps anything a dataset
is likely to contain onto them: codes in any case with ``-`` or ``_``, ISO 639-2/3 codes (``deu``,
FLORES-style ``deu_Latn``), legacy codes (``iw``) and English names (``German``, ``chinese``).
"""

from __future__ import annotations

import difflib

from cejudge_dspy.errors import InputError

# code -> (English name, ISO 639-3 code). Covers MM-Eval, LitEval and every language Google Translate
# and the common MT benchmarks (FLORES, WMT) use that has an ISO 639-1 code.
_BASE: dict[str, tuple[str, str]] = {
    "af": ("Afrikaans", "afr"), "ak": ("Akan", "aka"), "am": ("Amharic", "amh"), "ar": ("Arabic", "ara"),
    "as": ("Assamese", "asm"), "az": ("Azerbaijani", "aze"), "be": ("Belarusian", "bel"),
    "bg": ("Bulgarian", "bul"), "bm": ("Bambara", "bam"), "bn": ("Bengali", "ben"), "bo": ("Tibetan", "bod"),
    "bs": ("Bosnian", "bos"), "ca": ("Catalan", "cat"), "co": ("Corsican", "cos"), "cs": ("Czech", "ces"),
    "cy": ("Welsh", "cym"), "da": ("Danish", "dan"), "de": ("German", "deu"), "dv": ("Divehi", "div"),
    "ee": ("Ewe", "ewe"), "el": ("Greek", "ell"), "en": ("English", "eng"), "eo": ("Esperanto", "epo"),
    "es": ("Spanish", "spa"), "et": ("Estonian", "est"), "eu": ("Basque", "eus"), "fa": ("Persian", "fas"),
    "fi": ("Finnish", "fin"), "fo": ("Faroese", "fao"), "fr": ("French", "fra"),
    "fy": ("Western Frisian", "fry"), "ga": ("Irish", "gle"), "gd": ("Scottish Gaelic", "gla"),
    "gl": ("Galician", "glg"), "gn": ("Guarani", "grn"), "gu": ("Gujarati", "guj"), "ha": ("Hausa", "hau"),
    "he": ("Hebrew", "heb"), "hi": ("Hindi", "hin"), "hr": ("Croatian", "hrv"),
    "ht": ("Haitian Creole", "hat"), "hu": ("Hungarian", "hun"), "hy": ("Armenian", "hye"),
    "id": ("Indonesian", "ind"), "ig": ("Igbo", "ibo"), "is": ("Icelandic", "isl"), "it": ("Italian", "ita"),
    "ja": ("Japanese", "jpn"), "jv": ("Javanese", "jav"), "ka": ("Georgian", "kat"), "kk": ("Kazakh", "kaz"),
    "km": ("Khmer", "khm"), "kn": ("Kannada", "kan"), "ko": ("Korean", "kor"), "ku": ("Kurdish", "kur"),
    "ky": ("Kyrgyz", "kir"), "la": ("Latin", "lat"), "lb": ("Luxembourgish", "ltz"), "lg": ("Ganda", "lug"),
    "ln": ("Lingala", "lin"), "lo": ("Lao", "lao"), "lt": ("Lithuanian", "lit"), "lv": ("Latvian", "lav"),
    "mg": ("Malagasy", "mlg"), "mi": ("Maori", "mri"), "mk": ("Macedonian", "mkd"),
    "ml": ("Malayalam", "mal"), "mn": ("Mongolian", "mon"), "mr": ("Marathi", "mar"), "ms": ("Malay", "msa"),
    "mt": ("Maltese", "mlt"), "my": ("Burmese", "mya"), "nb": ("Norwegian Bokmal", "nob"),
    "ne": ("Nepali", "nep"), "nl": ("Dutch", "nld"), "nn": ("Norwegian Nynorsk", "nno"),
    "no": ("Norwegian", "nor"), "ny": ("Chichewa", "nya"), "om": ("Oromo", "orm"), "or": ("Odia", "ori"),
    "pa": ("Punjabi", "pan"), "pl": ("Polish", "pol"), "ps": ("Pashto", "pus"), "pt": ("Portuguese", "por"),
    "qu": ("Quechua", "que"), "ro": ("Romanian", "ron"), "ru": ("Russian", "rus"),
    "rw": ("Kinyarwanda", "kin"), "sa": ("Sanskrit", "san"), "sd": ("Sindhi", "snd"),
    "si": ("Sinhala", "sin"), "sk": ("Slovak", "slk"), "sl": ("Slovenian", "slv"), "sm": ("Samoan", "smo"),
    "sn": ("Shona", "sna"), "so": ("Somali", "som"), "sq": ("Albanian", "sqi"), "sr": ("Serbian", "srp"),
    "st": ("Southern Sotho", "sot"), "su": ("Sundanese", "sun"), "sv": ("Swedish", "swe"),
    "sw": ("Swahili", "swa"), "ta": ("Tamil", "tam"), "te": ("Telugu", "tel"), "tg": ("Tajik", "tgk"),
    "th": ("Thai", "tha"), "ti": ("Tigrinya", "tir"), "tk": ("Turkmen", "tuk"), "tl": ("Tagalog", "tgl"),
    "tr": ("Turkish", "tur"), "ts": ("Tsonga", "tso"), "tt": ("Tatar", "tat"), "tw": ("Twi", "twi"),
    "ug": ("Uyghur", "uig"), "uk": ("Ukrainian", "ukr"), "ur": ("Urdu", "urd"), "uz": ("Uzbek", "uzb"),
    "vi": ("Vietnamese", "vie"), "wo": ("Wolof", "wol"), "xh": ("Xhosa", "xho"), "yi": ("Yiddish", "yid"),
    "yo": ("Yoruba", "yor"), "zh": ("Chinese", "zho"), "zu": ("Zulu", "zul"),
}  # fmt: skip

# Region variants kept distinct. Several of their regions are also language codes (fr-CA: Catalan,
# zh-TW: Twi, pt-PT, es-ES), which is why `split_pair` checks this table before splitting.
_REGIONAL: dict[str, str] = {
    "zh-CN": "Chinese (Simplified)", "zh-TW": "Chinese (Traditional)", "zh-HK": "Chinese (Hong Kong)",
    "pt-BR": "Portuguese (Brazil)", "pt-PT": "Portuguese (Portugal)", "en-US": "English (US)",
    "en-GB": "English (UK)", "es-ES": "Spanish (Spain)", "es-MX": "Spanish (Mexico)",
    "es-419": "Spanish (Latin America)", "fr-CA": "French (Canada)", "fr-FR": "French (France)",
}  # fmt: skip

LANGUAGES: dict[str, str] = {code: name for code, (name, _) in _BASE.items()} | _REGIONAL
"""Every canonical code and its English name."""

_ALIASES: dict[str, str] = {
    # legacy ISO 639-1 codes and ISO 639-2/B codes still found in datasets
    "iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro", "fil": "tl", "ger": "de", "fre": "fr",
    "chi": "zh", "cze": "cs", "dut": "nl", "gre": "el", "per": "fa", "rum": "ro", "slo": "sk", "alb": "sq",
    "arm": "hy", "baq": "eu", "bur": "my", "geo": "ka", "ice": "is", "mac": "mk", "mao": "mi", "may": "ms",
    "tib": "bo", "wel": "cy", "cmn": "zh",
    # other English names
    "mandarin": "zh", "simplified chinese": "zh-CN", "traditional chinese": "zh-TW",
    "chinese simplified": "zh-CN", "chinese traditional": "zh-TW", "brazilian portuguese": "pt-BR",
    "european portuguese": "pt-PT", "farsi": "fa", "filipino": "tl", "kiswahili": "sw", "castilian": "es",
    "flemish": "nl", "bokmal": "nb", "nynorsk": "nn", "myanmar": "my", "oriya": "or", "panjabi": "pa",
    "sinhalese": "si", "uighur": "ug", "gaelic": "gd", "haitian": "ht", "kirghiz": "ky", "pushto": "ps",
    "slovene": "sl", "nyanja": "ny", "luganda": "lg", "sesotho": "st", "modern greek": "el",
    "azeri": "az", "frisian": "fy", "bangla": "bn",
}  # fmt: skip

_SCRIPTS = {("zh", "hans"): "zh-CN", ("zh", "hant"): "zh-TW"}


def _name_key(value: str) -> str:
    return " ".join(value.lower().replace("_", " ").split())


# lower-case code / name -> canonical code
_LOOKUP: dict[str, str] = {}
for _code, (_name, _iso3) in _BASE.items():
    _LOOKUP.update({_iso3: _code, _name_key(_name): _code})
_LOOKUP.update({_name_key(name): code for code, name in _REGIONAL.items()})
_LOOKUP.update({_name_key(alias): code for alias, code in _ALIASES.items()})
_LOOKUP.update({code.lower(): code for code in LANGUAGES})  # codes last: they win over any name


def _bad(value: str, item: str | None, field: str) -> InputError:
    close = difflib.get_close_matches(_name_key(value), list(_LOOKUP), n=3, cutoff=0.6)
    seen = dict.fromkeys(_LOOKUP[c] for c in close)  # several spellings may name one language
    hint = "; did you mean " + " or ".join(f"'{c}' ({LANGUAGES[c]})" for c in seen) + "?" if seen else "."
    return InputError(
        f"unknown language {value!r}{hint} Use an ISO 639-1 code (e.g. 'de', 'zh-CN') or an English name "
        "(e.g. 'German'); the full list is cejudge_dspy.data.LANGUAGES",
        item=item,
        field=field,
    )


def _lookup(value: str) -> str | None:
    """Canonical code for `value`, or None. Raises only for a code that is really a language pair."""
    key = value.strip().replace("_", "-")
    if key.lower() in _LOOKUP:
        return _LOOKUP[key.lower()]
    if _name_key(value) in _LOOKUP:
        return _LOOKUP[_name_key(value)]
    base, _, rest = key.partition("-")
    code = _LOOKUP.get(base.lower())
    if not rest or code is None or len(base) > 3 or "-" in code:
        return None
    subtags = rest.split("-")
    for tag in subtags:
        low = tag.lower()
        if len(tag) == 4 and tag.isalpha():  # script subtag (zh-Hant, deu_Latn): only Chinese cares
            code = _SCRIPTS.get((code, low), code)
        elif (len(tag) == 2 and tag.isalpha()) or (len(tag) == 3 and tag.isdigit()):
            regional = f"{code.partition('-')[0]}-{tag.upper()}"
            if regional in _REGIONAL:
                code = regional
            elif len(subtags) == 1 and tag.islower() and low in _BASE:
                # "de-en" is far more likely a pair than German as spoken in region EN.
                raise ValueError("pair")
            # any other region (de-AT, fr-BE) does not change the language we translate from
        else:
            return None
    return code


def normalize_language(value: str, *, item: str | None = None, field: str = "language") -> str:
    """Return the canonical code for a language code or English name; `InputError` if unknown.

    A lower-case suffix that is itself a language code ("de-en") is refused as a probable language
    pair: write a region upper-case ("fr-BE") or use `split_pair` for pairs.
    """
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"expected a language code or name, got {value!r}", item=item, field=field)
    try:
        code = _lookup(value)
    except ValueError:
        raise InputError(
            f"{value!r} looks like a language pair (source-target), not a language; give one language, "
            "or write a region in upper case (e.g. 'fr-BE')",
            item=item,
            field=field,
        ) from None
    if code is None:
        raise _bad(value, item, field)
    return code


def is_english(code: str) -> bool:
    """True for English in any spelling ("en", "en-GB", "English"); False for unknown values."""
    try:
        return normalize_language(code).partition("-")[0] == "en"
    except InputError:
        return False


def language_name(code: str) -> str:
    """English name of a language code or name, e.g. "zh-TW" -> "Chinese (Traditional)"."""
    return LANGUAGES[normalize_language(code)]


def split_pair(value: str, *, item: str | None = None, field: str = "language_pair") -> tuple[str, str]:
    """Parse a language pair such as "de-en", "en_zh", "zh-CN-en" or "German-English" into codes.

    Rule: a value that is itself a known language or region variant ("zh-CN", "pt-BR", "fr-CA") is
    one language, never a pair, even where its region is also a language code (CA = Catalan). Other
    values are split at the one `-`/`_` where both sides are languages; zero or several such places
    is an error.
    """
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"expected a language pair such as 'de-en', got {value!r}", item=item, field=field)
    text = value.strip()
    if text.replace("_", "-").lower() in {c.lower() for c in _REGIONAL}:
        raise InputError(
            f"{value!r} is a single language ({LANGUAGES[_LOOKUP[text.replace('_', '-').lower()]]}), "
            "not a pair; write the pair as source-target, e.g. 'de-en' or 'zh-CN-en'",
            item=item,
            field=field,
        )
    found: set[tuple[str, str]] = set()
    for i, ch in enumerate(text):
        if ch in "-_":
            try:
                src, tgt = _lookup(text[:i]), _lookup(text[i + 1 :])
            except ValueError:
                continue
            if src and tgt:
                found.add((src, tgt))
    if len(found) == 1:
        return found.pop()
    if found:
        options = " or ".join(f"{s}->{t}" for s, t in sorted(found))
        raise InputError(f"ambiguous language pair {value!r}: {options}", item=item, field=field)
    raise InputError(
        f"cannot read {value!r} as a language pair; write it as source-target with known languages, "
        "e.g. 'de-en', 'en_zh', 'zh-CN-en' (see cejudge_dspy.data.LANGUAGES)",
        item=item,
        field=field,
    )
