"""The unit of work: one item to judge, with its gold label when the data has one."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from cejudge_dspy.data._text import text_problem
from cejudge_dspy.errors import InputError

if TYPE_CHECKING:
    import dspy

Label = str | float | dict[str, float] | None


@dataclass(frozen=True)
class Item:
    """One item. Pointwise items fill `response`; pairwise items fill `response_a`/`response_b`.

    `label` is "A"/"B"/"tie" (pairwise), a number (pointwise), or a dict of per-dimension human
    scores (CheckEval tasks); None when the data is unlabelled. `group` ties items that share a
    source (a document, a dialogue context) for per-group correlation.
    """

    id: str
    mode: Literal["pointwise", "pairwise"]
    instruction: str
    response: str | None = None
    response_a: str | None = None
    response_b: str | None = None
    language: str = "en"
    response_language: str | None = None
    label: Label = None
    subset: str | None = None
    group: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The item as results.jsonl stores it (`meta` is loader bookkeeping and is not stored)."""
        data = asdict(self)
        data.pop("meta", None)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Item:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})

    def inputs(self) -> dict[str, Any]:
        """Keyword arguments for the judge program of this item's mode."""
        if self.mode == "pairwise":
            return {
                "instruction": self.instruction,
                "response_a": self.response_a,
                "response_b": self.response_b,
                "language": self.language,
            }
        return {
            "instruction": self.instruction,
            "response": self.response,
            "language": self.language,
            "response_language": self.response_language,
        }

    def to_example(self) -> dspy.Example:
        """A `dspy.Example` for optimizers: the judge inputs marked as inputs, plus `label` and `id`."""
        import dspy  # here, not at the top: reading items (a resume) never needs DSPy's import

        inputs = self.inputs()
        return dspy.Example(**inputs, label=self.label, id=self.id).with_inputs(*inputs)


def require_text(value: Any, field: str, item: str | None = None) -> str:
    """Texts must be non-empty strings; the error names the item and the field."""
    if value is None:
        raise InputError("is missing", item=item, field=field)
    if not isinstance(value, str):
        raise InputError(f"must be text, got {type(value).__name__}", item=item, field=field)
    if problem := text_problem(value):  # a lone surrogate, a control character, only invisible characters
        raise InputError(problem, item=item, field=field)
    return value
