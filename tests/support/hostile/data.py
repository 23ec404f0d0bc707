"""Hostile data cases (issue #41): files that are not regular files, labels JSON cannot hold or a metric
would drop, and malformed lines deep in a file. Each must be refused with one line naming the file, the
item (line) and the field, before anything is written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from tests.support.bad_inputs import SIM, Case, data_file, evaluate, rows


def _fifo(d: Path, name: str) -> Path:
    # Opening a named pipe blocks until a writer comes: the case hangs if anything opens it.
    path = d / name
    if not path.exists():
        os.mkfifo(path)
    return path


def _fifo_case(name: str, argv: Callable[[Path], list[str]]) -> Case:
    return Case(f"data: not a regular file: {name}", argv)


def _pointwise(name: str, *ratings: str) -> Case:
    """A literary (pointwise) JSONL file whose rating column holds the given JSON literals."""
    lines = "".join(f'{{"source": "s{i}", "tgt": "t{i}", "rating": {r}}}\n' for i, r in enumerate(ratings))
    return data_file(name, lines, "literary")


def _judge_file(label: str, task: str = "chat") -> Callable[[Path], list[str]]:
    def argv(d: Path) -> list[str]:
        texts = {"instruction": "i", "response_a": "a", "response_b": "b"} if task == "chat" else {}
        texts = texts or {"instruction": "i", "response": "r", "language": "de", "response_language": "en"}
        (d / "items.jsonl").write_text(json.dumps(texts)[:-1] + ", " + label[1:] + "\n")
        return ["judge", "--task", task, "--file", str(d / "items.jsonl"), *SIM[:2]]

    return argv


def _deep_bad_line() -> str:
    good = rows(*[{} for _ in range(8)])
    return good + '{"prompt": "p", "chosen": "a", "rejected": "b", "language": "en",}\n' + rows({})


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    return [
        _fifo_case("a named pipe as --data", lambda d: evaluate(data=_fifo(d, "pipe.jsonl"))(d)),
        _fifo_case(
            "a named pipe in a --data directory",
            lambda d: (d / "dir").mkdir() or _fifo(d / "dir", "b.jsonl") and evaluate(data=d / "dir")(d),
        ),
        _fifo_case(
            "a named pipe as judge --file",
            lambda d: ["judge", "--task", "chat", "--file", str(_fifo(d, "items.jsonl")), *SIM[:2]],
        ),
        _fifo_case(
            "a named pipe to score-predictions", lambda d: ["score-predictions", str(_fifo(d, "de.txt"))]
        ),
        _fifo_case("/dev/zero as --data", evaluate(data="/dev/zero")),
        # labels: non-finite numbers would be written as bare Infinity/NaN (invalid JSON)
        _pointwise("de-en.jsonl", "3", "Infinity"),
        _pointwise("de-en.jsonl", "-Infinity"),
        _pointwise("de-en.jsonl", "NaN"),
        _pointwise("de-en.jsonl", '"nan"'),
        _pointwise("de-en.jsonl", '"inf"'),
        data_file("de-en.csv", "source;tgt;rating\ns;t;inf\n", "literary"),
        data_file("de-en.csv", "source;tgt;rating\ns;t;NaN\n", "literary"),
        # a dict label on a task without score dimensions used to drop its item from the table
        _pointwise("de-en.jsonl", "4", '{"overall": 4}'),
        _pointwise("de-en.jsonl", "[4]"),
        data_file(
            "inf.jsonl",
            json.dumps({"doc_id": "d", "system_id": "m", "source": "s", "system_output": "o"})[:-1]
            + ', "scores": {"coherence": Infinity, "consistency": 1, "fluency": 1, "relevance": 1}}\n',
            "summeval",
        ),
        data_file(
            "nanlabel.jsonl", rows({}).replace('"id"', '"label": NaN, "id"'), "chat", "--field", "label=label"
        ),
        Case("data: judge --file with a NaN label", _judge_file('{"label": NaN}')),
        Case("data: judge --file with an infinite label", _judge_file('{"label": "Infinity"}', "literary")),
        # malformed lines past the first Arrow block used to say "row 0"
        data_file("line9.jsonl", _deep_bad_line()),
        data_file("notobject.jsonl", rows({}) + "[1, 2]\n"),
        data_file("wide.csv", "prompt,chosen,rejected,language\np,a,b,en\np,a,b,en,extra\n"),
        data_file("de-en.csv", 'source;tgt;rating\ns;t;1\n"unclosed;t;3\ns;t;4\n', "literary"),
        data_file("de-en.csv", 'source;tgt;rating\n"a"b;t;3\n', "literary"),
        data_file("twice.csv", "prompt,chosen,rejected,prompt,language\np,a,b,c,en\n"),
        data_file("latin1_deep.jsonl", rows({}, {}).encode() + b'{"prompt": "\xe9"}\n'),
        data_file("bom_only.jsonl", b"\xef\xbb\xbf\n"),
        data_file("bigint.jsonl", rows({}) + '{"prompt": ' + "9" * 5000 + "}\n"),
        data_file("deep.jsonl", rows({}) + '{"prompt": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
        data_file("deep.json", "[" * 100_000 + "]" * 100_000),
        _pointwise("de-en.jsonl", "1" + "0" * 400),
    ]
