"""Two runs side by side (`cejudge compare`); sharded runs are joined by `evaluate.merge_runs`.

Pure functions over run directories; the CLI renders what they return. Two runs are comparable when they
are measured the same way (mode and metric) on the same items: any setting may differ (an ablation, the
backbone, a paper declaration such as `literary-paper` against `literary`), and `differences` names
each one. An item id that holds another item (inputs or gold label) in the other run is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.judges.verdicts import Decision
from cejudge_dspy.metrics._correlations import CORRELATIONS, kendall_tau
from cejudge_dspy.metrics._measures import accuracy, share, strict_accuracy
from cejudge_dspy.metrics._result import MetricResult
from cejudge_dspy.metrics._scoring import language_key, prediction, strict_golds
from cejudge_dspy.metrics._significance import mcnemar, paired_bootstrap_diff
from cejudge_dspy.metrics._summary import under_rule
from cejudge_dspy.runs import IDENTITY_KEYS, RUN, Record, identity_changes, read_run
from cejudge_dspy.tasks import TaskSpec, load_task


def load_run(path: Path) -> tuple[dict[str, Any], list[Record]]:
    """run.json and one record per item, checked (`runs.read_run`: a damaged, foreign or conflicting
    line is one clear error, a torn last line a warning)."""
    run = read_run(path)
    return run.config, run.records


def compare_runs(
    path_a: Path,
    path_b: Path,
    *,
    n_resamples: int = 1000,
    seed: int = 42,
    rule_a: Decision | None = None,
    rule_b: Decision | None = None,
) -> dict[str, Any]:
    """Per-language metric of both runs on their common items, how often they agree, and a test; for a
    task whose labels are per dimension (CheckEval, G-Eval), per dimension instead (`by` says which).

    Pairwise: McNemar's exact test on per-item correctness. Pointwise: a paired bootstrap of the
    difference in the task's correlation. Items present in only one run are counted, not compared.
    `rule_a`/`rule_b` read a run's records under a decision rule (None: as recorded), so one run can be
    compared with itself: argmax against probability. Pairwise rows add strict accuracy (unparsed counted
    wrong) for both runs and McNemar's test on it.
    """
    config_a, recs_a = load_run(path_a)
    config_b, recs_b = load_run(path_b)
    for path, config in ((path_a, config_a), (path_b, config_b)):
        if not config.get("task"):  # without run.json, what the records were judged with is unknown
            raise CEJudgeError(
                f"{path} has no {RUN} (or it names no task), so what its records were judged with is "
                "unknown; pass directories written by `cejudge evaluate --out`"
            )
    if rule_a is not None:
        recs_a, config_a = [under_rule(r, rule_a) for r in recs_a], {**config_a, "decision": rule_a}
    if rule_b is not None:
        recs_b, config_b = [under_rule(r, rule_b) for r in recs_b], {**config_b, "decision": rule_b}
    spec = _comparable(config_a, config_b)
    by_b = {r.id: r for r in recs_b}
    pairs = [(a, by_b[a.id]) for a in recs_a if a.id in by_b and a.item.label is not None]
    _check_same_items(path_a, path_b, pairs)
    by_dimension = bool(spec.dimensions) and any(isinstance(a.item.label, Mapping) for a, _ in pairs)
    if by_dimension:
        rows = _dimension_rows(spec, pairs, n_resamples, seed)
    else:
        rows = []
        for lang in [*sorted({language_key(a.item) for a, _ in pairs}), "all"]:
            sel = [(a, b) for a, b in pairs if lang == "all" or language_key(a.item) == lang]
            pa, pb = [prediction(a) for a, _ in sel], [prediction(b) for _, b in sel]
            gold = [a.item.label for a, _ in sel]
            row = {"language": lang, "n": len(sel), **_compare(spec.metric, pa, pb, gold, n_resamples, seed)}
            if spec.metric == "accuracy":
                row.update(_compare_strict(sel))
            rows.append(row)
    keys = tuple(k for k in IDENTITY_KEYS if k not in ("shard",))
    return {
        "task": spec.name,
        "metric": spec.metric,
        "by": "dimension" if by_dimension else "language",
        "runs": [{"path": str(path_a), **_describe(config_a)}, {"path": str(path_b), **_describe(config_b)}],
        "differences": {k: list(v) for k, v in identity_changes(config_a, config_b, keys).items()},
        "common_items": len(pairs),
        "only_a": len(recs_a) - len(pairs),
        "only_b": len(recs_b) - len(pairs),
        "rows": rows,
    }


def _comparable(config_a: dict[str, Any], config_b: dict[str, Any]) -> TaskSpec:
    """The task the comparison is read with; runs measured differently (mode or metric) are refused."""
    spec_a = load_task(config_a.get("task") or "")
    spec_b = spec_a if config_b.get("task") == config_a.get("task") else load_task(config_b.get("task") or "")
    if (spec_a.mode, spec_a.metric) != (spec_b.mode, spec_b.metric):
        raise CEJudgeError(
            f"runs are measured differently: {spec_a.name} is {spec_a.mode} ({spec_a.metric}), "
            f"{spec_b.name} is {spec_b.mode} ({spec_b.metric})"
        )
    return spec_a


def _check_same_items(path_a: Path, path_b: Path, pairs: list[tuple[Record, Record]]) -> None:
    """Refuse an item id that names different texts or a different gold label in the two runs."""
    for a, b in pairs:
        if a.item.inputs() != b.item.inputs() or a.item.label != b.item.label:
            what = "gold label" if a.item.inputs() == b.item.inputs() else "texts"
            raise CEJudgeError(
                f"item {a.id} has other {what} in {path_b} than in {path_a}: the runs judged different "
                "data under the same ids, so they cannot be compared item by item"
            )


def _compare_strict(sel: list[tuple[Record, Record]]) -> dict[str, Any]:
    """Strict accuracy of both runs (an unparsed verdict counted wrong, an errored item left out) and
    McNemar's test on per-item strict correctness."""
    rows_a, rows_b = [a for a, _ in sel], [b for _, b in sel]
    pa, pb = [prediction(r) for r in rows_a], [prediction(r) for r in rows_b]
    ga, gb = strict_golds(rows_a), strict_golds(rows_b)

    def right(p: Any, g: Any) -> bool | None:
        return None if g is None or g == "tie" else p == g

    test = mcnemar(
        [right(p, g) for p, g in zip(pa, ga, strict=True)], [right(p, g) for p, g in zip(pb, gb, strict=True)]
    )
    return {
        "strict_a": strict_accuracy(pa, ga).to_dict(),
        "strict_b": strict_accuracy(pb, gb).to_dict(),
        "strict_test": test.to_dict(),
    }


def _dimension_rows(
    spec: TaskSpec, pairs: list[tuple[Record, Record]], n_resamples: int, seed: int
) -> list[dict[str, Any]]:
    """Labels per dimension (CheckEval, G-Eval): one row per dimension (its score against its human
    score) and an `overall` row (the item score against the mean human score), sample level; the row's
    `language` key names the dimension so tables read both kinds alike."""
    from cejudge_dspy.metrics._checkeval import mean_human_score

    def score(r: Record, dim: str) -> Any:
        return r.result.dimension_scores.get(dim) if r.result is not None and r.status == "ok" else None

    def row(name: str, sel: list[tuple[Any, Any, Any]]) -> dict[str, Any]:
        pa, pb, gold = ([x[k] for x in sel] for k in range(3))
        return {"language": name, "n": len(sel), **_compare(spec.metric, pa, pb, gold, n_resamples, seed)}

    rows = []
    for dim in spec.dimensions:
        key = dim.human_key
        rows.append(
            row(
                dim.name,
                [
                    (score(a, dim.name), score(b, dim.name), a.item.label[key])  # type: ignore[index]
                    for a, b in pairs
                    if isinstance(a.item.label, Mapping) and key in a.item.label
                ],
            )
        )
    keys = [dim.human_key for dim in spec.dimensions]
    overall = [(a, b, mean_human_score(a.item.label, keys)) for a, b in pairs]
    rows.append(row("overall", [(prediction(a), prediction(b), g) for a, b, g in overall if g is not None]))
    return rows


def _describe(config: dict[str, Any]) -> dict[str, Any]:
    return {k: config.get(k) for k in ("method", "lm", "orders", "program", "decision")}


def _compare(
    metric: str, pa: list[Any], pb: list[Any], gold: list[Any], n_resamples: int, seed: int
) -> dict[str, Any]:
    if metric == "accuracy":
        ma, mb = accuracy(pa, gold), accuracy(pb, gold)
        right_a = [None if p is None or g == "tie" else p == g for p, g in zip(pa, gold, strict=True)]
        right_b = [None if p is None or g == "tie" else p == g for p, g in zip(pb, gold, strict=True)]
        test = mcnemar(right_a, right_b)
        agree = share([None if x is None or y is None else x == y for x, y in zip(pa, pb, strict=True)], True)
    else:
        fn = CORRELATIONS[metric]
        ma, mb = fn(pa, gold), fn(pb, gold)
        test = (
            paired_bootstrap_diff(fn, pa, pb, gold, n_resamples=n_resamples, seed=seed)
            if len(gold) > 2
            else MetricResult("diff", float("nan"), len(gold), reason="too few items")
        )
        agree = kendall_tau(pa, pb)
    return {"a": ma.to_dict(), "b": mb.to_dict(), "agreement": agree.to_dict(), "test": test.to_dict()}
