"""Where a judging run's CPU goes, from a py-spy profile: the share of samples per part of the call path.

py-spy is not a dependency of the package; install it next to it (`pip install py-spy`) and profile the
`shipped` variant of bench_call_cost.py, then read the raw profile:

    py-spy record -r 250 -f raw -o /tmp/run.prof -- \\
        python -m benchmarks.experiments.bench_call_cost --items 1000 --child shipped "$(mktemp -d)"
    python -m benchmarks.experiments.profile_share /tmp/run.prof

A sample counts for the first part below whose pattern one of its frames matches (in the order listed);
the rest goes to the innermost frame's owner: DSPy, cejudge_dspy, or the event loop and threads. Samples
of an idle pool thread (waiting for work) and of the start-up (imports, building the items) are left out.
py-spy samples wall time per thread, so a part that waits for the GIL reads a little high.
"""

from __future__ import annotations

import re
import sys
from collections import Counter

PARTS = [
    ("simulated server: answering (a real server's work)", r"cejudge_dspy/backbones/simulated"),
    ("cejudge: record to JSON, redaction, write", r"record_row|RecordWriter|append_records|Record\.to_dict"),
    ("DSPy: LM request preparation (worker thread)", r"^prepare \(dspy/clients/execution\.py"),
    ("DSPy: cost lookup (worker thread)", r"_price_result|_price_legacy"),
    ("DSPy: adapter format (user message)", r"Adapter\.format \("),
    ("DSPy: adapter parse, pydantic validation", r"_call_postprocess"),
    ("DSPy: LM call on the loop (engine choice, request, result)", r"aexecute|BaseLM\.acall"),
    ("DSPy: Predict before and after the call", r"_forward_preprocess|_forward_postprocess"),
]
DSPY = "DSPy: the rest (Module and Predict calls, settings, signature fields, adapter glue)"
OURS = "cejudge: stages, usage, shared work, judges, runner, formatting memo"
LOOP = "event loop, thread hand-offs, other"


def shares(lines: list[str]) -> tuple[int, Counter[str]]:
    total, parts = 0, Counter[str]()
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        frames = stack.split(";")
        if not any("_run_once" in f or "_worker (concurrent" in f for f in frames):
            continue  # start-up: imports, building items
        if frames[-1].startswith("_worker (concurrent/futures/thread.py"):
            continue  # an idle pool thread
        n = int(count)
        total += n
        part = next((name for name, pat in PARTS if any(re.search(pat, f) for f in frames)), None)
        for f in reversed(frames):
            if part is not None:
                break
            if "(dspy/" in f:
                part = DSPY
            elif "(cejudge_dspy/" in f:
                part = OURS
        parts[part or LOOP] += n
    return total, parts


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        total, parts = shares(fh.readlines())
    print(f"{total} samples")
    for name, n in parts.most_common():
        print(f"{100 * n / total:5.1f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
