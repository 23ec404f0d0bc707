"""`cejudge evaluate --ray [ADDRESS]`: the flags, and the judging step of `evaluate` on a Ray cluster.

Everything before judging (checks, run identity, lock, resume) and after it (summary, table, exit code)
is `evaluate`'s own; only the items' judging moves to Ray workers (`evaluate.judge_on_ray`). `--ray` is
not part of the run's identity: its records equal a local run's up to timing, so a run started with Ray
resumes without it and the other way round.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._common import Bound, backbone_options, check_bounds
from cejudge_dspy.cli._program_args import judge_options
from cejudge_dspy.errors import InputError

if TYPE_CHECKING:  # the parser is built without DSPy (data imports it)
    from cejudge_dspy.data import Item

RAY_ACTORS = Bound("--ray-actors", "actors", 1)
# Above 0: a Ray actor that reserves no CPU is scheduled without limit (Bound's low end is inclusive).
RAY_CPUS = Bound("--ray-cpus-per-actor", "CPUs each actor reserves", 0.001)


def add_ray_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("ray (optional extra: pip install 'cejudge-dspy[ray]')")
    g.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="judge on Ray actors: a cluster's ADDRESS (host:port, or auto for RAY_ADDRESS), "
        "or none to start Ray on this machine (127.0.0.1 only); --concurrency is then per actor",
    )
    g.add_argument("--ray-actors", type=int, default=None, help="actors (default: the cluster's CPUs)")
    g.add_argument(
        "--ray-cpus-per-actor", type=float, default=1.0, help="CPUs each actor reserves (default 1)"
    )


def check_ray_args(args: argparse.Namespace) -> None:
    if getattr(args, "ray", None) is None:
        if getattr(args, "ray_actors", None) is not None:
            raise InputError("needs --ray", field="--ray-actors")
        return
    check_bounds(args, (RAY_ACTORS, RAY_CPUS))
    from cejudge_dspy.evaluate import check_ray_address

    check_ray_address(args.ray)  # before the run directory opens: an unreachable cluster leaves nothing


def judge_with_ray(
    args: argparse.Namespace, spec: Any, todo: list[Item], out: Path, config: dict[str, Any], err: Any
) -> None:
    """Judge `todo` on Ray into `out`/results.jsonl, under evaluate's progress display (on `err`) with a
    line of per-worker counts."""
    import asyncio  # here, not at the top: the parser is built without it

    from cejudge_dspy.cli._progress import RunDisplay, live
    from cejudge_dspy.evaluate import RayOptions, RayProgress, RunRecipe, judge_on_ray, ray_cluster
    from cejudge_dspy.runs import RESULTS

    recipe = RunRecipe(
        task=spec.name,
        task_version=spec.version,
        method=args.method,
        program=args.program,
        program_label=config["program"],
        prompts=config.get("prompts"),
        lm=args.lm,
        lm_options=backbone_options(args),
        options=judge_options(args).program_kwargs(),
        concurrency=args.concurrency,
    )
    options = RayOptions(address=args.ray, actors=args.ray_actors, cpus_per_actor=args.ray_cpus_per_actor)
    progress = RayProgress()
    display = RunDisplay(f"{spec.name} · {args.method} · ray", len(todo))
    display.show_workers(progress.workers)
    # A local instance just big enough for the actors asked for (default: this machine's CPUs).
    local_cpus = math.ceil(args.ray_actors * args.ray_cpus_per_actor) if args.ray_actors else None

    def ready() -> None:  # the clock, the rate and the ETA count judging, not Ray's start
        display.counts.started = time.monotonic()
        display.update("")

    def tick(record: Any, worker: str) -> None:
        display.on_record(record.id, record.status)

    with live(err, display, transient=False):
        display.update(f"connecting to Ray ({args.ray})" if args.ray != "local" else "starting Ray")
        with ray_cluster(args.ray, num_cpus=local_cpus):
            display.update("starting the workers (each builds the judge and checks the program)")
            asyncio.run(
                judge_on_ray(
                    todo,
                    recipe,
                    out / RESULTS,
                    options=options,
                    progress=progress,
                    on_record=tick,
                    on_ready=ready,
                )
            )
    err.print(f"ray: {progress.describe()}", soft_wrap=True)
