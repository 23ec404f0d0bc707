"""One worker of a distributed run (`cejudge evaluate --ray`): the run's program and backbone, built once.

A `JudgeWorker` lives in a Ray actor (_distributed.py wraps it; nothing here imports Ray). It is built from a
`RunRecipe`, the flags that decide the program and the backbone, and refuses to start unless the program
and the task declaration it resolves to on its own machine are the ones the driver recorded in run.json:
a node with another tuned program or an older package never judges into the run. It judges a group of
items concurrently with the runner's own per-item code (`_runner.judge_one`) and yields each record as it
finishes; it writes nothing (the driver is the only writer of results.jsonl).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy

from cejudge_dspy.backbones import BackboneOptions, make_lm, preferred_adapter
from cejudge_dspy.data import Item
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.evaluate._runner import judge_one
from cejudge_dspy.judges import memo_adapter, prompt_fingerprint, run_program, run_program_identity
from cejudge_dspy.runs import Record, secrets_of
from cejudge_dspy.tasks import load_task


class WorkerMismatchError(CEJudgeError):
    """A worker resolves the run's program or task to something other than what run.json records."""


@dataclass(frozen=True)
class RunRecipe:
    """What a worker needs to build the run's judge: task and method flags, the program identity the
    driver recorded, and the backbone with its settings (the run's `BackboneOptions`, its seed the run's).
    Picklable; it carries the API key to the workers, never into a record (`secrets`)."""

    task: str
    task_version: Any
    method: str
    program: str  # the --program flag: auto, base or a path
    program_label: str  # what it resolved to on the driver (run.json "program")
    backbone: BackboneOptions
    # The method options (JudgeOptions.program_kwargs: translator, orders, decision, ...), passed to the
    # program factory as they are, so a new option reaches the workers without a change here.
    options: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 1  # items in flight per worker
    prompts: str | None = None  # the driver's program's prompt fingerprint (`judges.prompt_fingerprint`)

    @property
    def secrets(self) -> list[str]:
        return secrets_of([self.backbone.api_key], [self.backbone.api_base])


def where() -> str:
    """`host:pid` of this process, for messages and the per-worker counts."""
    return f"{socket.gethostname()}:{os.getpid()}"


def node_id() -> str:
    """The Ray node this process runs on (8 hex digits), or "" outside Ray."""
    try:
        import ray
    except ImportError:
        return ""
    return ray.get_runtime_context().get_node_id()[:8] if ray.is_initialized() else ""


class JudgeWorker:
    """The run's judge in one process: `judge(items)` yields their records as they finish."""

    def __init__(self, recipe: RunRecipe) -> None:
        label = run_program_identity(recipe.task, recipe.method, recipe.program)
        if label != recipe.program_label:
            raise WorkerMismatchError(
                f"worker {where()} resolves --program {recipe.program} to {label}, but the run was "
                f"started with {recipe.program_label}; install the same program on every node"
            )
        version = load_task(recipe.task).version
        if version != recipe.task_version:
            raise WorkerMismatchError(
                f"worker {where()} has task '{recipe.task}' version {version!r}, the run has "
                f"{recipe.task_version!r}; install the same cejudge-dspy on every node"
            )
        self.recipe = recipe
        self.program = run_program(
            recipe.task,
            recipe.method,
            recipe.program,
            **recipe.options,
        )
        prompts = prompt_fingerprint(self.program)
        if recipe.prompts is not None and prompts != recipe.prompts:
            raise WorkerMismatchError(
                f"worker {where()} builds a program whose prompts differ from the driver's (fingerprint "
                f"{prompts}, the run has {recipe.prompts}); install the same cejudge-dspy on every node"
            )
        backbone = recipe.backbone
        self.lm = make_lm(backbone.lm, **backbone.kwargs())
        adapter = preferred_adapter(backbone.lm, backbone.adapter)  # --adapter
        # DSPy's per-module call history grows with every call and slows a long run: off in workers;
        # the adapter formats each signature's part of a prompt once (`judges.memo_adapter`), as in a
        # local run.
        self.context: dict[str, Any] = {
            "lm": self.lm,
            "max_history_size": 0,
            "disable_history": True,
            "adapter": memo_adapter(adapter),
        }
        self._gate: asyncio.Semaphore | None = None

    def info(self) -> dict[str, Any]:
        """Where this worker runs and what it judges with (the driver's readiness check)."""
        return {"where": where(), "pid": os.getpid(), "node": node_id(), "program": self.recipe.program_label}

    async def judge(self, items: Sequence[Item]) -> AsyncIterator[Record]:
        """Judge `items` (one group: they share an instruction, so its work is shared) with at most
        `recipe.concurrency` items in flight in this worker across all its groups, yielding records in
        the order they finish. A BackboneError ends the group (the driver stops the run)."""
        if self._gate is None:  # bound to the event loop of the actor that runs it
            self._gate = asyncio.Semaphore(self.recipe.concurrency)
        gate = self._gate
        recipe = self.recipe

        async def one(item: Item) -> Record:
            async with gate:
                with dspy.context(**self.context):
                    return await judge_one(item, self.program, task=recipe.task, method=recipe.method)

        tasks = [asyncio.ensure_future(one(item)) for item in items]
        try:
            for finished in asyncio.as_completed(tasks):
                yield await finished
        finally:
            for task in tasks:
                task.cancel()
