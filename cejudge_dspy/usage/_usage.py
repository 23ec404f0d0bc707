"""What one judgment cost in LM work: `Usage`, as records carry it (plain data: reading a run's records
imports nothing of DSPy; _accounting.py fills it in while a judge works)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Usage:
    """LM work done for one item. `reused` counts stage results shared with an earlier call."""

    calls: int = 0
    cached: int = 0
    reused: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_stage: dict[str, int] = field(default_factory=dict)

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached += other.cached
        self.reused += other.reused
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        for stage, n in other.by_stage.items():
            self.by_stage[stage] = self.by_stage.get(stage, 0) + n

    def to_dict(self) -> dict[str, Any]:
        # Stages finish in whatever order concurrency gives; sorted, the same work writes the same record.
        return asdict(self) | {"by_stage": dict(sorted(self.by_stage.items()))}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(**data)
