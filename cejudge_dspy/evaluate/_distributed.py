"""`cejudge evaluate --ray`: a run's items judged by a pool of Ray actors, written by the driver alone.

The driver groups the pending items by instruction (`group_key`: items that share one share its concepts
and translation, so a group stays on one worker), starts `actors` workers (_worker.py: each builds the run's
program and backbone once and checks the program identity), and keeps each worker fed with up to
`concurrency` groups. A worker yields each record as it finishes (a Ray streaming generator); the driver
appends it to results.jsonl with the runner's own atomic write, under the run directory's lock, so resume,
summaries, `compare` and `view` see an ordinary run.

Faults. Actors restart when their process dies (`max_restarts`). When a worker dies mid-group, the items
of that group not yet written go back to the front of the queue for any live worker; an item whose worker
died `max_attempts` times is recorded as an error (so the next run retries it) instead of killing workers
forever. Items are written once: the driver writes only what it received, and skips an id it already
wrote. Ctrl-C stops the driver between writes; what is written is a valid run that resumes with or
without Ray. Retrying per item, not with Ray's task retries, keeps finished items from being judged twice.

Ray is optional (`pip install 'cejudge-dspy[ray]'`) and imported only inside functions, here and in
_cluster.py (connecting to a cluster); grouping is in _groups.py, the progress records in _ray_progress.py.
The package's face, `cejudge_dspy.evaluate`, exports their public names.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cejudge_dspy.data import Item
from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.evaluate._cluster import (
    RayOptions,
    RayUnavailableError,
    _cause,
    _first_line,
    _import_ray,
    cluster_env,
)
from cejudge_dspy.evaluate._groups import groups_of
from cejudge_dspy.evaluate._ray_progress import RayProgress, WorkerCounts
from cejudge_dspy.evaluate._runner import write_record
from cejudge_dspy.evaluate._worker import JudgeWorker, RunRecipe
from cejudge_dspy.runs import Record


async def judge_on_ray(
    items: Sequence[Item],
    recipe: RunRecipe,
    results_path: Path,
    *,
    options: RayOptions | None = None,
    progress: RayProgress | None = None,
    on_record: Callable[[Record, str], None] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> list[Record]:
    """Judge `items` on the current Ray cluster (see `ray_cluster`), appending each record to
    `results_path` as it arrives; returns the records written. Raises the first BackboneError or
    RunWriteError (after the groups in flight end), RayUnavailableError when no worker is left."""
    ray = _import_ray()
    options = options or RayOptions()
    progress = progress if progress is not None else RayProgress()
    if recipe.concurrency < 1:
        raise InputError(f"must be at least 1, got {recipe.concurrency}", field="--concurrency")
    queue: deque[list[Item]] = deque(groups_of(items))
    if not queue:
        return []
    n_actors = options.actors or max(int(ray.cluster_resources().get("CPU", 1) // options.cpus_per_actor), 1)
    n_actors = min(n_actors, len(queue))

    Actor = ray.remote(JudgeWorker).options(  # noqa: N806 - a class
        num_cpus=options.cpus_per_actor,
        max_restarts=options.max_restarts,
        max_task_retries=0,  # retried per item by the driver, never a whole group again
        max_concurrency=max(recipe.concurrency, 1) + 1,  # its groups and the readiness checks
        runtime_env={"env_vars": cluster_env()},
        scheduling_strategy="SPREAD",  # over the nodes: one model server per node serves its workers
    )
    actors = {f"w{k + 1}": Actor.remote(recipe) for k in range(n_actors)}
    for name in actors:
        progress.workers[name] = WorkerCounts()
    try:
        await _ready(actors, progress)
        if on_ready is not None:
            on_ready()
        return await _drive(actors, queue, recipe, results_path, options, progress, on_record)
    finally:
        for actor in actors.values():
            ray.kill(actor, no_restart=True)


async def _ready(actors: dict[str, Any], progress: RayProgress) -> None:
    """Wait for every worker to build its judge; a program or task mismatch is one line naming it."""
    from ray.exceptions import RayActorError

    for name, actor in actors.items():
        try:
            info = await actor.info.remote()
        except RayActorError as exc:
            raise CEJudgeError(f"worker {name} could not start: {_cause(exc)}") from None
        counts = progress.workers[name]
        counts.where, counts.node, counts.pid = info["where"], info["node"], info["pid"]


async def _drive(
    actors: dict[str, Any],
    queue: deque[list[Item]],
    recipe: RunRecipe,
    results_path: Path,
    options: RayOptions,
    progress: RayProgress,
    on_record: Callable[[Record, str], None] | None,
) -> list[Record]:
    """Keep every worker fed with up to `recipe.concurrency` groups until none is left; the records
    written. Raises the first fatal error, or RayUnavailableError when items are left and no worker."""
    dispatch = _Dispatch(queue, recipe, results_path, options.max_attempts, progress, on_record)
    # Slots interleaved across workers, so the first groups go to different workers, not all to one.
    feeders = [
        dispatch.feed(name, actor) for _ in range(recipe.concurrency) for name, actor in actors.items()
    ]
    await asyncio.gather(*feeders)
    return dispatch.outcome()


@dataclass
class _Dispatch:
    """What the feeders of a run share: the queue of groups, the records written (each once), every
    item's worker deaths, the first fatal error, and the groups in flight (`changed` when one ends)."""

    queue: deque[list[Item]]
    recipe: RunRecipe
    results_path: Path
    max_attempts: int
    progress: RayProgress
    on_record: Callable[[Record, str], None] | None
    written: dict[str, Record] = field(default_factory=dict)
    attempts: Counter[str] = field(default_factory=Counter)
    fatal: list[BaseException] = field(default_factory=list)
    in_flight: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    # Writing: the driver is the only writer, and writes an id once.

    def write(self, record: Record, worker: str) -> None:
        if record.id in self.written:  # a record the driver already has (never expected; never written twice)
            return
        write_record(self.results_path, record, self.recipe.secrets)
        self.written[record.id] = record
        if self.on_record is not None:
            self.on_record(record, worker)

    def unwritten(self, group: list[Item]) -> list[Item]:
        return [i for i in group if i.id not in self.written]

    # Retrying: an item goes back to the queue until its workers died `max_attempts` times.

    def requeue(self, group: list[Item], worker: str, exc: BaseException) -> None:
        retry = []
        for item in self.unwritten(group):
            self.attempts[item.id] += 1
            if self.attempts[item.id] < self.max_attempts:
                retry.append(item)
            else:
                self.write(self.gave_up(item, exc), worker)
        if retry:
            self.queue.appendleft(retry)
            self.progress.requeued += len(retry)

    def gave_up(self, item: Item, exc: BaseException) -> Record:
        """The error record of an item whose workers kept dying (the next run retries it)."""
        error = f"its Ray worker died {self.attempts[item.id]} times while judging it ({_first_line(exc)})"
        return Record(item.id, self.recipe.task, self.recipe.method, "error", item, None, error=error)

    # Feeding: one slot of one worker takes groups until the queue is empty, a fault is fatal or the
    # worker is gone for good.

    async def feed(self, name: str, actor: Any) -> None:
        while (group := await self.next_group()) is not None:
            if not await self.judge_group(name, actor, group):
                return

    async def next_group(self) -> list[Item] | None:
        """The next group to judge; None once nothing is queued or in flight, or after a fatal error.
        While the queue is empty but groups are in flight, wait: a dying worker may requeue some."""
        while not self.fatal:
            if self.queue:
                return self.queue.popleft()
            if self.in_flight == 0:
                return None
            self.changed.clear()
            await self.changed.wait()
        return None

    async def judge_group(self, name: str, actor: Any, group: list[Item]) -> bool:
        """Judge `group` on worker `name`, writing each record as it arrives; False when the worker
        died and did not come back."""
        from ray.exceptions import RayActorError, RayTaskError

        counts = self.progress.workers[name]
        pid = counts.pid  # the process this group goes to (a death ends all its groups at once)
        self.in_flight += 1
        try:
            async for ref in actor.judge.remote(group):
                record = await ref
                self.write(record, name)
                counts.done += 1
        except RayTaskError as exc:  # the judge raised: an unreachable backbone, a bug
            self.fatal.append(exc.cause if isinstance(exc.cause, BaseException) else exc)
            self.queue.appendleft(self.unwritten(group))
        except RayActorError as exc:  # the worker process or its node died
            return await self.worker_died(name, actor, pid, group, exc)
        except Exception as exc:  # a write failed (full disk): stop, the rest stays pending
            self.fatal.append(exc)
        finally:
            self.in_flight -= 1
            self.changed.set()
        return True

    async def worker_died(
        self, name: str, actor: Any, pid: int, group: list[Item], exc: BaseException
    ) -> bool:
        """Count the death (once per process), requeue the group's unwritten items, and wait for Ray to
        restart the worker (the group still counts as in flight); False when it does not come back."""
        counts = self.progress.workers[name]
        if pid not in counts.dead_pids:
            counts.dead_pids.add(pid)
            counts.lost += 1
        self.requeue(group, name, exc)
        info = await _restarted(actor)
        if info is None:
            counts.alive = False
            return False
        # Restarted: another process, maybe on another node.
        counts.where, counts.node, counts.pid = info["where"], info["node"], info["pid"]
        return True

    def outcome(self) -> list[Record]:
        """The records written, once every feeder has ended; raises what ended the run early."""
        if self.fatal:
            raise self.fatal[0]
        if self.queue:
            left = sum(len(g) for g in self.queue)
            raise RayUnavailableError(
                f"every Ray worker died; {left} items were not judged (what was judged is kept: rerun the "
                "same command, with or without --ray, to resume)"
            )
        return list(self.written.values())


async def _restarted(actor: Any, timeout: float = 120.0) -> dict[str, Any] | None:
    """The `info` of a worker that lost its process once Ray restarted it (up to max_restarts), or None
    when it does not come back."""
    from ray.exceptions import ActorUnavailableError, RayActorError

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return await asyncio.wait_for(_awaited(actor.info.remote()), timeout=deadline - time.monotonic())
        except ActorUnavailableError:  # restarting
            await asyncio.sleep(0.2)
        except RayActorError:  # dead for good: its restarts are used up
            return None
        except asyncio.TimeoutError:
            return None
    return None


async def _awaited(ref: Any) -> Any:
    return await ref
