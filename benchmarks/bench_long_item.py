"""What one judgment of a paragraph-length real pair costs: seconds, LM calls and tokens (issue #37).

    python -m benchmarks.bench_long_item                      # embedded; the pair nearest 2,000 characters
    python -m benchmarks.bench_long_item --chars 4000         # a longer pair
    python -m benchmarks.bench_long_item --id llmbar/natural/12 --record
    python -m benchmarks.bench_long_item --lm simulated:0     # the machinery only, in seconds

The pair comes from ../shared/data/pairwise_en_dev.jsonl (`--data`: real instructions and responses, gold
A or B):
of the pairs whose responses are each at least `--min-response` characters (a paragraph), the one whose
instruction and two responses together are nearest `--chars` characters (ties: the first in the file), or
the one `--id` names. It is judged as a user would: one fresh `cejudge evaluate` process on
a one-line file holding just that pair, task `chat`, the default method and options, with `--no-cache`,
so the model is loaded and every call is made. Printed: the process's wall seconds (model load included),
the item's own seconds (as its record has them), LM calls, prompt and output tokens, the verdict and the
gold label. `--record` appends them to docs/measurements/data/bench_long_item.json, which
docs/measurements/embedded-long-items.md shows.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.record import Table, add_record_argument, record
from cejudge_dspy.runs import read_run

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pairwise_en_dev.jsonl"


def length(row: dict[str, Any]) -> int:
    return len(row["prompt"]) + len(row["response_a"]) + len(row["response_b"])


def pick(rows: Sequence[dict[str, Any]], chars: int, item_id: str | None, least: int = 400) -> dict[str, Any]:
    """The row `item_id` names, else of the A/B-labelled rows whose responses both have `least` characters,
    the one whose texts are nearest `chars` characters."""
    if item_id is not None:
        for row in rows:
            if row["id"] == item_id:
                return row
        raise SystemExit(f"error: no item with id {item_id!r} in the data")
    labelled = [
        r
        for r in rows
        if str(r.get("label")).upper() in ("A", "B")
        and min(len(r["response_a"]), len(r["response_b"])) >= least
    ]
    if not labelled:
        raise SystemExit(f"error: no labelled pair in the data whose responses both have {least} characters")
    return min(labelled, key=lambda r: abs(length(r) - chars))


def judge(row: dict[str, Any], lm: str, work: Path) -> dict[str, Any]:
    """One fresh `cejudge evaluate` on the pair alone; what its record says, and the process's wall time."""
    data, out = work / "item.jsonl", work / "run"
    data.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "cejudge_dspy.cli", "evaluate", "--task", "chat", "--data", str(data)]
    cmd += ["--field", "id=id", "--lm", lm, "--no-cache", "--bootstrap", "0", "--out", str(out)]
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    started = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: judged, the item not ok (it is still reported)
        raise SystemExit(f"error: cejudge evaluate failed (exit {done.returncode})")
    (rec,) = read_run(out).records
    usage = rec.result.usage if rec.result is not None else None
    return {
        "wall": round(wall, 3),
        "seconds": round(rec.seconds, 3),
        "status": rec.status,
        "calls": usage.calls if usage else None,
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "verdict": rec.result.verdict if rec.result is not None else None,
    }


def table(row: dict[str, Any], lm: str, m: dict[str, Any]) -> Table:
    chars = f"{len(row['prompt'])} / {len(row['response_a'])} / {len(row['response_b'])}"
    verdict = f"{m['verdict'] or m['status']} (gold {row['label']})"
    return Table(
        [
            "item",
            "backbone",
            "characters (instruction / A / B)",
            "process s",
            "item s",
            "LM calls",
            "prompt tokens",
            "output tokens",
            "verdict",
        ],
        [
            [
                f"`{row['id']}`",
                f"`{lm}`",
                chars,
                m["wall"],
                m["seconds"],
                m["calls"],
                m["prompt_tokens"],
                m["completion_tokens"],
                verdict,
            ]
        ],
        ["", "", "", "{:.1f}", "{:.1f}", "", "{:,}", "{:,}", ""],
        "one fresh `cejudge evaluate` process on the pair alone, `--no-cache`; process s includes loading",
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lm", default="embedded", help="backbone, as for cejudge (default: embedded)")
    p.add_argument("--chars", type=int, default=2000, help="pick the pair nearest this many characters")
    p.add_argument("--data", type=Path, default=DATA, help="pairwise JSONL file (default: %(default)s)")
    p.add_argument("--min-response", type=int, default=400, help="least characters of each response")
    p.add_argument("--id", help="judge this item of the file instead")
    add_record_argument(p, "bench_long_item")
    args = p.parse_args(argv)
    if not args.data.exists():
        print(f"error: {args.data} is missing (the shared data folder beside the checkout)", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    row = pick(rows, args.chars, args.id, args.min_response)
    with tempfile.TemporaryDirectory(prefix="cejudge-long-item-") as tmp:
        measured = judge(row, args.lm, Path(tmp))
    result = table(row, args.lm, measured)
    print(f"{row['id']}: {length(row)} characters ({result.rows[0][2]})")
    m = measured
    print(f"process {m['wall']:.1f} s · item {m['seconds']:.1f} s · {m['calls']} LM calls", end=" · ")
    print(
        f"{m['prompt_tokens']} prompt tokens · {m['completion_tokens']} output tokens · {result.rows[0][-1]}"
    )
    record(args, "bench_long_item", [result], argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
