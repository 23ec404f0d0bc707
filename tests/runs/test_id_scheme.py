"""A run named its items by row index before a local file's `id` column named them: such a run must not
resume under the new scheme (it would judge every item again beside its old record)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr
from pathlib import Path

from cejudge_dspy.cli import main
from cejudge_dspy.runs import read_records

ROW = {"prompt": "p", "chosen": "a", "rejected": "b", "language": "en"}


def _argv(data: Path, out: Path) -> list[str]:
    return ["evaluate", "--task", "chat", "--data", str(data), "--out", str(out), "--lm", "simulated:0",
            "--bootstrap", "0", "--no-cache"]  # fmt: skip


def test_a_run_from_before_the_id_column_does_not_resume_under_it(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({**ROW, "id": f"q{i}", "prompt": f"p{i}"}) + "\n" for i in range(3)))
    out = tmp_path / "run"
    assert main(_argv(data, out)) == 0
    assert sorted(r.id for r in read_records(out / "results.jsonl")) == ["q0", "q1", "q2"]
    run = json.loads((out / "run.json").read_text())
    assert run["id_scheme"] == "id column"
    assert main(_argv(data, out)) == 0  # the same scheme resumes (nothing left to judge)
    del run["id_scheme"]  # as a run.json written before the scheme was recorded
    (out / "run.json").write_text(json.dumps(run))
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(_argv(data, out)) != 0
    assert "id_scheme: 'row index' -> 'id column'" in err.getvalue()
    assert len(read_records(out / "results.jsonl")) == 3  # nothing judged again beside the old records
