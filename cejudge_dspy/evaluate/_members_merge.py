"""`cejudge merge --members`: runs of several judges on the same items joined into one panel run.

A panel judged live (`cejudge evaluate --lm A --lm B --method M ...`) asks every member on every item. Runs
already written by single judges hold the same outcomes, so a panel of them needs no LM call: each item's
members are the runs' records of it, and the panel's verdict is `judges.panel.combine` of them, exactly as
a live panel decides. The result is an ordinary panel run directory (run.json with `method` "panel" and
its `panel` members, results.jsonl with each record's `members`, summary.json with the `panel` figures), so
`cejudge view`, `compare` and `calibrate` read it like any other.

The runs must judge the same texts under the same ids: the same task and data (its sha256), the same field
mapping and id scheme. Their selections may differ (`--limit`, `--first`, a run stopped early): the panel
holds the items every run judged, and its summary says how many each run had beyond them. A run that is
itself a panel, or a shard, is refused by name. A record's `seconds` is the sum of its members' (what the
panel cost, judged one after the other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.judges.panel import MemberOutcome, combine
from cejudge_dspy.judges.verdicts import DEFAULT_TIE_BAND
from cejudge_dspy.metrics import panel_summary, summarize
from cejudge_dspy.runs import IDENTITY_KEYS, Record, RunRecords, identity_diff, item_ids
from cejudge_dspy.tasks import load_task

# What must be equal for two runs to have judged the same texts under the same ids.
SAME_ITEMS = ("task", "task_version", "data_sha256", "id_scheme", "fields", "constants")
# A member's identity in the panel run's run.json: everything that made its records but the data.
_MEMBER_SKIP = {"task", "task_version", "data", "data_sha256", "id_scheme", "fields", "constants", "items"}


def merge_members(
    paths: list[Path],
    out: Path,
    *,
    tie_band: float | None = None,
    n_resamples: int = 1000,
    seed: int = 42,
) -> dict[str, Any]:
    """Join single-judge runs of the same items into the panel run `out` (which must not hold a run);
    returns the summary written there. `tie_band`: the panel's mean rule's band (default: the first
    run's own, else the default band)."""
    # One reader and one writer for every merged run.
    from cejudge_dspy.evaluate._merge import _write_new_run, read_runs

    band_option = dict(JudgeOptions.options())["tie_band"]  # the one bound a tie band has everywhere
    if tie_band is not None and (problem := band_option.problem(tie_band)) is not None:
        raise InputError(problem, option="tie_band")
    if len(paths) < 2:
        raise CEJudgeError("merge --members needs the run directories of at least two judges")
    runs = read_runs(paths, "member")
    _check_members(runs)
    names = _member_names(runs)
    by_run = [{r.id: r for r in run.records} for run in runs]
    common = [r.id for r in runs[0].records if all(r.id in held for held in by_run[1:])]
    if not common:
        raise CEJudgeError(
            "the runs share no judged item; a panel needs the same items judged by every member"
        )
    first = runs[0].config
    spec = load_task(first["task"])
    band = tie_band if tie_band is not None else first.get("tie_band", DEFAULT_TIE_BAND)
    band = DEFAULT_TIE_BAND if band is None else float(band)
    records = [_panel_record(i, [held[i] for held in by_run], names, spec.mode, band) for i in common]
    config = {k: first.get(k) for k in SAME_ITEMS} | {
        "data": first.get("data"),
        "method": "panel",
        "tie_band": band,
        "panel": [
            {"name": name, "run": str(run.path)}
            | {k: v for k, v in run.config.items() if k in IDENTITY_KEYS and k not in _MEMBER_SKIP}
            for name, run in zip(names, runs, strict=True)
        ],
        "merged_from": [str(p) for p in paths],
        "members_beyond_panel": {
            name: len(run.records) - len(common) for name, run in zip(names, runs, strict=True)
        },
        "items": item_ids(common),
    }
    summary = summarize(records, spec, n_resamples=n_resamples, seed=seed)
    summary["run"] = config
    summary["panel"] = panel_summary(records, spec, n_resamples=n_resamples, seed=seed)
    _write_new_run(out, config, records, summary)
    return summary


def _check_members(runs: list[RunRecords]) -> None:
    for run in runs:
        if run.config.get("method") == "panel" or run.config.get("panel"):
            raise CEJudgeError(f"{run.path} is a panel run; pass the runs of single judges")
        if run.config.get("shard"):
            raise CEJudgeError(f"{run.path} is one shard of a run; `cejudge merge` its shards first")
    first = runs[0]
    for run in runs[1:]:
        if diff := identity_diff(first.config, run.config, SAME_ITEMS):
            raise CEJudgeError(f"{run.path} did not judge the same items as {first.path} ({diff})")


def _member_names(runs: list[RunRecords]) -> list[str]:
    """`method@lm` per run; the run directory's name where two runs share one."""
    names = [f"{run.config.get('method')}@{run.config.get('lm')}" for run in runs]
    if len(set(names)) < len(names):
        names = [run.path.name for run in runs]
    if len(set(names)) < len(names):
        names = [str(run.path) for run in runs]
    return names


def _panel_record(
    item_id: str, records: list[Record], names: list[str], mode: str, tie_band: float
) -> Record:
    outcomes = [
        MemberOutcome(name, r.status, r.result, error=r.error, seconds=r.seconds, features=r.features)
        for name, r in zip(names, records, strict=True)
    ]
    result = combine(mode, outcomes, tie_band)
    first = records[0]
    return Record(
        id=item_id,
        task=first.task,
        method="panel",
        status=result.status,
        item=first.item,
        result=result,
        seconds=round(sum(r.seconds for r in records), 3),
        members=[o.to_dict() for o in outcomes],
    )
