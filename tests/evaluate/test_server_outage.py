"""A run loses nothing when its model server dies mid-run and comes back (issue #38).

`cejudge evaluate` judges against gated_server.py's OpenAI-compatible fake on 127.0.0.1. The gate closes
once some records are written, so the run is held mid-way however fast items are; the server is then
stopped (the held requests end unanswered and later ones are refused), which ends the run with the items
it could not judge unwritten or recorded as errors. The same server is brought back on the same port
(the same --api-base, so the same run identity) and the same command resumes the run: every item ends
with exactly one ok record, and no record written before the outage is judged again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.bad_inputs import ROW
from tests.support.gated_server import MODEL, GatedServer

CLI = [sys.executable, "-c", "import sys; from cejudge_dspy.cli._app import main; sys.exit(main())"]
N = 16


def _data(d: Path) -> Path:
    path = d / "data.jsonl"
    rows = [{**ROW, "id": f"q{i}", "prompt": f"question {i}", "chosen": f"good {i}"} for i in range(N)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _argv(data: Path, out: Path, api_base: str) -> list[str]:
    return [*CLI, "evaluate", "--task", "chat", "--data", str(data), "--out", str(out), "--lm", MODEL,
            "--api-base", api_base, "--bootstrap", "0", "--no-cache", "--concurrency", "2"]  # fmt: skip


def _records(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def _wait(condition: Any, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_a_run_resumes_after_its_server_dies_and_comes_back(tmp_path: Path) -> None:
    data, out = _data(tmp_path), tmp_path / "run"
    first = GatedServer().start()
    port, api_base = first.port, first.api_base
    first.hold_when = lambda: sum(r["status"] == "ok" for r in _records(out)) >= 4
    proc = subprocess.Popen(
        _argv(data, out, api_base), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait(lambda: first.held > 0 or proc.poll() is not None, "a request held at the closed gate")
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        first.stop()  # the server dies with requests in flight
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3 and "cannot be reached" in err.strip().splitlines()[-1], err[-2000:]
    before = _records(out)
    ok_before = {r["id"]: r for r in before if r["status"] == "ok"}
    assert 4 <= len(ok_before) < N, err[-2000:]  # cut short, with what was judged kept

    with GatedServer(port) as again:  # the same server, back at the same address
        assert again.api_base == api_base
        done = subprocess.run(_argv(data, out, api_base), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    after = _records(out)
    ok = Counter(r["id"] for r in after if r["status"] == "ok")
    assert sorted(ok) == sorted(f"q{i}" for i in range(N)) and set(ok.values()) == {1}
    assert after[: len(before)] == before  # nothing written before the outage was rewritten
    assert again.answered > 0 and all(ok_before[i] in after for i in ok_before)
