"""The types of a task declaration: what `programs/*.toml` parses into (see _catalog.py and _parsing.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cejudge_dspy.errors import TaskError

Mode = Literal["pointwise", "pairwise"]
# The concepts prompt CE-Judge's first stage uses: the generic skeleton (1-4 concepts) or, as the paper
# does for LitEval, the linguistic concepts a translator must watch.
CONCEPT_PROMPTS = ("skeleton", "linguistic")
METRICS = ("accuracy", "kendall", "spearman", "pearson")
# The canonical item fields a dataset mapping may fill; anything else is a typo.
ITEM_FIELDS = (
    "id",
    "instruction",
    "response",
    "response_a",
    "response_b",
    "label",
    "language",
    "response_language",
    "language_pair",
    "subset",
    "group",
)


@dataclass(frozen=True)
class DatasetSpec:
    """Where a task's items come from and how columns map onto item fields.

    `fields` maps canonical item fields (ITEM_FIELDS) to dataset columns. `constants` fills a field
    with a fixed value (MM-Eval's gold is always the `chosen` column, mapped to response_a, so
    `label = "A"`). `language_from_filename` reads a language pair such as `de-en` from a local file
    name, as LitEval distributes one CSV per pair. `parallel` holds the items' own versions of their texts in
    other languages, declared as `instruction@ko = "prompt_ko"` in [dataset.fields]: {language: {field:
    column}}, read by `cejudge consistency` instead of translating (the language as written; the data layer
    normalizes it).
    """

    hub_id: str = ""
    config: str = ""
    split: str = "test"
    delimiter: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    language_from_filename: bool = False
    default_language: str = "en"
    # For a task without a hub dataset: where its data comes from, and `--data ...` flags that try the task
    # on a sample at hand (both shown when --data is missing).
    origin: str = ""
    try_with: str = ""
    parallel: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class SubDimension:
    name: str
    definition: str
    seeds: tuple[str, ...]


@dataclass(frozen=True)
class Dimension:
    """A CheckEval evaluation dimension; `human_key` names its human score in the item's label."""

    name: str
    definition: str
    subdimensions: tuple[SubDimension, ...]
    human_key: str = ""


@dataclass(frozen=True)
class TaskSpec:
    """One declared task. `task` and `criteria` are the wording every stage receives as input."""

    name: str
    version: int
    mode: Mode
    description: str
    task: str
    criteria: str
    metric: str
    dataset: DatasetSpec
    scale: dict[int, str] = field(default_factory=dict)
    dimensions: tuple[Dimension, ...] = ()
    path: Path | None = None
    # Pointwise: a response surely written in another language than the item's response language
    # gets the scale's lowest level without an LLM call (see judges/cejudge/_language_check.py).
    check_response_language: bool = False
    # Pointwise translation: a response the backbone itself finds implausible as a translation of the
    # instruction (word salad) gets the lowest level without an LLM judgment
    # (judges/cejudge/_likelihood_check.py).
    check_translation_likelihood: bool = False
    # The levels the declaration describes; `scale` also holds the levels between them (see `_scale`).
    described_levels: tuple[int, ...] = ()
    concepts: str = "skeleton"
    extends: str = ""
    preset: str = ""

    @property
    def scale_range(self) -> tuple[int, int]:
        if not self.scale:
            raise TaskError(f"task '{self.name}' declares no [scale]; it is not a pointwise task")
        return min(self.scale), max(self.scale)
