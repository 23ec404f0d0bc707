"""`cejudge_dspy.optimize(...)`: tune a task's program on its labelled data and save it with its manifest, the
same call for a Python user and for `cejudge optimize` / `optimize.py` (which print its plan, its progress
and its scores).

The sequence: the save path checked before anything runs, the items read and split (train, dev), the
LM-call estimate (`on_plan` sees it and may cancel), the tuning on the judge backbone (`tuning.optimize`,
its phases told to `on_progress`), and the program saved only with a significant held-out gain (or
`save_anyway`). What it did comes back as an `Optimization`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.backbones import BackboneOptions, backbone_options, is_local
from cejudge_dspy.errors import known_keywords
from cejudge_dspy.tasks import TaskSpec

if TYPE_CHECKING:
    from cejudge_dspy.tuning._budget import Budget, CallEstimate
    from cejudge_dspy.tuning._report import OptimizeReport


@dataclass(frozen=True)
class OptimizePlan:
    """What is about to run: the task, the splits (and the items each dropped), the optimizer, its budget
    and its estimated LM calls, where the program goes and GEPA's log (checkpoint) directory."""

    spec: TaskSpec
    optimizer: str
    budget: Budget
    estimate: CallEstimate
    train: list[Any]
    dev: list[Any]
    dropped: dict[str, int]
    out: Path
    log_dir: Path | None


@dataclass
class Optimization:
    """A finished (or cancelled) `optimize` call: its plan, the tuning report (None when cancelled), the
    manifest of the program, and where it was saved (None: not saved, `why_not` says why)."""

    plan: OptimizePlan
    report: OptimizeReport | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    saved: Path | None = None  # the program file
    manifest_path: Path | None = None
    why_not: str | None = None

    @property
    def cancelled(self) -> bool:
        return self.report is None


@known_keywords
def optimize(
    task: str,
    *,
    data: str | Path | None = None,
    fields: dict[str, str] | None = None,
    subsets: Sequence[str] | None = None,
    backbone: BackboneOptions | str = "embedded",
    reflection: BackboneOptions | str | None = None,
    optimizer: str = "gepa",
    budget: str | int = "light",
    demos: int = 0,
    train: int = 20,
    dev: int = 20,
    program: str | Path = "base",
    threads: int = 1,
    out: str | Path | None = None,
    save_anyway: bool = False,
    on_plan: Callable[[OptimizePlan], bool] | None = None,
    on_progress: Callable[[str, int, int | None], None] | None = None,
) -> Optimization:
    """Tune `task`'s program (`program`: base, auto or a saved .json) against its human labels and save it.

    `backbone` is the judge's backbone (a `BackboneOptions` or a spec; its seed seeds the split and the
    optimizer); `reflection` the model that proposes instructions (None: the judge backbone; a spec: that
    model sampling at temperature 1, on the judge's server unless local). `train`/`dev` items are drawn
    from `data` (None: the task's dataset); `out` defaults to optimized/TASK.json. `on_plan(plan)` hears
    the plan before anything is tuned and cancels the run by returning False; `on_progress(phase, done,
    total)` hears each phase. The program is saved only with a significant held-out gain, or
    `save_anyway`."""
    # The tuning loop through the package face (a test stands in for it there).
    from cejudge_dspy import tuning
    from cejudge_dspy.backbones import make_lm, use_backbone
    from cejudge_dspy.data import load_items
    from cejudge_dspy.judges import check_save_path, default_path
    from cejudge_dspy.tasks import load_task
    from cejudge_dspy.tuning import estimate_calls, parse_budget, split_items

    lm = backbone_options(backbone)
    spec, parsed = load_task(task), parse_budget(budget)
    path = Path(out) if out is not None else default_path(spec)
    check_save_path(path)  # a bad name, a planted symlink or an unwritable folder: before any tuning
    fields = dict(fields or {})
    items = load_items(spec, data, fields=fields or None, subsets=list(subsets or []) or None, seed=lm.seed)
    trainset, devset, dropped = split_items(items, train, dev, lm.seed)
    estimate = estimate_calls(spec, trainset, devset, optimizer=optimizer, budget=parsed, demos=demos)
    log_dir = path.parent / f"{path.stem}.gepa" if optimizer == "gepa" else None
    plan = OptimizePlan(spec, optimizer, parsed, estimate, trainset, devset, dropped, path, log_dir)
    if on_plan is not None and not on_plan(plan):
        return Optimization(plan, why_not="cancelled")
    with use_backbone(lm.lm, **lm.kwargs()) as judge_lm:
        proposer = _reflection(reflection, lm)
        reflection_lm = judge_lm if proposer is None else make_lm(proposer.lm, **proposer.kwargs())
        report = tuning.optimize(
            spec,
            trainset,
            devset,
            optimizer=optimizer,
            budget=parsed,
            demos=demos,
            reflection_lm=reflection_lm,
            seed=lm.seed,
            program=program,
            lm=judge_lm,
            on_progress=on_progress,
            num_threads=threads,
            log_dir=log_dir,
        )
    result = Optimization(
        plan, report, _manifest(plan, report, judge_lm, reflection_lm, data, fields, subsets)
    )
    gain = report.held_out
    if not (gain and gain["significant"]) and not save_anyway:
        not_scored = "the tuned program was not re-scored on the dev split"
        result.why_not = not_scored if gain is None else "no held-out gain"
        return result
    from cejudge_dspy.judges import save_program

    result.manifest_path = save_program(report.program, path, result.manifest)
    result.saved = path
    return result


def _manifest(
    plan: OptimizePlan,
    report: OptimizeReport,
    judge_lm: Any,
    reflection_lm: Any,
    data: str | Path | None,
    fields: dict[str, str],
    subsets: Sequence[str] | None,
) -> dict[str, Any]:
    """The saved program's manifest: the report's fields, where its items came from and each split's ids."""
    source = str(data) if data else plan.spec.dataset.hub_id or None
    manifest = report.manifest(task_lm=judge_lm.model, reflection_lm=reflection_lm.model, data=source)
    manifest.update(
        fields=fields, subsets=list(subsets or []), dropped=plan.dropped, estimate=plan.estimate.__dict__
    )
    # The item ids of each split, so "measured on items not used for tuning" can be checked and redone.
    manifest["split_ids"] = {"train": [ex.id for ex in plan.train], "dev": [ex.id for ex in plan.dev]}
    return manifest


def reflection_backbone(lm: str, judge: BackboneOptions, api_base: str | None = None) -> BackboneOptions:
    """The backbone of a proposing model named `lm`: sampling (proposals should vary between iterations,
    GEPA's advice), at `api_base`, else on the judge's server unless it is a local model."""
    base = api_base or (None if is_local(lm) else judge.api_base)
    return BackboneOptions(lm=lm, api_base=base, seed=judge.seed, temperature=1.0, max_tokens=4096)


def _reflection(reflection: BackboneOptions | str | None, judge: BackboneOptions) -> BackboneOptions | None:
    """The proposing model's backbone; None: the judge's own LM (an embedded model is not loaded twice)."""
    if isinstance(reflection, BackboneOptions):
        return None if reflection.lm == judge.lm else reflection
    return None if not reflection or reflection == judge.lm else reflection_backbone(reflection, judge)


# On the tuning face as `optimize_task` (its `optimize` is the loop over given splits); the root face calls
# it `optimize`.
optimize_task = optimize
