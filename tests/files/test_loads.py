"""`files.loads` is `json.loads` (issue #49: results.jsonl read faster on resume): the same value, of the same
types, or the same exception with the same message, for what orjson refuses or reads otherwise (NaN and
Infinity, lone surrogates, a BOM, integers past 64 bits) and for arbitrary text."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cejudge_dspy.files import loads


def outcome(parse: Any, text: str | bytes) -> tuple[str, str]:
    try:
        value = parse(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, huge integers
        return type(exc).__name__, str(exc)
    return "value", repr(value) + repr(_types(value))


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


EDGES = [
    "NaN", '{"p": NaN, "q": -Infinity}', '"bad \\ud83d"', '"\\ud83d\\ude00"', "1e400", "-1e400", "-0", "-0.0",
    "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "-9223372036854775809", "123456789012345678901234567890", "1" * 5000, "0.1e-400", "1E5", "1.0",
    "\ufeff{}", '{"a": 1, "a": 2}', "[1,]", "01", ' {"a": [1, 2.5, "x"]} ', '"\\u0000"', '"a\x01b"',
    "[" * 3000, '{"id": "run/12345678901234567890"}', "", "  ", "{", '"é 😀 \u2028"', "true false",
]  # fmt: skip


@pytest.mark.parametrize("text", EDGES)
def test_an_edge_case_reads_as_json_loads_reads_it(text: str) -> None:
    assert outcome(loads, text) == outcome(json.loads, text)
    raw = text.encode("utf-8", "surrogatepass")
    assert outcome(loads, raw) == outcome(json.loads, raw)


def test_bytes_in_another_encoding_or_not_utf8_read_as_json_loads_reads_them() -> None:
    for raw in ('{"a": "é"}'.encode("utf-16"), b'{"a": "caf\xe9"}', b"\xef\xbb\xbf{}", b'"\xed\xa0\xbd"'):
        assert outcome(loads, raw) == outcome(json.loads, raw)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
def test_any_document_reads_to_the_same_value_and_types(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert outcome(loads, text) == outcome(json.loads, text)
    assert outcome(loads, text.encode()) == outcome(json.loads, text.encode())


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[],:"\\ 0123456789.eE+-truefalsnNIiy\ufeff\x01é'))))
def test_any_text_reads_as_json_loads_reads_it(text: str) -> None:
    assert outcome(loads, text) == outcome(json.loads, text)


def test_floats_read_to_the_same_double() -> None:
    for text in ("0.1", "2.2250738585072011e-308", "1.7976931348623157e308", "5e-324", "0.30000000000000004"):
        assert loads(text) == json.loads(text) and math.copysign(1, loads(text)) == 1
