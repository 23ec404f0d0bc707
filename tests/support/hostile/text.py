"""Hostile text cases (issue #49): text is checked once on its way in (data/_text.py). Half an emoji (a lone
surrogate), a control character (a clear-screen, a window title), bytes, an id that is a JSON object, a
response of zero-width characters and a file name that is not UTF-8 are each one line naming the item and
the field (or the file), before anything is judged or written.

Before #49 a lone surrogate stopped the record writer with UnicodeEncodeError for every item in flight (and
on every rerun), the escape sequences reached the terminal in `tasks show`, a Parquet binary column was
judged as the text "b'hello'", an object id was judged under its repr, and zero-width text was judged.
How the terminal shows what it is given is asserted in tests/cli/test_terminal_text.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.bad_inputs import SIM, Case, data_file, evaluate, good_data, rows

SURROGATE = "bad \ud83d"  # json.dumps writes it as the escape \ud83d, as the probe's file held it
CLEAR = "\x1b[2J\x1b[Hcleared"
TITLE = "\x1b]0;pwned\x07title"
LINK = "\x1b]8;;http://127.0.0.1/\x1b\\click\x1b]8;;\x1b\\"


def _parquet_binary(d: Path) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "prompt": pa.array([b"hello", b"world"], type=pa.binary()),
            "chosen": ["a", "a"],
            "rejected": ["b", "b"],
            "language": ["en", "en"],
        }
    )
    pq.write_table(table, d / "binary.parquet")
    return evaluate(data=d / "binary.parquet")(d)


def _non_utf8_name(d: Path) -> list[str]:
    name = os.fsencode(d) + b"/caf\xe9.jsonl"
    with open(name, "wb") as fh:
        fh.write(good_data(d, 2).read_bytes())
    return evaluate(data=os.fsdecode(name))(d)


def _tasks_show(text: str) -> Case:
    """`tasks show chat --data FILE` of a file whose prompt carries a terminal sequence."""

    def argv(d: Path) -> list[str]:
        (d / "items.jsonl").write_text(rows({"prompt": text}), encoding="utf-8")
        return ["tasks", "show", "chat", "--data", str(d / "items.jsonl")]

    return Case(f"text: tasks show of a prompt holding {text[:12]!r}", argv)


def _judge(flag: str, text: str) -> Case:
    texts = {"--instruction": "q", "--response-a": "a", "--response-b": "b", flag: text}
    argv = ["judge", "--task", "chat", *[x for pair in texts.items() for x in pair], *SIM[:2]]
    return Case(f"text: judge {flag} {text[:12]!r}", lambda d: argv)


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    return [
        data_file("surrogate.jsonl", rows({}, {"prompt": SURROGATE}, {})),
        data_file("surrogate_id.jsonl", rows({}, {"id": "r\udc80"})),
        data_file("clear.jsonl", rows({"prompt": CLEAR})),
        data_file("title.jsonl", rows({"chosen": TITLE})),
        data_file("link.jsonl", rows({"rejected": LINK})),
        data_file("nul.jsonl", rows({"prompt": "a\x00b"})),
        data_file("zero_width.jsonl", rows({}, {"chosen": "\u200b\u200c\u200d\ufeff"})),
        data_file("zero_width.csv", "prompt,chosen,rejected,language\np,\u200b\u2060,b,en\n"),
        data_file("object_id.jsonl", rows({"id": {"a": 1}})),
        data_file("list_id.jsonl", rows({"id": [1, 2]})),
        data_file("escape_id.jsonl", rows({"id": "r\x1b]0;pwned\x07"})),
        Case("text: a Parquet binary column", _parquet_binary),
        Case("text: a data file name that is not UTF-8", _non_utf8_name),
        _tasks_show(CLEAR),
        _tasks_show(TITLE),
        _judge("--instruction", CLEAR),
        _judge("--response-a", "\u200b\u200b"),
        _judge("--response-b", SURROGATE),
    ]
