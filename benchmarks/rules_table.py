"""Argmax against probability rule, from finished runs: one markdown table per run (issue 12).

    python benchmarks/rules_table.py runs/en-dev runs/da-dev runs/summeval

Reads each run's summary.json (written by `cejudge evaluate`, which computes both decision rules from the
same records) and prints, per rule: pairwise runs, accuracy and strict accuracy with their 95% bootstrap
CIs, position consistency over the items that showed the pair in both orders, the tie share and the share
of A verdicts; pointwise runs, the task's correlation per language pair with its CI and the number of
distinct scores; CheckEval runs, Spearman per dimension (sample level) and the dimensions whose scores
were constant. Nothing is recomputed here: a figure that is not in the summary is printed as n/a.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

RULES = ("argmax", "probability")


def fmt(metric: dict[str, Any] | None, with_n: bool = True) -> str:
    """`0.733 [0.567, 0.900] (n 30)` (without `(n 30)` when `with_n` is false), or the reason a metric
    is undefined."""
    if not metric:
        return "n/a"
    if metric.get("value") is None:
        return f"undefined ({metric.get('reason') or 'no items'})"
    text = f"{metric['value']:.3f}"
    if metric.get("ci_low") is not None and metric.get("ci_high") is not None:
        text += f" [{metric['ci_low']:.3f}, {metric['ci_high']:.3f}]"
    return f"{text} (n {metric.get('n', '?')})" if with_n else text


def pairwise_rows(rules: dict[str, Any]) -> list[str]:
    out = [
        "| rule | accuracy | strict accuracy | position consistency | tie share | A share (final) |",
        "|---|---|---|---|---|---|",
    ]
    for rule in RULES:
        r = rules.get(rule) or {}
        overall = r.get("overall") or {}
        out.append(
            f"| {rule} | {fmt(overall)} | {fmt(overall.get('strict'))} "
            f"| {fmt(r.get('position_consistency'))} | {fmt(r.get('share_tie'))} "
            f"| {fmt(r.get('share_final_A'))} |"
        )
    for rule in RULES:
        r = rules.get(rule) or {}
        if r.get("n_graded"):
            out.append(
                f"\n{rule}: {r.get('decided_by_grades', 0)} of {r['n_graded']} items decided by the "
                "responses' own grades (no order shown); position consistency covers the others."
            )
    return out


def pointwise_rows(rules: dict[str, Any]) -> list[str]:
    languages = sorted({lang for rule in RULES for lang in (rules.get(rule) or {}).get("per_language", {})})
    out = [
        "| rule | " + " | ".join(languages) + " | all items | distinct scores |",
        "|---|" + "---|" * (len(languages) + 2),
    ]
    for rule in RULES:
        r = rules.get(rule) or {}
        cells = [fmt(r.get("per_language", {}).get(lang)) for lang in languages]
        out.append(
            f"| {rule} | "
            + " | ".join(cells)
            + f" | {fmt(r.get('overall'))} | {r.get('distinct_scores', 'n/a')} |"
        )
    return out


def dimension_rows(rules: dict[str, Any]) -> list[str]:
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
        cells = [fmt((dims.get(d) or {}).get("spearman")) for d in names]
        constant = ", ".join(r.get("constant_dimensions", [])) or "none"
        out.append(f"| {rule} | " + " | ".join(cells) + f" | {constant} |")
    return out


def table(run: Path) -> list[str]:
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    rules = summary.get("decision_rules")
    n = f"{summary.get('n_items')} items ({summary.get('n_ok')} ok)"
    head = f"### {run.name}: task {summary.get('task')}, {n}"
    if not rules:
        return [head, "", "no token probabilities in this run: only the argmax rule exists"]
    probs = rules.get("probabilities") or {}
    lines = [head, "", f"records with probabilities: {json.dumps(probs)}", ""]
    if "position_consistency" in (rules.get("argmax") or {}) or "share_tie" in (rules.get("argmax") or {}):
        lines += pairwise_rows(rules)
    elif any((rules.get(rule) or {}).get("dimensions") for rule in RULES):
        lines += dimension_rows(rules)
    else:
        lines += pointwise_rows(rules)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories with a summary.json")
    args = parser.parse_args()
    for run in args.runs:
        if not (run / "summary.json").is_file():
            print(f"{run}: no summary.json (is the run finished?)", file=sys.stderr)
            return 2
        print("\n".join(table(run)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
