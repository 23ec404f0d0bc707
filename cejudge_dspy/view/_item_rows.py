"""The viewer's item table as plain data: one row per item with its outcome, the filters' categories,
and the CSV export.

An item's outcome is one of OUTCOMES: pairwise items are correct, wrong or tie (under the argmax rule
the judge changing its mind across orders; under the probability rule p(A) inside the tie band),
"gold tie" when humans called it a tie (accuracy leaves those out) and "no gold" when the item is
unlabelled; pointwise items that were scored are "scored"; any item may be "unparsed" or "error"; an
item a selective summary left to a person (`--abstain-below`, metrics/_selective.py) is "abstained".
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.metrics import language_key, mean_human_score, prediction
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import TaskSpec

OUTCOMES = ("correct", "wrong", "tie", "gold tie", "no gold", "scored", "abstained", "unparsed", "error")
CSV_COLUMNS = (
    "run",
    "id",
    "language",
    "gold",
    "judge",
    "verdict_AB",
    "verdict_BA",
    "status",
    "outcome",
    "error_stage",
    "seconds",
    "calls",
    "prompt_tokens",
    "completion_tokens",
)


def gold_value(record: Record, spec: TaskSpec) -> Any:
    """The gold label as one value: "A"/"B"/"tie", a number, or the mean human score over the task's
    dimensions for a per-dimension label (None when unlabelled or a dimension is missing)."""
    label = record.item.label
    if isinstance(label, Mapping):
        return mean_human_score(label, [d.human_key for d in spec.dimensions] or list(label))
    return label


def outcome(record: Record, abstained: frozenset[str] = frozenset()) -> str:
    """The item's category in OUTCOMES (see the module docstring); `abstained`: the ids the run's
    summary left to a person."""
    if record.status in ("unparsed", "error"):
        return record.status
    if record.id in abstained:
        return "abstained"
    result = record.result
    if result is None:
        return "error"
    if result.mode != "pairwise":
        return "scored"
    if result.verdict == "tie":
        return "tie"
    gold = record.item.label
    if gold == "tie":
        return "gold tie"
    if gold not in ("A", "B"):
        return "no gold"
    return "correct" if result.verdict == gold else "wrong"


def item_row(
    record: Record, spec: TaskSpec, run: str = "", abstained: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The table's (and the CSV's) row for one record."""
    result = record.result
    orders = {o.order: o.verdict for o in result.orders} if result else {}
    usage = result.usage if result else None
    row: dict[str, Any] = {
        "run": run,
        "id": record.id,
        "language": language_key(record.item),
        "gold": gold_value(record, spec),
        "judge": prediction(record),
        "verdict_AB": orders.get("AB"),
        "verdict_BA": orders.get("BA"),
        "status": record.status,
        "outcome": outcome(record, abstained),
        "error_stage": result.error_stage if result else None,
        "seconds": record.seconds,
        "calls": usage.calls if usage else 0,
        "prompt_tokens": usage.prompt_tokens if usage else 0,
        "completion_tokens": usage.completion_tokens if usage else 0,
    }
    for dim in spec.dimensions:
        row[f"score_{dim.name}"] = result.dimension_scores.get(dim.name) if result else None
    if result is not None and result.probabilities is not None:
        row.update(probability_columns(result))
    if record.members is not None:
        row.update(panel_columns(record))
    return row


def panel_columns(record: Record) -> dict[str, Any]:
    """A panel's record (judges.panel): the members' votes in panel order ("A A B", "-" for a member that
    gave none), the share agreeing with the most common vote, and the majority outcome."""
    panel = (record.result.details.get("panel") or {}) if record.result is not None else {}
    votes = panel.get("votes") or {}
    shown = [_vote(votes.get(m.get("name"))) for m in record.members or []]
    return {
        "votes": " ".join(shown),
        "agreement": panel.get("agreement"),
        "panel_outcome": panel.get("outcome"),
    }


def _vote(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def probability_columns(result: JudgeResult) -> dict[str, Any]:
    """A record judged with token probabilities: the rule that decided it, the argmax answer kept beside
    the headline, and (where read) p(A) with its confidence, or the expected score."""
    probs, kept = result.probabilities, result.argmax
    ok = probs is not None and probs.ok
    kept_or_headline = kept or result  # a record decided by the argmax before `argmax` was kept
    argmax = kept_or_headline.verdict if result.mode == "pairwise" else kept_or_headline.score
    out: dict[str, Any] = {"decided_by": result.decision, "argmax": argmax}
    if result.mode == "pairwise":
        out["p_A"] = probs.p_a if ok else None
        out["confidence"] = probs.confidence if ok else None
    else:
        out["expected_score"] = probs.score if ok else None
    return out


def item_rows(
    records: Sequence[Record], spec: TaskSpec, run: str = "", abstained: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    return [item_row(r, spec, run, abstained) for r in records]


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV of item rows: CSV_COLUMNS, then any per-dimension score columns, in first-seen order.
    None is an empty cell; numbers are written as Python writes them; text that a spreadsheet would
    run as a formula gets a leading `'` (`_cell`)."""
    extra = [k for row in rows for k in row if k not in CSV_COLUMNS]
    columns = [*CSV_COLUMNS, *dict.fromkeys(extra)]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(row.get(k)) for k in columns})
    return buf.getvalue()


def filter_options(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the filters offer: the languages present, the outcomes present (in OUTCOMES order) with
    their counts, and the range of numeric judge scores (None when there are none)."""
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    scores = [r["judge"] for r in rows if _is_number(r["judge"])]
    return {
        "languages": sorted({r["language"] for r in rows}),
        "outcomes": {o: n for o, n in counts.items() if n},
        "score_range": [min(scores), max(scores)] if scores else None,
    }


# OWASP's CSV injection list: a cell starting with one of these is a formula to Excel, LibreOffice and
# Google Sheets (an item's id, language or error text comes from the data file, so from anyone).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _cell(value: Any) -> Any:
    """A CSV cell: empty for None, numbers as they are, formula-like text prefixed with `'` (OWASP)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value  # a number (or bool) is written by csv as Python prints it: never a formula
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        value = "'" + value
    # With "\n" rows the writer quotes a cell holding "\n" but not one holding a bare "\r", which a
    # reader then takes for the end of the row: a carriage return is written as the line break it means.
    return value.replace("\r\n", "\n").replace("\r", "\n")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
