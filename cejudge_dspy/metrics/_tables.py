"""Markdown tables from finished runs (`cejudge compare --ablations`, `cejudge compare --rules`).

Markdown, not rich: these tables are pasted into papers and docs. Pure functions over run directories that
return the text; the CLI prints it.

`ablation_table`: each ablation against the method as designed. Per ablation and language (pointwise) or
overall (pairwise): what differs (the options each run.json records), n, the task's metric for the base
and the ablated run with the 95% bootstrap CI each summary.json holds, and the paired comparison that
`compare_runs` computes on the same records: pairwise, McNemar's exact test on per-item correctness (items
right only in the base / only in the ablation); pointwise, the paired bootstrap difference (ablated - base)
with its CI and p. An ablation that changes no prompt of an item (translation on English texts) gives
identical records, and the table shows a difference of 0 for it rather than leaving it out.

`rules_table`: argmax against the probability rule for one run, read from the `decision_rules` its
summary.json holds (`cejudge evaluate` computes both rules from the same records): pairwise runs, accuracy
and strict accuracy with their CIs, position consistency over the items shown in both orders, the tie
share and the share of A verdicts; pointwise runs, the task's correlation per language pair with its CI
and the number of distinct scores; CheckEval runs, Spearman per dimension (sample level) and the
dimensions whose scores were constant. Nothing is recomputed: a figure not in the summary reads n/a.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.files import read_json
from cejudge_dspy.metrics._compare import compare_runs
from cejudge_dspy.runs import SUMMARY

RULES = ("argmax", "probability")


def metric_cell(metric: dict[str, Any] | None, with_n: bool = True) -> str:
    """`0.733 [0.567, 0.900] (n 30)` (without `(n 30)` when `with_n` is false), or the reason a metric
    is undefined, or n/a when the summary lacks it."""
    if not metric:
        return "n/a"
    if metric.get("value") is None:
        return f"undefined ({metric.get('reason') or 'no items'})"
    text = f"{metric['value']:.3f}"
    if metric.get("ci_low") is not None and metric.get("ci_high") is not None:
        text += f" [{metric['ci_low']:.3f}, {metric['ci_high']:.3f}]"
    return f"{text} (n {metric.get('n', '?')})" if with_n else text


def read_summary(run: Path) -> dict[str, Any]:
    """A run's summary.json, or one line saying why there is none to read."""
    path = run / SUMMARY
    if not run.is_dir():
        raise CEJudgeError(f"{run}: no {SUMMARY} (no such run directory)")
    if not path.is_file():
        raise CEJudgeError(
            f"{run}: no {SUMMARY}; is the run finished? `cejudge evaluate --out {run}` writes it at the end"
        )
    summary = read_json(path, CEJudgeError)  # a pipe, a device, deep nesting, huge numbers: one line
    if not isinstance(summary, dict):
        raise CEJudgeError(f"{path}: not a run summary (a JSON object written by `cejudge evaluate`)")
    return summary


# --- ablations -------------------------------------------------------------------------------------------


def paired_cell(row: dict[str, Any], metric: str) -> str:
    """The paired comparison of one `compare_runs` row, ablated against base, in words a cell holds."""
    test = row["test"]
    if metric == "accuracy":
        extra = test.get("extra") or {}
        return (
            f"McNemar: {extra.get('b', 0)} right only in base, {extra.get('c', 0)} only ablated, "
            f"p = {test['p_value']:.3f}"
        )
    if test.get("value") is None or test["value"] != test["value"]:  # NaN: too few items
        return f"undefined ({test.get('reason') or 'no items'})"
    # compare's difference is base - ablated; the table shows what the ablation did: ablated - base.
    ci = f" [{-test['ci_high']:+.3f}, {-test['ci_low']:+.3f}]" if test.get("ci_low") is not None else ""
    return f"{-test['value']:+.3f}{ci}, p = {test['p_value']:.3f}"


def _ablation_label(differences: dict[str, list[Any]]) -> str:
    return "; ".join(f"{k} {a} -> {b}" for k, (a, b) in differences.items()) or "none (same options)"


def _summary_metric(summary: dict[str, Any], language: str) -> dict[str, Any] | None:
    return summary["overall"] if language == "all" else summary.get("per_language", {}).get(language)


def _ablation_summary(run: Path) -> dict[str, Any]:
    """The summary an ablation row reads: it must hold the run's overall metric."""
    summary = read_summary(run)
    if not isinstance(summary.get("overall"), dict):
        raise CEJudgeError(
            f"{run / SUMMARY}: no 'overall' metric; rerun the same `cejudge evaluate ... --out {run}` to "
            "write its summary again (finished items are not judged again)"
        )
    return summary


def ablation_table(base: Path, ablated: Sequence[Path], *, n_resamples: int = 1000, seed: int = 42) -> str:
    """Markdown: a header and one row per ablation (and language, for pointwise runs) against `base`.

    Every run must be finished (a summary.json with its overall metric) and comparable with the base
    (`compare_runs`: measured the same way, on the same items); otherwise a CEJudgeError says which.
    """
    if not ablated:
        raise InputError("an ablation table needs the base run and at least one ablated run")
    # Every summary is read before any comparison runs: a missing one fails at once, not after the others.
    summaries = [_ablation_summary(run) for run in [base, *ablated]]
    out: list[str] = []
    for run, summary in zip(ablated, summaries[1:], strict=True):
        cmp = compare_runs(base, run, n_resamples=n_resamples, seed=seed)
        if not out:
            out = [
                f"| ablation | language | n | {cmp['metric']} base | {cmp['metric']} ablated | paired |",
                "|---|---|---|---|---|---|",
            ]
        # Pairwise: one overall row (the per-language rows of a one-language set repeat it).
        pairwise = cmp["metric"] == "accuracy"
        rows = [r for r in cmp["rows"] if r["language"] == "all"] if pairwise else cmp["rows"]
        for row in rows:
            lang = row["language"]
            out.append(
                f"| {_ablation_label(cmp['differences'])} | {lang} | {row['n']} | "
                f"{metric_cell(_summary_metric(summaries[0], lang), with_n=False)} | "
                f"{metric_cell(_summary_metric(summary, lang), with_n=False)} | "
                f"{paired_cell(row, cmp['metric'])} |"
            )
        if cmp["only_a"] or cmp["only_b"]:
            out.append(f"| (items only in base {cmp['only_a']}, only ablated {cmp['only_b']}) | | | | | |")
    return "\n".join(out)


# --- decision rules --------------------------------------------------------------------------------------


def _pairwise_rule_rows(rules: dict[str, Any]) -> list[str]:
    out = [
        "| rule | accuracy | strict accuracy | position consistency | tie share | A share (final) |",
        "|---|---|---|---|---|---|",
    ]
    for rule in RULES:
        r = rules.get(rule) or {}
        overall = r.get("overall") or {}
        out.append(
            f"| {rule} | {metric_cell(overall)} | {metric_cell(overall.get('strict'))} "
            f"| {metric_cell(r.get('position_consistency'))} | {metric_cell(r.get('share_tie'))} "
            f"| {metric_cell(r.get('share_final_A'))} |"
        )
    for rule in RULES:
        r = rules.get(rule) or {}
        if r.get("n_graded"):
            out.append(
                f"\n{rule}: {r.get('decided_by_grades', 0)} of {r['n_graded']} items decided by the "
                "responses' own grades (no order shown); position consistency covers the others."
            )
    return out


def _pointwise_rule_rows(rules: dict[str, Any]) -> list[str]:
    languages = sorted({lang for rule in RULES for lang in (rules.get(rule) or {}).get("per_language", {})})
    out = [
        "| rule | " + " | ".join(languages) + " | all items | distinct scores |",
        "|---|" + "---|" * (len(languages) + 2),
    ]
    for rule in RULES:
        r = rules.get(rule) or {}
        cells = [metric_cell(r.get("per_language", {}).get(lang)) for lang in languages]
        out.append(
            f"| {rule} | "
            + " | ".join(cells)
            + f" | {metric_cell(r.get('overall'))} | {r.get('distinct_scores', 'n/a')} |"
        )
    return out


def _dimension_rule_rows(rules: dict[str, Any]) -> list[str]:
    names = sorted(
        {d for rule in RULES for d in (rules.get(rule) or {}).get("dimensions", {}) if d != "overall"}
    )
    out = [
        "| rule | " + " | ".join(names) + " | constant dimensions |",
        "|---|" + "---|" * (len(names) + 1),
    ]
    for rule in RULES:
        r = rules.get(rule) or {}
        dims = r.get("dimensions", {})
        cells = [metric_cell((dims.get(d) or {}).get("spearman")) for d in names]
        constant = ", ".join(r.get("constant_dimensions", [])) or "none"
        out.append(f"| {rule} | " + " | ".join(cells) + f" | {constant} |")
    return out


def rules_table(run: Path) -> str:
    """Markdown for one run: a `###` heading naming it, then argmax against probability (see above)."""
    summary = read_summary(run)
    rules = summary.get("decision_rules")
    n = f"{summary.get('n_items')} items ({summary.get('n_ok')} ok)"
    # `.` or `runs/x/` still name the run's folder.
    head = f"### {run.name or run.resolve().name}: task {summary.get('task')}, {n}"
    if not rules:
        return "\n".join([head, "", "no token probabilities in this run: only the argmax rule exists"])
    probs = rules.get("probabilities") or {}
    lines = [head, "", f"records with probabilities: {json.dumps(probs)}", ""]
    argmax = rules.get("argmax") or {}
    if "position_consistency" in argmax or "share_tie" in argmax:
        lines += _pairwise_rule_rows(rules)
    elif any((rules.get(rule) or {}).get("dimensions") for rule in RULES):
        lines += _dimension_rule_rows(rules)
    else:
        lines += _pointwise_rule_rows(rules)
    return "\n".join(lines)
