"""Items for `cejudge judge`: from command-line flags or from a JSON / JSON-list / JSONL file.

Keys in a file are the flag names: instruction, response (pointwise) or response_a and response_b
(pairwise), language, response_language, and an optional id. Problems name the item and the key, or,
for an item given on the command line, the flag (`--response-a`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cejudge_dspy.data import Item, normalize_language, parse_label, require_text
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.files import parse_json, read_text
from cejudge_dspy.tasks import TaskSpec

KEYS = ("instruction", "response", "response_a", "response_b", "language", "response_language")
FLAGS = {key: "--" + key.replace("_", "-") for key in KEYS}


def item_from_mapping(
    data: dict[str, Any], spec: TaskSpec, item_id: str, names: dict[str, str] | None = None
) -> Item:
    """Validate one item for the task's mode; every error names the item and the field, as `names`
    calls it (the file's keys by default; `FLAGS` for an item given on the command line)."""
    if not isinstance(data, dict):
        raise InputError(f"must be a JSON object, got {type(data).__name__}", item=item_id)
    flags = names is not None
    name = (names or {}).get if flags else (lambda key: key)
    where = None if flags else str(data.get("id", item_id))
    item_id = str(data.get("id", item_id))

    def text(key: str) -> str:
        return require_text(data.get(key), name(key), where)

    def label() -> Any:
        # Parsed as the loader parses gold labels: a NaN or an infinity would be written as invalid JSON.
        return None if data.get("label") is None else parse_label(data["label"], spec, item_id)

    language = normalize_language(str(data.get("language") or "en"), item=where, field=name("language"))
    common = {"id": item_id, "mode": spec.mode, "language": language, "instruction": text("instruction")}
    if spec.mode == "pairwise":
        if data.get("response"):
            raise InputError(
                f"task '{spec.name}' is pairwise: give {name('response_a')} and {name('response_b')} instead",
                item=where,
                field=name("response"),
            )
        return Item(**common, response_a=text("response_a"), response_b=text("response_b"), label=label())
    if data.get("response_a") or data.get("response_b"):
        stray = "response_a" if data.get("response_a") else "response_b"
        raise InputError(
            f"task '{spec.name}' is pointwise: give one {name('response')} (or a pairwise task such as "
            f"--task chat)",
            item=where,
            field=name(stray),
        )
    response_language = data.get("response_language")
    return Item(
        **common,
        response=text("response"),
        response_language=normalize_language(
            str(response_language), item=where, field=name("response_language")
        )
        if response_language
        else None,
        label=label(),
    )


def read_item_file(path: Path) -> list[dict[str, Any]]:
    # The one reader (cejudge_dspy.files): a pipe or a device refused, nesting and huge numbers caught.
    fix = lambda line: DataError(f"{line}; pass a JSON or JSONL file of items to --file")  # noqa: E731
    text = read_text(path, fix).strip()
    if not text:
        raise DataError(f"{path}: the file is empty")
    try:
        data = parse_json(text, str(path), fix)
        return data if isinstance(data, list) else [data]
    except DataError:
        if "\n" not in text:
            raise
    return [
        parse_json(line, f"{path} line {n}", fix)
        for n, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]


def items_from_args(args: argparse.Namespace, spec: TaskSpec) -> list[Item]:
    if args.file:
        rows = read_item_file(Path(args.file))
        return [item_from_mapping(row, spec, f"{Path(args.file).name}:{n}") for n, row in enumerate(rows, 1)]
    data = {
        "instruction": args.instruction,
        "language": args.language,
        "response_language": args.response_language,
        "response": args.response,
        "response_a": args.response_a,
        "response_b": args.response_b,
    }
    return [item_from_mapping({k: v for k, v in data.items() if v is not None}, spec, "cli", FLAGS)]
