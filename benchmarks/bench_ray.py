"""`cejudge evaluate --ray` against a local run, on a local two-node Ray cluster (issue #17).

Starts a head and a worker node as separate processes on 127.0.0.1 (1 CPU each, no dashboard, no usage
statistics; both stopped at the end), then judges the same synthetic pairwise items (synthetic.py) with
the simulated backbone:

  local C     `judge_items` in this process, C items in flight (what `--concurrency C` does)
  ray K x C   K actors over the two nodes, C items in flight per actor (`--ray --ray-actors K`)

and prints items/s, the actors' start-up (once per run: Ray workers importing DSPy and building the judge)
and Ray's overhead per item: the judging time of 1 actor x C minus local C, per item, once with the
given latency and once with `simulated:0`, where nothing but the machinery costs time.

    python -m benchmarks.bench_ray                      # 48 items, simulated:200, C = 4, K = 1, 2, 4
    python -m benchmarks.bench_ray --items 24 --actors 1,2
    python -m benchmarks.bench_ray --record             # append the tables to docs/measurements/data/

`--record` appends both tables, dated, with the host and versions, to docs/measurements/data/bench_ray.json,
which docs/measurements/ray-scale-out.md shows (record.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

# Before Ray is imported: no usage statistics, 127.0.0.1 stays this node's address, token auth as the
# nodes use it, and no model-metadata download attempt.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "token")
# Token auth needs a token: the two local nodes (started with this environment) and the driver share a
# throwaway one, unless one is set (without it `ray start` refuses: "no authentication token was found").
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(16))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy  # noqa: E402

from benchmarks.record import Cell, Table, add_record_argument, record  # noqa: E402
from benchmarks.synthetic import pairwise_items  # noqa: E402
from cejudge_dspy.backbones import BackboneOptions, use_backbone  # noqa: E402
from cejudge_dspy.data import Item  # noqa: E402
from cejudge_dspy.evaluate import (  # noqa: E402
    RayOptions,
    RayProgress,
    RunRecipe,  # noqa: E402
    judge_items,  # noqa: E402
    judge_on_ray,
)
from cejudge_dspy.judges import run_program  # noqa: E402
from cejudge_dspy.tasks import load_task  # noqa: E402

NODE = Path(__file__).resolve().parents[1] / "tests" / "support" / "ray_node.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(log: Path, *args: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, str(NODE), "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    proc = subprocess.Popen(
        [*cmd, "--disable-usage-stats", *args],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while b"block forever" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"Ray node did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.1)
    return proc


def stop_node(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()  # `ray start --block` stops its own processes on SIGTERM
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def local_run(items: list[Item], lm: str, concurrency: int, out: Path) -> float:
    """Seconds to judge `items` in this process."""
    out.unlink(missing_ok=True)
    program = run_program("chat", "cejudge", "base")
    with use_backbone(lm, cache=False), dspy.context(max_history_size=0):
        start = time.perf_counter()
        asyncio.run(judge_items(items, program, out, task="chat", method="cejudge", concurrency=concurrency))
        return time.perf_counter() - start


def ray_run(items: list[Item], lm: str, actors: int, concurrency: int, out: Path) -> tuple[float, float, str]:
    """(start-up seconds, judging seconds, where the records came from) on the connected cluster."""
    out.unlink(missing_ok=True)
    out.touch()
    recipe = RunRecipe(
        task="chat",
        task_version=load_task("chat").version,
        method="cejudge",
        program="base",
        program_label="base",
        backbone=BackboneOptions(lm=lm, cache=False),
        concurrency=concurrency,
    )
    progress = RayProgress()
    marks: dict[str, float] = {}
    start = time.perf_counter()
    options = RayOptions(actors=actors, cpus_per_actor=0.5)  # 2 nodes x 1 CPU: room for 4 actors
    asyncio.run(
        judge_on_ray(
            items,
            recipe,
            out,
            options=options,
            progress=progress,
            on_ready=lambda: marks.setdefault("ready", time.perf_counter()),
        )
    )
    end = time.perf_counter()
    return marks["ready"] - start, end - marks["ready"], progress.describe()


RUNS = ["run", "in flight", "start s", "judge s", "items/s", "vs local", "workers"]
COSTS = ["backbone", "items in flight", "Ray's cost per item (ms)", "local ms/item", "1 actor ms/item"]


def tables(runs: list[list[Cell]], costs: list[list[Cell]], head: str) -> list[Table]:
    """The runs (one row per `show`) and Ray's cost per item, as the page renders them."""
    return [
        Table(RUNS, runs, ["", "", "{:.2f}", "{:.2f}", "{:.2f}", "{:.2f}x", ""], head),
        Table(
            COSTS,
            costs,
            ["", "", "{:+.1f}", "{:.1f}", "{:.1f}"],
            "Ray's cost per item: 1 actor x C minus local C",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=48)
    parser.add_argument("--lm", default="simulated:200")
    parser.add_argument("--concurrency", type=int, default=4, help="items in flight per actor / locally")
    parser.add_argument("--actors", default="1,2,4")
    add_record_argument(parser, "bench_ray")
    args = parser.parse_args(argv)
    actor_counts = [int(x) for x in args.actors.split(",")]
    items = pairwise_items(args.items)
    n, c = len(items), args.concurrency

    import ray

    temp = Path(tempfile.mkdtemp(prefix="cejudge-bench-ray-"))
    port = free_port()
    nodes = [start_node(temp / "head.log", "--head", "--port", str(port), "--include-dashboard=false",
                        "--temp-dir", str(temp / "r"))]  # fmt: skip
    try:
        nodes.append(start_node(temp / "worker.log", "--address", f"127.0.0.1:{port}"))
        ray.init(address=f"127.0.0.1:{port}", log_to_driver=False, configure_logging=False)
        alive = [x for x in ray.nodes() if x["Alive"]]
        setup = (
            f"{n} pairwise items (both orders), --lm {args.lm}, {len(alive)} Ray nodes on 127.0.0.1 "
            f"({', '.join(str(int(x['Resources'].get('CPU', 0))) for x in alive)} CPU), Ray {ray.__version__}"
        )
        print(
            f"# {setup}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
            f"Python {platform.python_version()}"
        )
        head = f"{'run':<14} {'in flight':>9} {'start s':>8} {'judge s':>8} {'items/s':>8} {'vs local':>8}"
        print(f"{head}  workers")
        local_run(items[:8], "simulated:0", c, temp / "warmup.jsonl")  # imports and first calls, untimed
        rows: dict[str, float] = {}
        table_rows: list[list[Cell]] = []
        cost_rows: list[list[Cell]] = []

        def show(
            name: str, in_flight: int, startup: float, judge: float, base: float | None, note: str = ""
        ) -> None:
            speed = f"{base / judge:>7.2f}x" if base else f"{'':>8}"
            table_rows.append([name, in_flight, round(startup, 3), round(judge, 3), round(n / judge, 3),
                               round(base / judge, 3) if base else None, note])  # fmt: skip
            print(
                f"{name:<14} {in_flight:>9} {startup:>8.2f} {judge:>8.2f} {n / judge:>8.2f} {speed}  {note}"
            )

        local = local_run(items, args.lm, c, temp / "local.jsonl")
        rows["local"] = local
        show(f"local {c}", c, 0.0, local, None)
        for k in actor_counts:
            startup, judge, where = ray_run(items, args.lm, k, c, temp / f"ray{k}.jsonl")
            rows[f"ray{k}"] = judge
            show(f"ray {k} x {c}", k * c, startup, judge, local, where)
        for k in actor_counts:
            if k > 1:
                wide = local_run(items, args.lm, k * c, temp / f"local{k}.jsonl")
                show(f"local {k * c}", k * c, 0.0, wide, local)
        if "ray1" in rows:
            per_item = (rows["ray1"] - local) / n * 1000
            print(f"\nRay's cost per item at {args.lm}: {per_item:+.1f} ms (1 actor x {c} minus local {c})")
            cost_rows.append([args.lm, c, round(per_item, 2), round(local / n * 1000, 2),
                              round(rows["ray1"] / n * 1000, 2)])  # fmt: skip
            # One item at a time with a free backbone: what is left is the machinery, item by item.
            free_local = local_run(items, "simulated:0", 1, temp / "local0.jsonl")
            _, free_ray, _ = ray_run(items, "simulated:0", 1, 1, temp / "ray0.jsonl")
            print(
                f"Ray's cost per item at simulated:0, one item at a time: "
                f"{(free_ray - free_local) / n * 1000:+.1f} ms (local {free_local / n * 1000:.1f} ms/item, "
                f"1 actor {free_ray / n * 1000:.1f} ms/item)"
            )
            cost_rows.append(["simulated:0", 1, round((free_ray - free_local) / n * 1000, 2),
                              round(free_local / n * 1000, 2), round(free_ray / n * 1000, 2)])  # fmt: skip
        record(args, "bench_ray", tables(table_rows, cost_rows, setup), argv)
    finally:
        ray.shutdown()
        for proc in reversed(nodes):
            stop_node(proc)
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
