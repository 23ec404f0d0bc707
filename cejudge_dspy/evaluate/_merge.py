"""`cejudge merge`: the shards of one run joined into one run directory, or a clear refusal.

Shards merge only when they are shards of one run: the same identity in everything but `shard` (task,
program, backbone, data fingerprint, ...), the same N, distinct K, and disjoint items. All N are required
unless `partial`, and so is every record of each shard's items (run.json's `items`): a shard that was
interrupted, or ends in a torn line, is refused by name unless `partial`. The summary of a partial merge
says which shards it lacks and how many items of the shards it has (`partial`, `n_missing`). A shard
still being written (its lock is held) is refused. The output is built in a temporary sibling directory
and renamed into place, so a failed merge leaves no half-written output.
"""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.metrics import panel_summary, summarize
from cejudge_dspy.runs import (
    IDENTITY_KEYS,
    RESULTS,
    RUN,
    SUMMARY,
    Record,
    RunRecords,
    identity_diff,
    item_ids,
    lock,
    read_run,
    remove_tree,
    strict_json,
    write_json_atomic,
)
from cejudge_dspy.tasks import load_task

# `data` is a path (its bytes are compared); `items` lists each shard's own items.
_NOT_COMPARED = {"shard", "data", "merged_from", "partial", "items"}


# What `read_runs` calls the directories it is given, in its one-line refusals.
_NAMED = {
    "shard": ("a shard directory is named twice; name each shard once", "the shards"),
    "member": ("a run directory is named twice; name each member's run once", "the runs"),
}


def read_runs(paths: list[Path], kind: str) -> list[RunRecords]:
    """The run directories a merge joins, each read under its lock (a run still being written is
    refused), or one line for a directory named twice, one that is not a directory, or one without
    run.json. `kind`: "shard" or "member", the words of those lines."""
    twice, which = _NAMED[kind]
    if len({p.resolve() for p in paths}) < len(paths):
        raise CEJudgeError(twice)
    with ExitStack() as stack:
        for path in paths:
            if not path.is_dir():
                raise CEJudgeError(f"{path} is not a directory; pass the --out directories of {which}")
            stack.enter_context(lock(path, "cejudge merge"))
        runs = [read_run(p) for p in paths]
    for run in runs:
        if not run.config:
            raise CEJudgeError(
                f"{run.path} has no {RUN}; pass directories written by `cejudge evaluate --out`"
            )
    return runs


def _shard(path: Path, config: dict[str, Any]) -> tuple[int, int]:
    value = str(config.get("shard") or "")
    k, _, n = value.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise CEJudgeError(
            f"{path} is not a shard run (its run.json has shard {config.get('shard')!r}); "
            "merge joins the directories of `cejudge evaluate --shard K/N`"
        )
    return int(k), int(n)


def _check_same_run(paths: list[Path], configs: list[dict[str, Any]]) -> None:
    keys = tuple(k for k in dict.fromkeys([*IDENTITY_KEYS, *configs[0]]) if k not in _NOT_COMPARED)
    for path, config in zip(paths[1:], configs[1:], strict=True):
        union = tuple(k for k in dict.fromkeys([*keys, *config]) if k not in _NOT_COMPARED)
        if diff := identity_diff(configs[0], config, union):
            raise CEJudgeError(f"{path} is not a shard of the same run as {paths[0]} ({diff})")


def merge_runs(
    paths: list[Path], out: Path, *, partial: bool = False, n_resamples: int = 1000, seed: int = 42
) -> dict[str, Any]:
    """Join shard runs into `out` (which must not hold a run); returns the summary written there."""
    if not paths:
        raise CEJudgeError("merge needs at least one shard run directory")
    runs = read_runs(paths, "shard")
    _check_same_run(paths, [run.config for run in runs])
    shards = [_shard(run.path, run.config) for run in runs]
    n, missing = _shard_set(paths, shards, partial)
    incomplete = _check_complete(runs, shards, partial)
    merged: dict[str, Record] = {}
    for run in runs:
        for r in run.records:
            if r.id in merged:
                raise CEJudgeError(
                    f"item {r.id} appears in more than one shard ({run.path}); shards must not overlap"
                )
            merged[r.id] = r
    config = {**runs[0].config, "shard": None, "merged_from": [str(p) for p in paths]}
    config.pop("items", None)
    if all(run.expected is not None for run in runs):  # the merged run knows its items as its shards did
        config["items"] = item_ids([i for run in runs for i in run.expected or []])
    if missing or incomplete:
        config["partial"] = {"shards": sorted(k for k, _ in shards), "of": n, "missing": missing}
        if incomplete:
            config["partial"].update(incomplete=incomplete, missing_items=sum(incomplete.values()))
    n_missing = sum(run.n_missing for run in runs)
    summary = summarize(
        list(merged.values()),
        load_task(config["task"]),
        n_resamples=n_resamples,
        seed=seed,
        missing=n_missing or None,
    )
    summary["run"] = config
    if config.get("panel"):  # a panel's shards: the members, the panel rules and their agreement, merged
        summary["panel"] = panel_summary(
            list(merged.values()), load_task(config["task"]), n_resamples=n_resamples, seed=seed
        )
    if "partial" in config:
        summary["partial"] = config["partial"]
    _write_new_run(out, config, list(merged.values()), summary)
    return summary


def _shard_set(paths: list[Path], shards: list[tuple[int, int]], partial: bool) -> tuple[int, list[int]]:
    """N, and the shards of N that no path holds; shards of different N, or one K twice, are refused, and
    missing shards unless `partial`."""
    total = {n for _, n in shards}
    if len(total) > 1:
        shown = ", ".join(f"{p} is {k}/{n}" for p, (k, n) in zip(paths, shards, strict=True))
        raise CEJudgeError(f"shards split the data differently ({shown}); merge shards of one --shard K/N")
    n = total.pop()
    seen: dict[int, Path] = {}
    for path, (k, _) in zip(paths, shards, strict=True):
        if k in seen:
            raise CEJudgeError(f"{seen[k]} and {path} are both shard {k}/{n}; pass each shard once")
        seen[k] = path
    missing = [k for k in range(1, n + 1) if k not in seen]
    if missing and not partial:
        raise CEJudgeError(
            f"shards {', '.join(f'{k}/{n}' for k in missing)} are missing; pass all {n}, "
            "or --partial for an explicitly incomplete merge"
        )
    return n, missing


def _check_complete(runs: list[RunRecords], shards: list[tuple[int, int]], partial: bool) -> dict[str, int]:
    """{"K/N": items missing} for each shard that lacks records of items its run.json lists (an
    interrupted shard) or ends in a torn line; refused, naming each, unless `partial`."""
    incomplete: dict[str, int] = {}
    said: list[tuple[str, str, Path]] = []  # (what is wrong, K/N, the shard's directory)
    for run, (k, n) in zip(runs, shards, strict=True):
        if run.expected is None and not run.torn:
            print(
                f"warning: {run.path / RUN} does not list its items (an older cejudge wrote it), so whether "
                f"shard {k}/{n} is complete is not checked",
                file=sys.stderr,
            )
        if not run.n_missing:
            continue
        incomplete[f"{k}/{n}"] = run.n_missing
        held = (
            f"{len(run.records)} of its {len(run.expected)}" if run.expected is not None else len(run.records)
        )
        torn = ", its last line torn" if run.torn else ""
        said.append((f"shard {k}/{n} in {run.path} holds {held} items{torn}", f"{k}/{n}", run.path))
    if said and not partial:
        how = (
            f"rerun `cejudge evaluate --shard {said[0][1]} --out {said[0][2]}` with the shard's other options"
            if len(said) == 1
            else "rerun each one's `cejudge evaluate --shard K/N`"
        )
        raise CEJudgeError(
            f"{'; '.join(what for what, _, _ in said)}: {how} (the same command resumes it), or pass "
            "--partial for an explicitly incomplete merge"
        )
    return incomplete


def _write_new_run(out: Path, config: dict[str, Any], records: list[Record], summary: dict[str, Any]) -> None:
    """Write the merged run into a temporary sibling and rename it to `out` in one step."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CEJudgeError(f"{out} exists and is not empty; merge into a new directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.merging-{os.getpid()}"
    remove_tree(tmp)
    try:
        tmp.mkdir()
        # backslashreplace: a lone surrogate is written as its JSON escape, as runs' own writer does
        with (tmp / RESULTS).open("w", encoding="utf-8", errors="backslashreplace") as fh:
            for r in records:
                fh.write(strict_json(r.to_dict()) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        write_json_atomic(tmp / RUN, config)
        write_json_atomic(tmp / SUMMARY, summary)
        if out.exists():
            out.rmdir()
        os.rename(tmp, out)
    except OSError as exc:
        raise CEJudgeError(
            f"cannot write the merged run to {out} ({exc.strerror or exc}); nothing was kept"
        ) from None
    finally:
        remove_tree(tmp)
