"""What every meta-metric returns and how it takes its inputs: `MetricResult`, missing values, pairwise
labels and aligned sequences. Split from _measures.py (`cejudge_dspy.metrics` exports `MetricResult`);
_agreement.py, _significance.py and _correlations.py build on them too.

Conventions shared by all of them:

* Inputs are plain sequences (lists, tuples, 1-D numpy arrays) aligned by item.
* A judge output that could not be parsed arrives as ``None`` or NaN. Such items are EXCLUDED from the
  value and COUNTED in ``n_excluded``; they are never scored as right or wrong. A missing gold is
  treated the same way.
* Every function returns a frozen `MetricResult` (except the per-pair scalar `concordance`). When
  the value is undefined (no items, constant input, ...) it is NaN and ``reason`` says why, so
  tables can print "n/a (constant input)" instead of an unexplained number. `to_dict()` turns NaN
  into ``None`` so summaries stay valid JSON.

Pairwise verdicts are the labels ``"A"``, ``"B"`` and ``"tie"`` (case-insensitive on input).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from cejudge_dspy.errors import InputError

PAIRWISE_LABELS: tuple[str, ...] = ("A", "B", "tie")
_LABEL_MAP = {"A": "A", "B": "B", "TIE": "tie"}
_CANONICAL = {"A": "A", "B": "B", "tie": "tie"}  # as records hold them: looked up without strip/upper


class _ReadOnlyDict(dict):  # type: ignore[type-arg]
    """A dict that refuses mutation, so a frozen result stays frozen. Still a real dict, so JSON,
    `dataclasses.asdict`, pickling (for process pools) and equality treat it as one."""

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("MetricResult.extra is read-only; build a new result with dataclasses.replace")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return type(self), (dict(self),)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))


@dataclass(frozen=True)
class MetricResult:
    """One meta-metric value with its sample size and, optionally, a CI and a p-value.

    ``n`` is the number of items (units for agreement metrics) that entered the value; ``n_excluded``
    the number dropped for missing values. ``extra`` holds metric-specific counts (``n_pred_ties``,
    ``b``/``c`` for McNemar, ...); it is read-only.
    """

    name: str
    value: float
    n: int
    n_excluded: int = 0
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    reason: str | None = None
    extra: Mapping[str, int | float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A frozen dataclass can still hand out a mutable dict; freeze it too.
        object.__setattr__(self, "extra", _ReadOnlyDict(self.extra))

    @property
    def defined(self) -> bool:
        """False when the value is NaN (see ``reason``)."""
        return not math.isnan(self.value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; NaN floats become ``None`` (JSON has no NaN)."""
        return {k: _json_safe(v) for k, v in asdict(self).items()}


def _json_safe(v: Any) -> Any:
    if isinstance(v, dict):  # also turns the read-only extra into a plain dict
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def is_missing(value: object) -> bool:
    """True for ``None`` and float NaN (python or numpy), the two spellings of "unparsed"."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def normalize_label(value: object, *, item: int | None = None, field: str = "label") -> str:
    """Map a pairwise verdict to ``"A"``, ``"B"`` or ``"tie"``; anything else is an `InputError`."""
    if isinstance(value, str):
        label = _CANONICAL.get(value) or _LABEL_MAP.get(value.strip().upper())
    else:
        label = None
    if label is None:
        raise InputError(f"{value!r} is not a pairwise label (A, B or tie)", item=_item(item), field=field)
    return label


def _item(i: int | None) -> str | None:
    return None if i is None else str(i)


def check_aligned(arrays: Sequence[Sequence[Any]], names: Sequence[str]) -> list[list[Any]]:
    """Materialise item-aligned inputs as lists; unequal lengths are an `InputError`."""
    lists = [list(a) for a in arrays]
    if len({len(a) for a in lists}) > 1:
        sizes = ", ".join(f"{n}={len(a)}" for n, a in zip(names, lists, strict=True))
        raise InputError(f"inputs must have the same length ({sizes})", field=names[1])
    return lists


def undefined_result(name: str, n: int, n_excluded: int, reason: str, **extra: int | float) -> MetricResult:
    """A NaN result that says why it is undefined."""
    return MetricResult(name, math.nan, n, n_excluded, reason=reason, extra=extra)
