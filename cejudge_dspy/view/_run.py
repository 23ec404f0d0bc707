"""One run directory as `cejudge view` reads it, and the run's header.

`load_view_run` summarizes the records afresh, so the page shows the summary of exactly the records it
lists, under the selective-judging threshold the run's summary.json recorded (`--abstain-below` given
to `cejudge evaluate`; `cejudge view --abstain-below` overrides it); `overview` and `decision_rule` are
the header above them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.files import read_json
from cejudge_dspy.metrics import summarize
from cejudge_dspy.runs import RESULTS, SUMMARY, Record, public_urls, read_run, read_timing
from cejudge_dspy.tasks import TaskSpec, load_task


@dataclass
class ViewRun:
    """One run directory as the viewer reads it: settings, latest record per item, task, summary."""

    name: str
    path: Path
    config: dict[str, Any]
    records: list[Record]
    spec: TaskSpec
    summary: dict[str, Any]
    last_written: str | None = None
    timing: dict[str, Any] | None = None  # from summary.json: started, finished, wall_seconds, sessions
    dimensions: list[str] = field(default_factory=list)
    abstained: frozenset[str] = frozenset()  # ids the summary left to a person (`--abstain-below`)


def load_view_run(
    path: Path,
    *,
    name: str | None = None,
    n_resamples: int = 1000,
    abstain_below: float | None = None,
    confidence: str | None = None,
) -> ViewRun:
    """Read a run directory and summarize it afresh (the summary of exactly the records shown), with
    `abstain_below` and `confidence`, or where None those summary.json recorded."""
    run = read_run(path)  # a torn last line is reported, and its item counted as missing
    # A run.json from before addresses were stored without credentials still shows none (runs.public_urls).
    config, records = public_urls(run.config), run.records
    task = config.get("task") or (records[0].task if records else None)
    if not task:
        raise CEJudgeError(f"{path}: neither run.json nor a record names the task")
    spec = load_task(task)
    records = sorted(records, key=lambda r: r.id)
    mtime = (path / RESULTS).stat().st_mtime
    recorded = _recorded_selective(path / SUMMARY)
    threshold = abstain_below if abstain_below is not None else recorded.get("abstain_below")
    summary = summarize(
        records,
        spec,
        n_resamples=n_resamples,
        missing=run.n_missing or None,
        abstain_below=threshold,
        confidence=confidence or recorded.get("confidence") or "auto",
    )
    return ViewRun(
        name=name or path.resolve().name,
        path=path,
        config=config,
        records=records,
        spec=spec,
        summary=summary,
        last_written=datetime.fromtimestamp(mtime, tz=timezone.utc).isoformat(timespec="seconds"),
        timing=read_timing(path / SUMMARY),
        dimensions=[d.name for d in spec.dimensions],
        abstained=frozenset((summary.get("selective") or {}).get("abstained") or ()),
    )


def _recorded_selective(path: Path) -> dict[str, Any]:
    """The threshold and confidence source an existing summary.json recorded (empty when none)."""
    try:
        selective = read_json(path, CEJudgeError).get("selective")
    except (CEJudgeError, AttributeError):
        return {}
    if not isinstance(selective, dict):
        return {}
    threshold = selective.get("abstain_below")
    source = selective.get("confidence")
    return {
        "abstain_below": threshold if isinstance(threshold, int | float) and 0 <= threshold <= 1 else None,
        # `margin` etc.; `auto` is never written, the chosen source is
        "confidence": source if source in ("margin", "agreement", "both") else None,
    }


def overview(run: ViewRun) -> dict[str, Any]:
    """The run's header: task, method, backbone, program, all settings, counts, time and usage."""
    s = run.summary
    usage = s.get("usage", {})
    return {
        "name": run.name,
        "path": str(run.path),
        "task": run.spec.name,
        "mode": run.spec.mode,
        "metric": run.spec.metric,
        "method": run.config.get("method") or ", ".join(s.get("methods", [])),
        "backbone": run.config.get("lm"),
        "program": run.config.get("program"),
        "decision": decision_rule(run),
        "settings": run.config,
        "last_written": run.last_written,
        "timing": run.timing,
        "item_seconds": round(sum(r.seconds for r in run.records), 3),
        "n_items": s["n_items"],
        "n_ok": s["n_ok"],
        "n_unparsed": s["n_unparsed"],
        "n_error": s["n_error"],
        "n_missing": s.get("n_missing", 0),
        "n_abstained": s.get("n_abstained"),
        "abstain_below": (s.get("selective") or {}).get("abstain_below"),
        "calls": usage.get("calls", 0),
        "cached": usage.get("cached", 0),
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0),
    }


def decision_rule(run: ViewRun) -> dict[str, Any]:
    """The run's decision rule (run.json; a run from before the rule was decided by the argmax), its tie
    band, and how many records each rule decided (the probability rule keeps the argmax where a record
    has no probabilities)."""
    rules = run.summary.get("decision_rules") or {}
    return {
        "rule": run.config.get("decision") or "argmax",
        "tie_band": run.config.get("tie_band") if run.spec.mode == "pairwise" else None,
        "decided_by": rules.get("decided_by"),
        "probabilities": rules.get("probabilities"),
    }
