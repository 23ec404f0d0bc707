"""What `evaluate` takes, typed: `EvaluateOptions` (the task, the data or items, the judge's and the
backbone's options, the run directory, ...) and `EvaluateProgress`, what it tells as it goes.

Light on purpose (no DSPy): the CLI reads the bounds here for its help texts while it builds its flags.
Each bound is a `judges.Option`, the one bounds mechanism (`Option.problem`); an error names the option as
Python spells it (`concurrency`), and the CLI names its flag instead (cli/_common.py `as_flags`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.backbones import BackboneOptions, backbone_options
from cejudge_dspy.errors import InputError, check_names
from cejudge_dspy.judges import JudgeOptions, Option

if TYPE_CHECKING:  # imported when a run starts: they bring DSPy
    from cejudge_dspy.data import Item
    from cejudge_dspy.evaluate._cluster import RayOptions
    from cejudge_dspy.judges.panel import PanelMember
    from cejudge_dspy.runs import Record
    from cejudge_dspy.usage import StageProgress

# Resamples a bootstrap interval may draw: each draws one index per item, all held at once, so a larger
# count costs memory in proportion and hangs a command asked for 10^8.
MAX_BOOTSTRAP = 10_000
CONFIDENCE_CHOICES = ("auto", "margin", "agreement", "both")


def _number(flag: str, what: str, low: float | None = None, high: float | None = None) -> Option:
    return Option(flag=flag, help="", kind="number", low=low, high=high, what=what)


# The run's numbers, by EvaluateOptions field (and RayOptions' for `--ray`).
BOUNDS: dict[str, Option] = {
    "concurrency": _number("--concurrency", "items in flight", 1),
    "bootstrap": _number("--bootstrap", "bootstrap resamples; 0: no intervals", 0, MAX_BOOTSTRAP),
    "limit": _number("--limit", "items", 1),
    "first": _number("--first", "items", 1),
    "abstain_below": _number("--abstain-below", "a confidence", 0, 1),
    "ray_actors": _number("--ray-actors", "actors", 1),
    # Above 0: a Ray actor that reserves no CPU is scheduled without limit (the low end is inclusive).
    "ray_cpus_per_actor": _number("--ray-cpus-per-actor", "CPUs each actor reserves", 0.001),
}


def check_bound(name: str, value: Any, option: Option | None = None) -> None:
    """One line naming `name` (as Python spells it) when `value` is out of its bounds; None: not given."""
    if value is not None and (problem := (option or BOUNDS[name]).problem(value)) is not None:
        raise InputError(problem, option=name)


@dataclass(frozen=True)
class EvaluateOptions:
    """Everything one `evaluate` run is:
    `EvaluateOptions(task="chat", data="dev.jsonl", backbone="simulated:0")`.

    `data` is a local file or directory (None: the task's hub dataset); `items` judges these items instead.
    `judge` is the judge (its method, program and options); `panel` judges with several members instead.
    `backbone` is the backbone and its settings (a `BackboneOptions`, or a spec such as "simulated:0" for
    one with default settings). `seed` is the run's (the sample of `limit`, the bootstrap, the backbone's;
    None: the backbone's, 42 unless it names another). `out` is the run directory
    (default runs/<task>-<method or panel>[-<preset>]); a rerun with the same options resumes it.
    """

    task: str
    data: str | Path | None = None
    items: Sequence[Item] | None = None
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    backbone: BackboneOptions | str = field(default_factory=BackboneOptions)
    panel: Sequence[PanelMember] | None = None
    panel_source: str = "panel"  # what a member's error names (a panel file's path)
    out: str | Path | None = None
    concurrency: int = 1
    limit: int | None = None
    first: int | None = None
    seed: int | None = None
    languages: Sequence[str] | None = None
    subsets: Sequence[str] | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    constants: Mapping[str, str] = field(default_factory=dict)
    shard: tuple[int, int] | None = None
    bootstrap: int = 1000
    abstain_below: float | None = None
    confidence: str = "auto"
    force_new: bool = False
    ray: RayOptions | None = None  # judge on Ray actors (`pip install 'cejudge-dspy[ray]'`)
    preset: str | None = None  # the preset the options came from (recorded, not compared on resume)
    headline: str | None = None  # the metric a pairwise run's table leads with

    def __post_init__(self) -> None:
        # A spec alone is the backbone with default settings.
        object.__setattr__(self, "backbone", backbone_options(self.backbone))
        seed, own = self.seed, self.backbone.seed
        if seed is not None and own != BackboneOptions().seed and seed != own:
            raise InputError(f"is {seed} and the backbone's seed is {own}: a run has one seed", option="seed")

    @classmethod
    def create(cls, **values: Any) -> EvaluateOptions:
        """`EvaluateOptions(**values)`, an unknown name refused with the nearest known one."""
        check_names(values, [f.name for f in fields(cls)], "evaluate option")
        return cls(**values)

    @property
    def method(self) -> str:
        return "panel" if self.panel is not None else self.judge.method

    @property
    def run_dir(self) -> Path:
        if self.out is not None:
            return Path(self.out)
        return Path(f"runs/{self.task}-{self.method}" + (f"-{self.preset}" if self.preset else ""))

    @property
    def lm(self) -> str:
        """The backbone spec."""
        return self.run_backbone.lm

    @property
    def run_seed(self) -> int:
        """The run's seed: `seed`, else the backbone's."""
        assert isinstance(self.backbone, BackboneOptions)
        return self.backbone.seed if self.seed is None else self.seed

    @property
    def run_backbone(self) -> BackboneOptions:
        """The backbone's settings with the run's seed."""
        assert isinstance(self.backbone, BackboneOptions)
        return replace(self.backbone, seed=self.run_seed)


class EvaluateProgress:
    """What `evaluate` tells as it goes; every method does nothing here. Subclass it and override what you
    show (the CLI's live display does); `evaluate(..., progress=...)` takes one."""

    def note(self, line: str) -> None:
        """A line for the person running it: the counts, the program, a backbone that lacked a feature."""

    def status(self, message: str) -> None:
        """The backbone's state while it starts (assembling, loading), "" once judging."""

    def judging(self, title: str, total: int) -> AbstractContextManager[Any]:
        """The block in which `total` items are judged (a live display lives as long as it)."""
        return nullcontext()

    def stage(self, item_id: str, event: StageProgress) -> None:
        """An item's stage progress (its LM calls done of expected)."""

    def record(self, record: Record) -> None:
        """An item judged and written."""

    def workers(self, workers: dict[str, Any]) -> None:
        """On Ray: the per-worker counts, updated in place as records come."""

    def ready(self) -> None:
        """On Ray: the workers are up; judging starts now."""
