"""`rank(...)`: judge several systems' answers to the same prompts into a run directory, and rank them.

The run directory is `evaluate`'s (runs/): run.json holds the identity, results.jsonl one record per
judged comparison (pairwise task) or answer (pointwise task), written as each finishes; `ranking.json`
holds the ranking. A rerun with the same settings judges only what is missing (failed records again); a
changed setting (the schedule, the baseline, the budget, the systems, the judge...) is refused with the
difference named, as `evaluate` refuses it. The judge is one program for the whole run, so its shared work
(CE-Judge: each prompt's and each answer's own stages) is computed once and reused by every comparison.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import dspy

from cejudge_dspy.data import Item
from cejudge_dspy.errors import InputError
from cejudge_dspy.evaluate import judge_items
from cejudge_dspy.judges import prompt_fingerprint, run_program, run_sync
from cejudge_dspy.rank._schedule import (
    SCHEDULES,
    Comparison,
    Schedule,
    against_baseline,
    all_pairs,
    first_round,
    next_round,
)
from cejudge_dspy.rank._summary import fit_intervals, outcomes, pairwise_ranking, pointwise_ranking
from cejudge_dspy.rank._systems import SystemAnswers
from cejudge_dspy.runs import (
    RESULTS,
    Record,
    lock,
    pending_items,
    prepare_run_dir,
    read_records,
    write_json_atomic,
)
from cejudge_dspy.tasks import TaskSpec, load_task

RANKING = "ranking.json"
# Resamples behind the adaptive schedule's intervals each round (the final ranking uses `bootstrap`).
_ROUND_RESAMPLES = 100


@dataclass(frozen=True)
class RankOptions:
    """How a ranking run goes. `schedule`: which comparisons (pairwise tasks; see _schedule.py);
    `baseline`: the system every other meets (schedule "baseline"); `budget`: the adaptive schedule's
    comparisons in all (default: half of all pairs on all prompts, at least one round); `round_size`: its
    pairs per round (default: the number of systems); `bootstrap`: resamples for the intervals (0: none);
    `seed`: who is shown first, the adaptive prompt order and the bootstrap; `concurrency`: items in
    flight."""

    schedule: Schedule = "all-pairs"
    baseline: str | None = None
    budget: int | None = None
    round_size: int | None = None
    bootstrap: int = 1000
    seed: int = 42
    concurrency: int = 1

    def check(self, spec: TaskSpec) -> None:
        """One line for an option that is out of range or does not apply."""
        if self.schedule not in SCHEDULES:
            raise InputError(
                f"must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}", field="--schedule"
            )
        if spec.mode == "pointwise" and (self.schedule != "all-pairs" or self.baseline or self.budget):
            raise InputError(
                f"task '{spec.name}' is pointwise: every answer is scored once, so there is no schedule; "
                "drop --schedule, --baseline and --budget",
                field="--schedule",
            )
        if (self.schedule == "baseline") != (self.baseline is not None):
            raise InputError("--schedule baseline and --baseline NAME go together", field="--baseline")
        if self.schedule != "adaptive" and (self.budget is not None or self.round_size is not None):
            raise InputError("only the adaptive schedule has a budget and rounds", field="--budget")
        for name, value, low in (
            ("--budget", self.budget, 1),
            ("--round-size", self.round_size, 1),
            ("--bootstrap", self.bootstrap, 0),
            ("--concurrency", self.concurrency, 1),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise InputError(f"must be a whole number of at least {low}, got {value!r}", field=name)

    def identity(self) -> dict[str, Any]:
        """What changes the records (bootstrap and concurrency do not)."""
        return {k: v for k, v in asdict(self).items() if k not in ("bootstrap", "concurrency")}


def answers_digest(answers: SystemAnswers) -> str:
    """16 hex digits over every answer's texts and language: the data a ranking judged, however read."""
    digest = hashlib.sha256()
    for (prompt, system), a in sorted(answers.answers.items()):
        row = [prompt, system, a.item.instruction, a.item.response, a.item.language, a.human]
        digest.update(json.dumps(row, ensure_ascii=False).encode() + b"\n")
    return digest.hexdigest()[:16]


def rank(
    task: str | TaskSpec,
    answers: SystemAnswers,
    out: str | Path,
    *,
    program: dspy.Module | None = None,
    method: str = "cejudge",
    options: RankOptions | None = None,
    identity: dict[str, Any] | None = None,
    force_new: bool = False,
    on_record: Callable[[Record], None] | None = None,
) -> dict[str, Any]:
    """Judge what `answers` still lacks in `out` with the current backbone (`dspy.context(lm=...)`) and
    return the ranking, also written to `out/ranking.json`. `program`: the judge (default: `method`'s
    program for the task, as `cejudge evaluate` builds it); `identity`: more of run.json (the CLI's run
    identity); `force_new` moves an existing run aside first."""
    return run_sync(
        arank(
            task,
            answers,
            out,
            program=program,
            method=method,
            options=options,
            identity=identity,
            force_new=force_new,
            on_record=on_record,
        )
    )


async def arank(
    task: str | TaskSpec,
    answers: SystemAnswers,
    out: str | Path,
    *,
    program: dspy.Module | None = None,
    method: str = "cejudge",
    options: RankOptions | None = None,
    identity: dict[str, Any] | None = None,
    force_new: bool = False,
    on_record: Callable[[Record], None] | None = None,
) -> dict[str, Any]:
    """`rank`, awaitable."""
    spec = load_task(task)
    options = options or RankOptions()
    options.check(spec)
    if options.baseline is not None and options.baseline not in answers.systems:
        against_baseline(answers, options.baseline, options.seed)  # raises the one line
    program = program if program is not None else run_program(spec, method)
    out = Path(out)
    lm = dspy.settings.lm
    config: dict[str, Any] = {
        "task": spec.name,
        "task_version": spec.version,
        "method": method,
        "program": type(program).__name__,
        "prompts": prompt_fingerprint(program),
        "lm": getattr(lm, "model", None),
        "data_sha256": answers_digest(answers),
        **(identity or {}),
    }
    config["rank"] = options.identity() | {
        "systems": list(answers.systems),
        "n_prompts": len(answers.prompts),
    }
    run = _Run(spec, program, out, config, options, on_record)
    with lock(out, "cejudge rank"):
        run.records = prepare_run_dir(out, config, force_new=force_new)
        if spec.mode == "pointwise":
            summary = await _pointwise(run, answers)
        else:
            summary = await _pairwise(run, answers)
        summary["run"] = config
        write_json_atomic(out / RANKING, summary)
    return summary


@dataclass
class _Run:
    spec: TaskSpec
    program: Any
    out: Path
    config: dict[str, Any]
    options: RankOptions
    on_record: Callable[[Record], None] | None
    records: list[Record] | None = None

    async def judge(self, items: list[Item]) -> None:
        """Judge the items not yet recorded (failed ones again) and reread the records."""
        todo = pending_items(items, self.records or [])
        if todo:
            await judge_items(
                todo,
                self.program,
                self.out / RESULTS,
                task=self.spec.name,
                method=str(self.config["method"]),
                concurrency=self.options.concurrency,
                on_record=self.on_record,
            )
            self.records = read_records(self.out / RESULTS)


def pointwise_items(answers: SystemAnswers) -> dict[str, tuple[Item, str, str]]:
    """Each answer as the pointwise item a judge scores: id `<prompt> · <system>`."""
    out = {}
    for (prompt, system), a in answers.answers.items():
        item_id = f"{prompt} · {system}"
        out[item_id] = (replace(a.item, id=item_id, group=prompt, subset=system), prompt, system)
    return out


def comparison_item(answers: SystemAnswers, c: Comparison) -> Item:
    """A comparison as the pairwise item a judge decides: `first` as response A."""
    a, b = answers.answers[(c.prompt, c.first)], answers.answers[(c.prompt, c.second)]
    return Item(
        id=c.id,
        mode="pairwise",
        instruction=a.item.instruction,
        response_a=a.item.response,
        response_b=b.item.response,
        language=a.item.language,
        response_language=a.item.response_language,
        subset=f"{c.first} vs {c.second}",
        group=c.prompt,
    )


async def _pointwise(run: _Run, answers: SystemAnswers) -> dict[str, Any]:
    items = pointwise_items(answers)
    await run.judge([item for item, _, _ in items.values()])
    return pointwise_ranking(
        answers,
        run.records or [],
        {k: (p, s) for k, (_, p, s) in items.items()},
        n_resamples=run.options.bootstrap,
        seed=run.options.seed,
    )


def schedule(answers: SystemAnswers, options: RankOptions) -> list[Comparison]:
    """The fixed schedules' comparisons (all pairs, or against the baseline)."""
    if options.schedule == "baseline":
        assert options.baseline is not None
        return against_baseline(answers, options.baseline, options.seed)
    return all_pairs(answers, options.seed)


async def _pairwise(run: _Run, answers: SystemAnswers) -> dict[str, Any]:
    options = run.options
    if options.schedule != "adaptive":
        comparisons = schedule(answers, options)
        await run.judge([comparison_item(answers, c) for c in comparisons])
    else:
        comparisons = await _adaptive(run, answers)
    summary = pairwise_ranking(
        answers, run.records or [], comparisons, n_resamples=options.bootstrap, seed=options.seed
    )
    if options.schedule == "adaptive":
        summary["comparisons"]["budget"] = adaptive_budget(answers, options)
    return summary


def adaptive_budget(answers: SystemAnswers, options: RankOptions) -> int:
    """The adaptive schedule's comparisons in all: as given, else half of all pairs on all prompts (and at
    least the first round)."""
    if options.budget is not None:
        return options.budget
    return max(len(first_round(answers, options.seed)), (len(all_pairs(answers, options.seed)) + 1) // 2)


async def _adaptive(run: _Run, answers: SystemAnswers) -> list[Comparison]:
    """Judge round after round (see _schedule.py), replaying the rounds already recorded."""
    options = run.options
    budget = adaptive_budget(answers, options)
    size = options.round_size or len(answers.systems)
    done: list[Comparison] = []
    batch = first_round(answers, options.seed)[:budget]
    while batch:
        await run.judge([comparison_item(answers, c) for c in batch])
        done += batch
        found = outcomes(run.records or [], done)
        _, intervals = fit_intervals(answers.systems, found, n_resamples=_ROUND_RESAMPLES, seed=options.seed)
        if intervals is None:
            break
        batch = next_round(answers, done, intervals, size=size, budget=budget, seed=options.seed)
    return done
