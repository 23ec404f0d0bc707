"""What a `--ray` run reports as it goes: per-worker counts and items sent again, for the CLI's display.

Plain dataclasses the driver (_distributed.py) updates in place and the CLI (cli/_progress.py) reads; they
need no Ray, so the display can show them without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class WorkerCounts:
    """Per-worker progress for the display: records received, deaths seen, where it runs."""

    where: str = "starting"  # host:pid
    node: str = ""  # Ray node id (8 hex digits)
    pid: int = 0
    done: int = 0
    lost: int = 0  # processes of this worker that died
    alive: bool = True
    dead_pids: set[int] = field(default_factory=set)


@dataclass
class RayProgress:
    """What `judge_on_ray` reports as it goes (read by the CLI's display)."""

    workers: dict[str, WorkerCounts] = field(default_factory=dict)
    requeued: int = 0  # items sent again after a worker died

    def describe(self) -> str:
        """`2 workers on 2 nodes: w1 12 (node 1a2b3c4d), w2 12 (node 5e6f7a8b, lost 1); 3 items sent
        again`: records each worker sent, the nodes it ran on last, and the deaths it had."""
        nodes = {w.node for w in self.workers.values() if w.node}
        parts = []
        for name, w in self.workers.items():
            notes = [f"node {w.node}"] if w.node else []
            notes += [f"lost {w.lost}"] if w.lost else []
            parts.append(f"{name} {w.done} ({', '.join(notes)})" if notes else f"{name} {w.done}")
        text = f"{len(self.workers)} workers on {len(nodes)} nodes: {', '.join(parts)}"
        return text + (f"; {self.requeued} items sent again" if self.requeued else "")
