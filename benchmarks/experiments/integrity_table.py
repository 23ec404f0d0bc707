"""Issue #11's closing table, measured: bad inputs (one clear line / tracebacks / accepted) and injected
faults (items lost / duplicated / silently mixed settings), with the simulated backbone.

    python -m benchmarks.experiments.integrity_table

Bad inputs are the corpus in tests/support/bad_inputs.py, run in-process. Faults run `cejudge evaluate` as a
subprocess and are checked by counting ids in results.jsonl against the data: SIGINT, SIGTERM and SIGKILL
at concurrency 1 and 8, a full disk (`ulimit -f`), a torn last line, two writers at once; then every
settings change on resume (a silent mix is a resume that was accepted with different settings).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["CEJUDGE_OPTIMIZED"] = tempfile.mkdtemp()  # the hand-written programs, as the tests use
os.environ["DSPY_CACHEDIR"] = tempfile.mkdtemp()

from tests.support.bad_inputs import CASES, good_data, run_case  # noqa: E402

CLI = [sys.executable, "-c", "import sys; from cejudge_dspy.cli._app import main; sys.exit(main())"]
N = 40


def argv(data: Path, out: Path, *extra: str, lm: str = "simulated:5") -> list[str]:
    base = [*CLI, "evaluate", "--task", "chat", "--data", str(data), "--out", str(out), "--lm", lm]
    return [*base, "--bootstrap", "0", "--no-cache", *extra]


def ids(out: Path) -> Counter[str]:
    path = out / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return Counter(json.loads(line)["id"] for line in lines if line.strip())


def wait_for_records(out: Path, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while not ids_safe(out) and time.monotonic() < deadline:
        time.sleep(0.05)


def ids_safe(out: Path) -> int:
    try:
        return len(ids(out))
    except (OSError, ValueError):
        return 0


def fault(name: str, root: Path, run, lm: str = "simulated:5") -> tuple[str, int, int, str]:  # type: ignore[no-untyped-def]
    """Inject a fault, resume with the same command, and count lost and duplicated items."""
    d = root / name.replace(" ", "_").replace("/", "-")
    d.mkdir()
    data, out = good_data(d, N), d / "run"
    note = run(data, out, lm)
    resume = subprocess.run(argv(data, out, lm=lm), capture_output=True, text=True)
    counts = ids(out)
    lost, dup = N - len(counts), sum(c - 1 for c in counts.values())
    return name, lost, dup, f"{note}; resume exit {resume.returncode}"


def kill(sig: int, concurrency: int):  # type: ignore[no-untyped-def]
    def run(data: Path, out: Path, lm: str) -> str:
        cmd = argv(data, out, "--concurrency", str(concurrency), lm=lm)
        proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        wait_for_records(out)
        proc.send_signal(sig)
        return f"exit {proc.wait(timeout=120)} after {ids_safe(out)} records"

    return run


def full_disk(data: Path, out: Path, lm: str) -> str:
    cmd = ["bash", "-c", 'ulimit -f 40; exec "$@"', "bash", *argv(data, out, lm=lm)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return f"exit {proc.returncode}, {ids_safe(out)} records kept"


def torn(data: Path, out: Path, lm: str) -> str:
    subprocess.run(argv(data, out, lm=lm), capture_output=True)
    text = (out / "results.jsonl").read_text()
    (out / "results.jsonl").write_text(text[: len(text) - 200])  # the last record cut mid-line
    return "last line cut by 200 bytes"


def two_writers(data: Path, out: Path, lm: str) -> str:
    first = subprocess.Popen(argv(data, out, lm=lm), stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    wait_for_records(out)
    second = subprocess.run(argv(data, out, lm=lm), capture_output=True, text=True)
    first.wait(timeout=300)
    return f"second writer exit {second.returncode}"


SETTINGS = [
    ["--seed", "7"],
    ["--shard", "1/2"],
    ["--limit", "5"],
    ["--temperature", "0.7"],
    ["--max-tokens", "99"],
    ["--method", "direct"],
    ["--orders", "single"],
    ["--translator", "none"],
    ["--lm", "simulated:1"],
    ["--language", "en"],
    ["--subset", "chat"],
    ["--field", "instruction=chosen"],
    ["--constrained"],
    ["--data", "OTHER"],
    ["--data", "EDITED"],
]


def silent_mixes(root: Path) -> list[tuple[str, str]]:
    d = root / "settings"
    d.mkdir()
    data, out = good_data(d, 8), d / "run"
    subprocess.run(argv(data, out), capture_output=True)
    rows = []
    for change in SETTINGS:
        change = list(change)
        if change[-1] == "OTHER":
            change[-1] = str(good_data(d, 9, "other.jsonl"))
        if change[-1] == "EDITED":  # the same path, other content
            shutil.copy(data, d / "keep.jsonl")
            data.write_text(data.read_text().replace("question 0", "question zero"))
            change = []
        proc = subprocess.run(argv(data, out, *change), capture_output=True, text=True)
        if not change:
            shutil.copy(d / "keep.jsonl", data)
        line = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        rows.append(
            (" ".join(change) or "--data (edited in place)", "refused" if proc.returncode == 2 else line)
        )
    return rows


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="integrity-"))
    kinds = Counter(run_case(case, root / f"case{i}")[0] for i, case in enumerate(CASES()))
    print(
        f"bad inputs tried {sum(kinds.values())} | one clear line {kinds['one line']} | "
        f"tracebacks {kinds['traceback']} | accepted {kinds['accepted']} | "
        f"wrote output {kinds['wrote output']}"
    )
    faults = [
        ("SIGINT c1", kill(signal.SIGINT, 1)),
        ("SIGINT c8", kill(signal.SIGINT, 8)),
        ("SIGTERM c1", kill(signal.SIGTERM, 1)),
        ("SIGTERM c8", kill(signal.SIGTERM, 8)),
        ("SIGKILL c1", kill(signal.SIGKILL, 1)),
        ("SIGKILL c8", kill(signal.SIGKILL, 8)),
        ("full disk (ulimit -f 40)", full_disk),
        ("torn last line", torn),
        ("two writers", two_writers, "simulated:30"),
    ]
    total_lost = total_dup = 0
    for name, run, *lm in faults:
        name, lost, dup, note = fault(name, root, run, *lm)
        total_lost, total_dup = total_lost + lost, total_dup + dup
        print(f"  fault {name:26} lost {lost} dup {dup}  ({note})")
    print(f"faults injected {len(faults)} | items lost {total_lost} | items duplicated {total_dup}")
    mixes = silent_mixes(root)
    for change, outcome in mixes:
        print(f"  resume with {change:40} {outcome[:80]}")
    print(f"settings changes tried {len(mixes)} | silent mixes {sum(o != 'refused' for _, o in mixes)}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
