"""A consistency run's summary, read back from its child runs: per language and method, how often the
judge's output changed against the original (with bootstrap CIs); per language, each method against the
first with McNemar's test; per item, which languages changed it; accuracy per rendering where the items
carry human labels. The same function serves the run (summary.json) and the viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cejudge_dspy.consistency._layout import ORIGINAL_RUN, child_name, read_consistency_identity
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.metrics import (
    accuracy,
    bootstrap_ci,
    changed,
    changed_rate,
    kendall_tau,
    paired_consistency,
    prediction,
    rendering_consistency,
)
from cejudge_dspy.runs import read_run
from cejudge_dspy.tasks import load_task


def read_outputs(out: Path, identity: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """{method: {rendering: {item id: prediction}}} over the child runs that exist (a missing child is an
    empty mapping: its rendering has not been judged yet)."""
    outputs: dict[str, dict[str, dict[str, Any]]] = {}
    for method in identity["methods"]:
        outputs[method] = {}
        for rendering in [ORIGINAL_RUN, *identity["languages"]]:
            path = out / child_name(rendering, method)
            records = read_run(path).records if (path / "results.jsonl").exists() else []
            outputs[method][rendering] = {r.id: prediction(r) for r in records}
    return outputs


def summarize_consistency(out: Path, *, n_resamples: int = 1000, seed: int = 42) -> dict[str, Any]:
    """The summary of the consistency run in `out` (see the module docstring)."""
    identity = read_consistency_identity(out)
    if identity is None:
        raise CEJudgeError(f"{out} is not a consistency run (no consistency.json); run `cejudge consistency`")
    mode = load_task(identity["task"]).mode
    ids: list[str] = list(identity.get("items", {}).get("ids", []))
    methods, languages = list(identity["methods"]), list(identity["languages"])
    outputs = read_outputs(out, identity)
    labels = _labels(out, identity)
    flags: dict[str, dict[str, list[bool | None]]] = {m: {} for m in methods}
    by_language: dict[str, Any] = {}
    for lang in languages:
        entry: dict[str, Any] = {}
        for method in methods:
            original = [outputs[method][ORIGINAL_RUN].get(i) for i in ids]
            rendered = [outputs[method][lang].get(i) for i in ids]
            flags[method][lang] = changed(original, rendered, mode)
            metrics = rendering_consistency(original, rendered, mode, n_resamples=n_resamples, seed=seed)
            entry[method] = {k: v.to_dict() for k, v in metrics.items()}
        entry["paired"] = _paired(methods, {m: flags[m][lang] for m in methods})
        by_language[lang] = entry
    any_language = _any_language(methods, languages, flags, ids, n_resamples, seed)
    return {
        "task": identity["task"],
        "mode": mode,
        "methods": methods,
        "languages": languages,
        "items": len(ids),
        "by_language": by_language,
        "any_language": any_language,
        "accuracy": _accuracy(mode, methods, languages, outputs, labels, ids, n_resamples, seed),
        "changed": {
            i: {m: [lang for lang in languages if flags[m][lang][k]] for m in methods}
            for k, i in enumerate(ids)
        },
        "outputs": outputs,
        "run": identity,
    }


def _paired(methods: list[str], flags: dict[str, list[bool | None]]) -> dict[str, Any]:
    """Each method after the first against the first: `<first> vs <other>`."""
    first = methods[0]
    return {f"{first} vs {m}": paired_consistency(flags[first], flags[m]).to_dict() for m in methods[1:]}


def _any_language(
    methods: list[str],
    languages: list[str],
    flags: dict[str, dict[str, list[bool | None]]],
    ids: list[str],
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Per item, whether any language changed the output (None when no language has both sides): the
    share of such items per method, with its CI, and the methods compared with McNemar's test."""
    per_method: dict[str, list[bool | None]] = {}
    for method in methods:
        column: list[bool | None] = []
        for k in range(len(ids)):
            seen = [flags[method][lang][k] for lang in languages if flags[method][lang][k] is not None]
            column.append(any(seen) if seen else None)
        per_method[method] = column
    out: dict[str, Any] = {}
    for method, column in per_method.items():
        result = (
            bootstrap_ci(changed_rate, column, n_resamples=n_resamples, seed=seed)
            if n_resamples > 0
            else changed_rate(column)
        )
        out[method] = {"changed_rate": result.to_dict()}
    out["paired"] = _paired(methods, per_method)
    return out


def _labels(out: Path, identity: dict[str, Any]) -> dict[str, Any]:
    """The human label of each item, read from the original run of the first method."""
    path = out / child_name(ORIGINAL_RUN, identity["methods"][0])
    if not (path / "results.jsonl").exists():
        return {}
    return {r.id: r.item.label for r in read_run(path).records}


def _accuracy(
    mode: str,
    methods: list[str],
    languages: list[str],
    outputs: dict[str, dict[str, dict[str, Any]]],
    labels: dict[str, Any],
    ids: list[str],
    n_resamples: int,
    seed: int,
) -> dict[str, Any] | None:
    """Per rendering and method, accuracy against the human label (pairwise) or Kendall's tau (pointwise);
    None when no item has a label."""
    golds = [labels.get(i) for i in ids]
    numeric = mode == "pointwise" and all(g is None or isinstance(g, int | float) for g in golds)
    if all(g is None for g in golds) or (mode == "pointwise" and not numeric):
        return None
    fn = accuracy if mode == "pairwise" else kendall_tau
    out: dict[str, Any] = {}
    for rendering in [ORIGINAL_RUN, *languages]:
        out[rendering] = {}
        for method in methods:
            preds = [outputs[method][rendering].get(i) for i in ids]
            result = (
                bootstrap_ci(fn, preds, golds, n_resamples=n_resamples, seed=seed)
                if n_resamples > 0
                else fn(preds, golds)
            )
            out[rendering][method] = result.to_dict()
    return out
