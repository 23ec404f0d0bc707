"""Mapped rows into items: labels parsed, languages read, filters applied, row problems collected.

The conventions (labels, languages, filters, how problems are reported) are listed in _loader.py's docstring.
"""

from __future__ import annotations

import json
import math
import os
import re
import reprlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cejudge_dspy.data._items import Item, Label
from cejudge_dspy.data._languages import normalize_language, split_pair
from cejudge_dspy.data._mapping import TEXT_FIELDS, _blank
from cejudge_dspy.data._text import id_problem, kind_problem, text_problem
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.tasks import TaskSpec

PAIRWISE_LABELS = {"a": "A", "b": "B", "tie": "tie"}
_LISTED = 10  # row problems spelled out in one error; the rest are counted


def _number(value: Any) -> float:
    """A finite number from a label value; ValueError saying what it is instead."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"expected a number, got {type(value).__name__} {reprlib.repr(value)}")
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")  # "4,5"
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {reprlib.repr(value)}") from None
    except OverflowError:  # an integer of hundreds of digits
        raise ValueError(f"not a finite number ({reprlib.repr(value)}); give a finite number") from None
    if math.isnan(number):
        raise ValueError(f"not a number ({value!r}); give a finite number")
    if math.isinf(number):
        raise ValueError(f"not a finite number ({value!r}); give a finite number")  # JSON cannot hold it
    return number


def parse_label(value: Any, task: TaskSpec, item: str) -> Label:
    """A gold label in the item's form: "A"/"B"/"tie", a finite float, or dict[str, float] for a task
    with score dimensions (CheckEval); InputError naming the item and the field if not."""
    if isinstance(value, float) and math.isnan(value):  # checked before _blank, which counts NaN as empty
        raise InputError("not a number (NaN); give a finite number", item=item, field="label")
    if _blank(value):
        raise InputError("empty label; fill it or drop the label mapping", item=item, field="label")
    if task.mode == "pairwise":
        if isinstance(value, str) and value.strip().casefold() in PAIRWISE_LABELS:
            return PAIRWISE_LABELS[value.strip().casefold()]
        raise InputError(f"pairwise label must be 'A', 'B' or 'tie', got {value!r}", item=item, field="label")
    try:
        if isinstance(value, str) and value.strip().startswith("{"):
            value = json.loads(value)
    except ValueError:
        raise InputError(f"expected a dict of numbers, got {value!r}", item=item, field="label") from None
    # A task without score dimensions measures numbers: a dict label would drop out of its table unsaid.
    if isinstance(value, list) or (isinstance(value, dict) and not task.dimensions):
        raise InputError(
            f"expected a number, got {type(value).__name__} {reprlib.repr(value)}", item=item, field="label"
        )
    if not isinstance(value, dict):
        try:
            return _number(value)
        except ValueError as exc:
            raise InputError(str(exc), item=item, field="label") from None
    scores = {}
    for key, score in value.items():
        try:
            if score is not None:
                scores[str(key)] = _number(score)
        except ValueError as exc:
            raise InputError(f"score '{key}': {exc}", item=item, field="label") from None
    lacking = [d.human_key for d in task.dimensions if d.human_key not in scores]
    if lacking or not scores:
        raise InputError(
            f"scores lack {', '.join(lacking) or 'any value'}; present: {', '.join(scores) or 'none'}",
            item=item,
            field="label",
        )
    return scores


def _language_filter(languages: Sequence[str]) -> list[tuple[str, str | None]]:
    wanted = []
    for value in languages:
        try:
            wanted.append((normalize_language(value, field="languages"), None))
        except InputError:
            if not re.search(r"[-_]", value):  # a single unknown language: keep its "did you mean"
                raise
            wanted.append(split_pair(value, field="languages"))  # "de-en", "German-English"
    return wanted


def _wanted(language: str, response_language: str | None, wanted: list[tuple[str, str | None]]) -> bool:
    base = language.partition("-")[0]
    return any(
        (lang == language or ("-" not in lang and lang == base)) and tgt in (None, response_language)
        for lang, tgt in wanted
    )


def _same(field: str, value: Any, constant: str) -> bool:
    if field == "language":  # "German" in the column and "de" declared are the same language
        try:
            return normalize_language(str(value)) == normalize_language(constant)
        except InputError:
            pass
    return str(value).strip().casefold() == constant.strip().casefold()


def _pair_from_name(task: TaskSpec, file: Path) -> tuple[str, str]:
    parts = file.stem.split("_")
    for start in range(len(parts)):  # "de-en", "en_zh", or a prefixed "liteval_de-en"
        try:
            return split_pair("_".join(parts[start:]))
        except InputError:
            continue
    raise DataError(
        f"{file}: task '{task.name}' reads the language pair from the file name, but "
        f"'{file.name}' names none; rename it SOURCE-TARGET{file.suffix} (e.g. de-en{file.suffix}) "
        "or map --field language_pair=COLUMN"
    )


def _shown(counter: Counter[str]) -> str:
    return ", ".join(v for v, _ in counter.most_common(8)) or "none"


def _optional_language(raw: dict[str, Any], field: str, item_id: str) -> str | None:
    return None if _blank(raw.get(field)) else normalize_language(str(raw[field]), item=item_id, field=field)


def _languages(
    raw: dict[str, Any], item_id: str, file_pair: tuple[str, str] | None, default: str
) -> tuple[str, str | None]:
    """(language, response_language): pair column, else language column, else file name, else default."""
    if not _blank(raw.get("language_pair")):
        return split_pair(str(raw["language_pair"]), item=item_id)
    if _blank(raw.get("language")) and file_pair:
        return file_pair
    language = _optional_language(raw, "language", item_id) or default
    return language, _optional_language(raw, "response_language", item_id)


def _position(where: str, index: int, line: int | None) -> str:
    """Where a row is, 1-based as editors count: the line it starts on in a JSONL or CSV file, else the
    row of a JSON list, a Parquet file or a hub split."""
    name = os.path.basename(where)  # runs once per row: cheaper than parsing a Path
    return f"{name} line {line}" if line is not None else f"{name} row {index + 1}"


class _Loader:
    """Turns mapped rows into items, counting what the filters drop and collecting row problems."""

    def __init__(
        self,
        task: TaskSpec,
        constants: dict[str, str],
        languages: Sequence[str] | None,
        subsets: Sequence[str] | None,
    ) -> None:
        self.task, self.constants = task, constants
        self.languages = _language_filter(languages) if languages else None
        self.subsets = {s.strip().casefold() for s in subsets} if subsets else None
        self.default = normalize_language(task.dataset.default_language, field="default_language")
        self.items: list[Item] = []
        self.problems: list[InputError] = []
        self.seen: dict[str, Counter[str]] = defaultdict(Counter)  # values met, to explain an empty result
        self.dropped: Counter[str] = Counter()

    def row(
        self,
        raw: dict[str, Any],
        restricts: dict[str, str],
        where: str,
        stem: str,
        index: int,
        line: int | None,
        file_pair: tuple[str, str] | None,
        constants: dict[str, str],
    ) -> None:
        for f, c in restricts.items():
            self.seen[f][str(raw[f])] += 1
            if not _blank(raw[f]) and not _same(f, raw[f], c):
                self.dropped[f"not {f}={c!r} as declared"] += 1
                return
        # Kept rows take the declared spelling ("Reasoning" -> "reasoning"), so subsets group cleanly.
        raw |= {f: c for f, c in constants.items() if f in restricts or _blank(raw.get(f))}
        if not _blank(raw.get("id")) and (problem := id_problem(raw["id"])):
            self.problems.append(InputError(problem, item=_position(where, index, line), field="id"))
            return
        item_id = f"{stem}/{index}" if _blank(raw.get("id")) else str(raw["id"]).strip()
        subset = None if _blank(raw.get("subset")) else str(raw["subset"]).strip()
        self.seen["subset"][subset or "(none)"] += 1
        if self.subsets is not None and (subset or "").casefold() not in self.subsets:
            self.dropped["outside --subsets"] += 1
            return
        # Problems name the line a user opens the file at.
        shown = f"{item_id} ({_position(where, index, line)})"
        try:
            language, response_language = _languages(raw, shown, file_pair, self.default)
        except InputError as exc:
            self.problems.append(exc)
            return
        self.seen["language"][language] += 1
        values: dict[str, Any] = {"language": language, "response_language": response_language}
        if self.languages is not None and not _wanted(language, response_language, self.languages):
            self.dropped["outside --languages"] += 1
            return
        before = len(self.problems)
        for f in TEXT_FIELDS[self.task.mode]:
            value = raw.get(f)
            text = None if _blank(value) or kind_problem(value) else str(value)
            # Checked once here, on the way in (_text.py): no text reaches a judge, a record or a terminal
            # with half a character, a control character or only invisible characters.
            what = (
                "empty or missing text" if _blank(value) else kind_problem(value) or text_problem(text or "")
            )
            if what:
                self.problems.append(InputError(what, item=shown, field=f))
            else:
                values[f] = text
        label = raw.get("label")
        # Mapped or constant; unmapped means unlabelled data, and so does an empty cell (a partly
        # labelled file). NaN is no empty cell: parse_label refuses it.
        if "label" in raw and not (_blank(label) and not (isinstance(label, float) and math.isnan(label))):
            try:
                values["label"] = parse_label(raw["label"], self.task, shown)
            except InputError as exc:
                self.problems.append(exc)
        if len(self.problems) == before:
            group = None if _blank(raw.get("group")) else str(raw["group"])
            meta = {"source": where, "row": index}
            self.items.append(
                Item(id=item_id, mode=self.task.mode, subset=subset, group=group, meta=meta, **values)
            )

    def check(self, wheres: list[str], rows: int) -> None:
        """Raise the collected row problems as one InputError, or a DataError when nothing is left."""
        counts = Counter(item.id for item in self.items)
        self.problems += [
            InputError(
                "id is not unique; map a unique column with --field id=COLUMN, or drop "
                "the id mapping to number rows",
                item=i,
                field="id",
            )
            for i, n in counts.items()
            if n > 1
        ]
        if len(self.problems) == 1:
            raise self.problems[0]
        if self.problems:
            listed = "; ".join(str(p) for p in self.problems[:_LISTED])
            more = f"; and {len(self.problems) - _LISTED} more" if len(self.problems) > _LISTED else ""
            error = InputError(f"{len(self.problems)} problems in the data: {listed}{more}")
            error.item, error.field = self.problems[0].item, self.problems[0].field
            raise error
        if not self.items:
            dropped = ", ".join(f"{n} {why}" for why, n in self.dropped.items()) or "the data is empty"
            present = "; ".join(f"{f} values present: {_shown(c)}" for f, c in self.seen.items())
            raise DataError(f"no items from {', '.join(wheres)}: {rows} rows read, {dropped}. {present}")
