"""Score released prediction files (the CE-Judge paper's ``labels/*.txt``) without running a judge.

Each file holds one item per line, ``pred, gold``, separated by a comma, a tab or whitespace. An
optional header line (e.g. ``pred,gold``) is skipped, as are blank lines and ``#`` comments. A file
whose golds are A/B/tie labels is pairwise and scored by accuracy; a file with numeric golds is
pointwise and scored by Kendall tau-b. A pred that cannot be read (empty, ``None``, a non-number in
a pointwise file, a non-label in a pairwise one) is counted as unparsed and not scored; a pairwise
file's strict accuracy counts it as wrong instead, as the paper's own script does. A malformed line or
gold is a `DataError` naming the file and line number.

The language comes from the file name: ``de.txt``, ``reasoning_de.txt`` and ``mmeval_de_reasoning.txt``
give ``de``; ``de-en.txt`` and ``liteval_de-en.txt`` give ``de-en``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cejudge_dspy.data import read_text_lines
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.metrics._correlations import kendall_tau
from cejudge_dspy.metrics._measures import accuracy
from cejudge_dspy.metrics._result import MetricResult, normalize_label, undefined_result

Kind = Literal["pairwise", "pointwise"]
_LANG = re.compile(r"^[a-z]{2,3}(-[a-z]{2,4})?$", re.IGNORECASE)


@dataclass(frozen=True)
class PredictionScore:
    """The score of one prediction file: accuracy (pairwise) or Kendall tau-b (pointwise)."""

    path: str
    name: str  # file stem, e.g. "mmeval_de_reasoning": keeps chat/reasoning files apart in a table
    language: str
    kind: Kind
    result: MetricResult
    n_lines: int  # data lines read (header, blanks and comments not counted)
    unparsed_lines: tuple[int, ...]  # 1-based line numbers whose pred could not be read

    @property
    def value(self) -> float:
        return self.result.value

    @property
    def n_unparsed(self) -> int:
        return len(self.unparsed_lines)

    @property
    def strict_value(self) -> float | None:
        """Pairwise accuracy with unparsed preds counted as wrong, as the original CE-Judge
        ``evaluate`` script does; compare with the paper's tables. None for pointwise files."""
        if self.kind != "pairwise":
            return None
        denominator = self.result.n + self.n_unparsed
        return self.result.extra["n_correct"] / denominator if denominator else math.nan

    def to_dict(self) -> dict[str, Any]:
        strict = self.strict_value
        return {
            "path": self.path,
            "name": self.name,
            "language": self.language,
            "kind": self.kind,
            "n_lines": self.n_lines,
            "n_unparsed": self.n_unparsed,
            "strict_value": None if strict is None or math.isnan(strict) else strict,
            "result": self.result.to_dict(),
        }


def language_from_path(path: str | Path) -> str:
    """Language (pair) from a file name: the ``_``-separated part of the stem that looks like a
    language code (2-3 letters, optionally ``-xx``), preferring a pair; else the whole stem."""
    stem = Path(path).name.split(".")[0]
    codes = [part for part in stem.split("_") if _LANG.match(part)]
    pairs = [c for c in codes if "-" in c]
    return (pairs or codes or [stem])[-1]


def _fields(line: str) -> list[str]:
    if "," in line:
        parts = line.split(",")
    elif "\t" in line:
        parts = line.split("\t")
    else:
        parts = line.split()
    return [p.strip() for p in parts]


def _label(text: str) -> str | None:
    try:
        return normalize_label(text)
    except InputError:
        return None


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _read_lines(path: Path) -> list[str]:
    if not path.exists():
        raise DataError(f"{path}: no such prediction file")
    # Checked as a regular file before opening (a named pipe would block); a BOM from Excel is dropped.
    return read_text_lines(path, "pass an existing prediction file ('pred, gold' per line)")


def score_prediction_file(
    path: str | Path, *, language: str | None = None, include_gold_ties: bool = False
) -> PredictionScore:
    """Score one ``pred, gold`` file; see the module docstring for the format and `accuracy` for ties."""
    path = Path(path)
    kind: Kind | None = None
    kind_line = 0
    preds: list[Any] = []
    golds: list[Any] = []
    unparsed: list[int] = []
    first = True
    for lineno, raw in enumerate(_read_lines(path), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = _fields(line)
        if len(fields) != 2:
            raise DataError(
                f"{path} line {lineno}: expected 'pred, gold' (2 fields), got {len(fields)}: {raw!r}"
            )
        pred_text, gold_text = fields
        label, number = _label(gold_text), _number(gold_text)
        if (
            first
            and label is None
            and number is None
            and _label(pred_text) is None
            and _number(pred_text) is None
        ):
            first = False  # a header such as "pred,gold": neither field is a value
            continue
        first = False
        gold_kind: Kind | None = (
            "pairwise" if label is not None else "pointwise" if number is not None else None
        )
        if gold_kind is None:
            raise DataError(f"{path} line {lineno}: gold {gold_text!r} is neither A/B/tie nor a number")
        if kind is None:
            kind, kind_line = gold_kind, lineno
        elif gold_kind != kind:
            raise DataError(
                f"{path} line {lineno}: gold {gold_text!r} does not fit a {kind} file (see line {kind_line})"
            )
        pred = _label(pred_text) if kind == "pairwise" else _number(pred_text)
        if pred is None:
            unparsed.append(lineno)
        preds.append(pred)
        golds.append(label if kind == "pairwise" else number)
    if kind is None:
        raise DataError(f"{path}: no prediction lines (expected 'pred, gold' per line)")
    if kind == "pairwise":
        result = accuracy(preds, golds, include_gold_ties=include_gold_ties)
    else:
        result = kendall_tau(preds, golds)
    return PredictionScore(
        path=str(path),
        name=path.name.split(".")[0],
        language=language or language_from_path(path),
        kind=kind,
        result=result,
        n_lines=len(preds),
        unparsed_lines=tuple(unparsed),
    )


def score_prediction_files(
    paths: Sequence[str | Path],
    *,
    languages: Sequence[str | None] | None = None,
    include_gold_ties: bool = False,
) -> list[PredictionScore]:
    """Score several files, in order. ``languages`` (same length as ``paths``; None entries keep the
    name-derived language) overrides the language taken from each file name."""
    if languages is not None and len(languages) != len(paths):
        raise InputError(f"got {len(languages)} languages for {len(paths)} files", field="languages")
    langs = languages if languages is not None else [None] * len(paths)
    return [
        score_prediction_file(p, language=lang, include_gold_ties=include_gold_ties)
        for p, lang in zip(paths, langs, strict=True)
    ]


def average(scores: Sequence[PredictionScore], kind: Kind | None = None) -> MetricResult:
    """Macro average over files (each file, i.e. language, weighs the same, as in the paper's "Avg").

    Accuracy and tau cannot be averaged together: with mixed kinds pass ``kind`` to pick one.
    ``n`` is the number of files averaged, ``n_excluded`` the files whose value is undefined;
    ``extra`` sums the scored items (``n_items``) and unparsed preds (``n_unparsed``) over all files.
    """
    kinds = {s.kind for s in scores}
    if kind is None and len(kinds) > 1:
        raise InputError(
            "mixes pairwise and pointwise files; pass kind='pairwise' or 'pointwise'", field="kind"
        )
    chosen = [s for s in scores if kind is None or s.kind == kind]
    name = f"mean_{chosen[0].result.name}" if chosen else "mean"
    defined = [s for s in chosen if s.result.defined]
    extra = {"n_items": sum(s.result.n for s in chosen), "n_unparsed": sum(s.n_unparsed for s in chosen)}
    if not defined:
        return undefined_result(name, 0, len(chosen), "no file with a defined score", **extra)
    mean = sum(s.value for s in defined) / len(defined)
    return MetricResult(name, mean, len(defined), len(chosen) - len(defined), extra=extra)


def strict_average(scores: Sequence[PredictionScore]) -> float | None:
    """Macro average of the pairwise files' strict accuracy (unparsed counted wrong), the paper's "Avg";
    None without a pairwise file whose strict accuracy is defined."""
    values = [v for s in scores if (v := s.strict_value) is not None and not math.isnan(v)]
    return sum(values) / len(values) if values else None
