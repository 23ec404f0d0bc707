"""Items for `cejudge judge`: from command-line flags or from a JSON / JSON-list / JSONL file.

Keys in a file are the flag names: instruction, response (pointwise) or response_a and response_b
(pairwise), language, response_language, and an optional id. Problems name the item and the field.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.items import Item
from cejudge_dspy.languages import normalize_language
from cejudge_dspy.methods.cejudge.judges import require_text
from cejudge_dspy.tasks import TaskSpec


def item_from_mapping(data: dict[str, Any], spec: TaskSpec, item_id: str) -> Item:
    """Validate one item for the task's mode; every error names the item and the field."""
    if not isinstance(data, dict):
        raise InputError(f"must be a JSON object, got {type(data).__name__}", item=item_id)
    item_id = str(data.get("id", item_id))
    language = normalize_language(str(data.get("language") or "en"), item=item_id)
    common = {
        "id": item_id,
        "mode": spec.mode,
        "language": language,
        "instruction": require_text(data.get("instruction"), "instruction", item_id),
    }
    if spec.mode == "pairwise":
        stray = [k for k in ("response",) if data.get(k)]
        if stray:
            raise InputError(
                f"task '{spec.name}' is pairwise: give response_a and response_b",
                item=item_id,
                field="response",
            )
        return Item(
            **common,
            response_a=require_text(data.get("response_a"), "response_a", item_id),
            response_b=require_text(data.get("response_b"), "response_b", item_id),
            label=data.get("label"),
        )
    if data.get("response_a") or data.get("response_b"):
        raise InputError(
            f"task '{spec.name}' is pointwise: give one response", item=item_id, field="response_a"
        )
    response_language = data.get("response_language")
    return Item(
        **common,
        response=require_text(data.get("response"), "response", item_id),
        response_language=normalize_language(str(response_language), item=item_id, field="response_language")
        if response_language
        else None,
        label=data.get("label"),
    )


def read_item_file(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise DataError(f"{path}: no such file; pass an existing JSON or JSONL file to --file")
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise DataError(f"{path}: the file is empty")
    try:
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        pass
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"{path} line {n}: not valid JSON ({exc.msg})") from exc
    return rows


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
    return [item_from_mapping({k: v for k, v in data.items() if v is not None}, spec, "cli")]
