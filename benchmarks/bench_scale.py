"""Cost at scale: CPU per engine call at 1,000 and 5,000 items, peak memory, concurrency 16 vs 64, and
resuming a finished 5,000-record run, on the latency-simulating backbone (issue 14).

Each cell runs in a fresh Python process (so peak memory is that run's), judging pairwise items with
`PairwiseJudge("chat", judgment="pairwise")` (the paper's judgment in both orders, LLM translation, as
the issue measured it) through `runner.judge_items`, items per
instruction drawn from the real data's distribution (synthetic.py). CPU is the process's user + system
time around the run (`resource.getrusage`, DSPy's worker threads included), divided by the engine calls
the run made; the 1,000-item run goes before and after the 5,000-item one and the two are averaged, and
the big run's CPU per call is printed per 1,000 items as they finish (flat cost: a flat series).
Wall-clock figures depend on what else the machine runs: the load average is printed with each. One run
prints every figure and the checks against the issue's goals:

    python -m benchmarks.bench_scale            # ~2-4 min on 2 shared cores
    python -m benchmarks.bench_scale --quick    # 200 / 1,000 items, a smoke run
    python -m benchmarks.bench_scale --record   # append the tables to docs/measurements/data/
    python -m benchmarks.bench_scale --resume-cli 4000 --repeat 5   # only the CLI resume (issue 49)

`--resume-cli N` times what a user waits for when rerunning a finished run: `cejudge evaluate` with the
CLI's defaults (the graded judge, 1,000 bootstrap resamples) on a finished N-record run it wrote itself,
`--repeat` times, each a fresh process (wall and CPU of the child, imports included), and checks that
summary.json stays byte-identical; the modules' bytecode is cached as an install has it
(`--no-bytecode-cache`: as the environment says). The full benchmark runs it at 4,000 records after the
cells.

`--record` appends the cells, the goals and the per-block series, dated, with the host and versions, to
docs/measurements/data/bench_scale.json, which docs/measurements/bench-scale.md shows (record.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.record import Table, add_record_argument, record

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def cell(n: int, concurrency: int, ms: float, out: Path) -> dict[str, Any]:
    """One run in this process: judge `n` items at `concurrency` on `simulated:ms`, into `out`."""
    import dspy

    from benchmarks.synthetic import pairwise_items
    from cejudge_dspy.backbones import simulated_backbone
    from cejudge_dspy.evaluate import judge_items
    from cejudge_dspy.judges.cejudge import PairwiseJudge
    from cejudge_dspy.runs import RESULTS, prepare_run_dir

    items = pairwise_items(n)
    lm, engine = simulated_backbone(base_latency=ms / 1000, per_prompt_token=0.0, per_output_token=0.0)
    program = PairwiseJudge("chat", judgment="pairwise")
    prepare_run_dir(out, {"task": "chat", "method": "cejudge", "lm": f"simulated:{ms:g}", "orders": "both"})
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    block = 1000 if n >= 2000 else max(1, n // 5)
    marks: list[tuple[int, float]] = []  # (engine calls, CPU) after every `block` records

    done = [0]

    def mark(_record: Any) -> None:
        done[0] += 1
        if done[0] % block == 0:
            marks.append((engine.calls, _cpu()))

    cpu0, wall0 = _cpu(), time.perf_counter()
    with dspy.context(lm=lm):
        records = asyncio.run(
            judge_items(
                items,
                program,
                out / RESULTS,
                task="chat",
                method="cejudge",
                concurrency=concurrency,
                on_record=mark,
            )
        )
    cpu, wall = _cpu() - cpu0, time.perf_counter() - wall0
    blocks, prev = [], (0, cpu0)
    for calls, at in marks:
        blocks.append((at - prev[1]) / max(calls - prev[0], 1) * 1000)
        prev = (calls, at)
    assert all(r.status == "ok" for r in records) and len(records) == n
    seconds = sorted(r.seconds for r in records)
    tenth = max(1, n // 10)
    return {
        "n": n,
        "concurrency": concurrency,
        "ms": ms,
        "calls": engine.calls,
        "cpu_s": cpu,
        "cpu_ms_per_call": cpu / engine.calls * 1000,
        "wall_s": wall,
        "items_per_s": n / wall,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_before_run_mb": base_rss,
        # Item latency early and late in the run (by finishing order): flat cost keeps them equal.
        "latency_first_tenth_s": sum(r.seconds for r in records[:tenth]) / tenth,
        "latency_last_tenth_s": sum(r.seconds for r in records[-tenth:]) / tenth,
        "latency_median_s": seconds[n // 2],
        "cpu_ms_per_call_by_block": blocks,
        "block": block,
        "load": _load(),
    }


def resume(out: Path) -> dict[str, Any]:
    """What `cejudge evaluate` does on a rerun of a finished run: reopen it, find nothing left to judge,
    re-summarise (1,000 bootstrap resamples) and rewrite summary.json. The items are read from a JSONL
    file, as `--data` would read them; Python's and DSPy's imports are timed apart."""
    t0, c0 = time.perf_counter(), _cpu()
    from cejudge_dspy.data import Item
    from cejudge_dspy.evaluate import judge_items, pending_items
    from cejudge_dspy.metrics import summarize
    from cejudge_dspy.runs import RESULTS, SUMMARY, prepare_run_dir, read_records
    from cejudge_dspy.tasks import load_task

    t1, c1 = time.perf_counter(), _cpu()
    spec = load_task("chat")
    # The items as `evaluate --data` would read them: a JSONL file the first run wrote.
    lines = (out / "items.jsonl").read_text(encoding="utf-8").splitlines()
    items = [Item(**json.loads(line)) for line in lines]
    config = json.loads((out / "run.json").read_text())
    records = prepare_run_dir(out, config)
    todo = pending_items(items, records)
    asyncio.run(judge_items(todo, None, out / RESULTS, task="chat", method="cejudge"))  # type: ignore[arg-type]
    t2 = time.perf_counter()
    summary = summarize(read_records(out / RESULTS), spec, n_resamples=1000, seed=42)
    (out / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    t3, c3 = time.perf_counter(), _cpu()
    return {
        "records": len(records),
        "left": len(todo),
        "imports_s": t1 - t0,
        "reopen_s": t2 - t1,
        "summarise_s": t3 - t2,
        "resume_wall_s": t3 - t1,
        "resume_cpu_s": c3 - c1,
        "imports_cpu_s": c1 - c0,
        "accuracy_ci": [summary["overall"]["ci_low"], summary["overall"]["ci_high"]],
        "load": _load(),
    }


CLI = [sys.executable, "-m", "cejudge_dspy.cli"]


def resume_cli(n: int, repeat: int, tmp: Path, bytecode: bool = True) -> dict[str, Any]:
    """Write a finished `n`-record run with `cejudge evaluate` (simulated:0, concurrency 64), then time
    `repeat` reruns of the command with the CLI's defaults, each a fresh process that finds nothing left
    to judge, re-summarises and rewrites summary.json; fails if summary.json changes by one byte.

    With `bytecode` (the default) the processes read the modules' compiled bytecode, as an installed
    package has it (pip compiles it) and a checkout caches it: they write it to a cache under `tmp` even
    where PYTHONDONTWRITEBYTECODE is set, which would otherwise compile every module of the package
    from source in every rerun (0.3-0.5 s on 2 shared cores). Without it, the environment decides."""
    from benchmarks.synthetic import pairwise_items

    data, out = tmp / f"resume-{n}.jsonl", tmp / f"resume-{n}"
    rows = []
    for item in pairwise_items(n):  # as the chat task's files hold them: chosen is the label's side
        a, b = item.response_a, item.response_b
        chosen, rejected = (a, b) if item.label == "A" else (b, a)
        rows.append({"id": item.id, "prompt": item.instruction, "chosen": chosen, "rejected": rejected,
                     "language": item.language})  # fmt: skip
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    command = [
        *CLI,
        "evaluate",
        "--task",
        "chat",
        "--data",
        str(data),
        "--out",
        str(out),
        "--lm",
        "simulated:0",
    ]
    env = {**os.environ, "COLUMNS": "120"}
    if bytecode:  # compiled once by the first run, in a cache of this benchmark's, as an install has it
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    first = subprocess.run([*command, "--concurrency", "64"], capture_output=True, text=True, env=env)
    if first.returncode:
        raise SystemExit(f"the first run failed:\n{first.stderr[-3000:]}")
    summary = (out / "summary.json").read_bytes()
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        rerun = subprocess.run(command, capture_output=True, text=True, env=env)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if rerun.returncode or f"{n} already in" not in rerun.stderr:
            raise SystemExit(f"the rerun failed or judged again:\n{rerun.stderr[-3000:]}")
        if (out / "summary.json").read_bytes() != summary:
            raise SystemExit("the rerun changed summary.json")
    cached = bytecode or not os.environ.get("PYTHONDONTWRITEBYTECODE")
    return {"records": n, "walls": walls, "cpus": cpus, "wall_s": sorted(walls)[repeat // 2],
            "cpu_s": sorted(cpus)[repeat // 2], "load": _load(),
            "bytecode": "cached" if cached else "compiled in each run"}  # fmt: skip


def describe_resume_cli(r: dict[str, Any]) -> str:
    return (
        f"CLI resume of a finished {r['records']}-record run (cejudge evaluate, defaults; median of "
        f"{len(r['walls'])}): {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU; each: "
        + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in zip(r["walls"], r["cpus"], strict=True))
        + f" s wall/CPU; bytecode {r['bytecode']}; load {r['load']}"
    )


def spawn(*args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_scale", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=HERE.parent,
    )
    if proc.returncode:
        raise SystemExit(f"cell {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def verdict(ok: bool) -> str:
    return "MET" if ok else "NOT MET"


CELLS = ["items", "conc", "backbone", "calls", "CPU s", "CPU ms/call", "wall s", "items/s", "peak MB",
         "latency 1st / last 10% s", "load (1/5/15 min)"]  # fmt: skip


def cells_table(runs: dict[tuple[int, int, int, int], dict[str, Any]]) -> Table:
    """One row per cell, in the order they ran."""
    rows = [
        [
            n,
            conc,
            f"simulated:{ms}",
            r["calls"],
            r["cpu_s"],
            r["cpu_ms_per_call"],
            r["wall_s"],
            r["items_per_s"],
            r["peak_rss_mb"],
            [r["latency_first_tenth_s"], r["latency_last_tenth_s"]],
            r["load"],
        ]  # fmt: skip
        for (n, conc, ms, _), r in runs.items()
    ]
    formats = ["", "", "", "", "{:.1f}", "{:.3f}", "{:.1f}", "{:.1f}", "{:.0f}", "{:.3f} / {:.3f}", ""]
    return Table(
        CELLS, rows, formats, "each cell a fresh process; pairwise items, both orders, LLM translation"
    )


def series_table(big: dict[str, Any]) -> Table:
    """The big run's CPU per call, block by block as its items finished (flat cost: a flat series)."""
    block = big["block"]
    rows = [[f"{k * block + 1}-{(k + 1) * block}", x] for k, x in enumerate(big["cpu_ms_per_call_by_block"])]
    return Table(["items finished", "CPU ms per call"], rows, ["", "{:.3f}"], "the big run, block by block")


def goals_table(goals: list[tuple[str, str, bool]]) -> Table:
    return Table(["goal (issue 14)", "measured", "verdict"], [[g, m, verdict(ok)] for g, m, ok in goals])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--quick", action="store_true", help="200 / 1,000 / 256 items instead of 1,000 / 5,000 / 1,024"
    )
    p.add_argument("--cell", nargs=3, metavar=("N", "CONCURRENCY", "MS"), help=argparse.SUPPRESS)
    p.add_argument("--resume", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument(
        "--resume-cli", type=int, metavar="N", help="only time the CLI's resume of a finished N-record run"
    )
    p.add_argument("--repeat", type=int, default=3, help="CLI resumes to time (default 3; the median counts)")
    p.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="CLI resumes: leave bytecode to the environment (PYTHONDONTWRITEBYTECODE: compiled in each run)",
    )
    add_record_argument(p, "bench_scale")
    args = p.parse_args(argv)
    if args.cell:
        out = Path(args.out)
        result = cell(int(args.cell[0]), int(args.cell[1]), float(args.cell[2]), out)
        from dataclasses import asdict

        from benchmarks.synthetic import pairwise_items

        rows = (json.dumps(asdict(item), ensure_ascii=False) for item in pairwise_items(int(args.cell[0])))
        (out / "items.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(json.dumps(result))
        return 0
    if args.resume:
        print(json.dumps(resume(Path(args.resume))))
        return 0
    if args.resume_cli:
        with tempfile.TemporaryDirectory(prefix="cejudge-scale-") as tmp:
            r = resume_cli(args.resume_cli, args.repeat, Path(tmp), not args.no_bytecode_cache)
        print(describe_resume_cli(r))
        print(f"goal (issue 49): <= 3 s wall  {verdict(r['wall_s'] <= 3)}")
        return 0

    import dspy

    small, big, thr = (200, 1000, 256) if args.quick else (1000, 5000, 1024)
    print(
        f"python {platform.python_version()}, dspy {dspy.__version__}, {os.cpu_count()} CPUs, "
        f"load {_load()}; pairwise, PairwiseJudge(judgment='pairwise'), both orders, LLM translation, "
        "items per instruction ~1.37"
    )
    with tempfile.TemporaryDirectory(prefix="cejudge-scale-") as tmp:
        runs = {}
        print(
            f"\n{'items':>5} {'conc':>4} {'backbone':>12} {'calls':>6} {'CPU s':>6} {'CPU ms/call':>11} "
            f"{'wall s':>7} {'items/s':>7} {'peak MB':>7} {'lat 1st/last 10% s':>18}  load (1/5/15 min)"
        )
        # The small run goes before and after the big one, so a load that drifts over the big run's
        # minute shifts both sides of the CPU-per-call comparison alike.
        cells = ((small, 64, 5, 1), (big, 64, 5, 1), (small, 64, 5, 2), (thr, 16, 50, 1), (thr, 64, 50, 1))
        for n, conc, ms, rep in cells:
            out = Path(tmp) / f"run-{n}-{conc}-{ms}-{rep}"
            r = runs[n, conc, ms, rep] = spawn("--cell", str(n), str(conc), str(ms), "--out", str(out))
            print(
                f"{n:>5} {conc:>4} {'simulated:' + str(ms):>12} {r['calls']:>6} {r['cpu_s']:>6.1f} "
                f"{r['cpu_ms_per_call']:>11.3f} {r['wall_s']:>7.1f} {r['items_per_s']:>7.1f} "
                f"{r['peak_rss_mb']:>7.0f} {r['latency_first_tenth_s']:>8.3f} / "
                f"{r['latency_last_tenth_s']:<7.3f}"
                f"  {r['load']}",
                flush=True,
            )
        res = spawn("--resume", str(Path(tmp) / f"run-{big}-64-5-1"))
        cli = resume_cli(4000, args.repeat, Path(tmp), not args.no_bytecode_cache)
    a1, b, a2 = runs[small, 64, 5, 1], runs[big, 64, 5, 1], runs[small, 64, 5, 2]
    t16, t64 = runs[thr, 16, 50, 1], runs[thr, 64, 50, 1]
    a_ms = (a1["cpu_ms_per_call"] + a2["cpu_ms_per_call"]) / 2
    flat = b["cpu_ms_per_call"] / a_ms
    series = " ".join(f"{x:.3f}" for x in b["cpu_ms_per_call_by_block"])
    print(f"\nCPU ms per call in the {big}-item run, by {b['block']} items as they finished: {series}")
    speedup = t64["items_per_s"] / t16["items_per_s"]
    print(
        f"resume of the finished {res['records']}-record run ({res['left']} left): reopen "
        f"{res['reopen_s']:.2f} s + re-summarise {res['summarise_s']:.2f} s = "
        f"{res['resume_wall_s']:.2f} s wall, "
        f"{res['resume_cpu_s']:.2f} s CPU (imports before it: {res['imports_s']:.2f} s); load {res['load']}"
    )
    print(describe_resume_cli(cli))
    goals = [
        (f"CPU per call, {big} vs {small} items (run before and after it), within 10%",
         f"{b['cpu_ms_per_call']:.3f} / {a_ms:.3f} ms = {flat:.2f}", abs(flat - 1) <= 0.10),
        (f"peak memory at {big} items <= 400 MB", f"{b['peak_rss_mb']:.0f} MB", b["peak_rss_mb"] <= 400),
        (f"{big} items, simulated:5, concurrency 64, <= 60 s wall",
         f"{b['wall_s']:.1f} s (load {b['load']})", b["wall_s"] <= 60),
        (f"simulated:50, {thr} items: concurrency 64 vs 16 >= 1.5x",
         f"{t64['items_per_s']:.1f} vs {t16['items_per_s']:.1f} items/s = {speedup:.2f}x", speedup >= 1.5),
        (f"resume + re-summarise {res['records']} records <= 3 s",
         f"{res['resume_wall_s']:.2f} s (reopen {res['reopen_s']:.2f} + summarise {res['summarise_s']:.2f})",
         res["resume_wall_s"] <= 3),
        (f"(issue 49) cejudge evaluate resuming a finished {cli['records']}-record run, defaults, <= 3 s",
         f"{cli['wall_s']:.2f} s wall, {cli['cpu_s']:.2f} s CPU (median of {len(cli['walls'])})",
         cli["wall_s"] <= 3),
    ]  # fmt: skip
    print("\nGoals (issue 14):")
    for goal, measured, ok in goals:
        print(f"  {goal}: {measured}  {verdict(ok)}")
    record(args, "bench_scale", [cells_table(runs), goals_table(goals), series_table(b)], argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
