"""`OptimizeReport`: what one `optimize` call returns, and the manifest fields it knows.

Kept apart from the optimizer loop (_optimize.py): code that only reads a run's outcome (the CLI prints
it and builds the saved program's manifest from it) needs a plain record, not the loop: the settings,
the LM-call estimate, the dev scores before and after, the held-out decision and where the program came
from.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import dspy

from cejudge_dspy.tuning._budget import Budget, CallEstimate
from cejudge_dspy.tuning._dev import DevScore


@dataclass
class OptimizeReport:
    task: str
    task_version: int
    optimizer: str
    budget: Budget
    demos: int
    seed: int
    settings: dict[str, Any]
    estimate: CallEstimate
    program: dspy.Module
    source: Literal["optimized", "best-so-far", "base"]
    dev_before: DevScore
    dev_after: DevScore | None
    sizes: dict[str, int]
    changed_stages: list[str] = field(default_factory=list)
    # The held-out comparison (_gain.held_out_gain): whether this program may replace the starting one.
    held_out: dict[str, Any] | None = None
    seconds: float = 0.0
    log_dir: str | None = None
    resumed: bool = False  # GEPA continued from a checkpoint in log_dir

    @property
    def interrupted(self) -> bool:
        return self.source != "optimized"

    def manifest(self, *, task_lm: str, reflection_lm: str, data: str | None) -> dict[str, Any]:
        """The manifest fields this run knows (save_program adds stages, dspy version and time)."""
        return {
            "task": self.task,
            "task_version": self.task_version,
            "source": self.source,
            "backbones": {"task": task_lm, "reflection": reflection_lm},
            "optimizer": {
                "name": self.optimizer,
                "budget": self.budget,
                "demos": self.demos,
                "settings": self.settings,
            },
            "seed": self.seed,
            "splits": self.sizes,
            "data": data,
            "changed_stages": self.changed_stages,
            # Wall time of this invocation; a resumed run (GEPA checkpoint, LM cache) takes seconds.
            "seconds": round(self.seconds, 1),
            "resumed": self.resumed,
            "dev": {
                "before": asdict(self.dev_before),
                "after": asdict(self.dev_after) if self.dev_after else None,
            },
            "held_out": self.held_out,
        }
