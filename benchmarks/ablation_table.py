"""What each ablation of CE-Judge changes, from finished runs: one markdown table against a base run.

    python benchmarks/ablation_table.py runs/base runs/no-concepts runs/i2r runs/r2i

The first run is the method as designed; every other run differs from it in the options its run.json
records (`cejudge evaluate --no-concepts`, `--directions`, `--translator none`, `--judge-on translated`).
Per ablation and language (pointwise) or overall (pairwise): what differs, n, the task's metric for the base
and the ablated run with the 95% bootstrap CI each summary.json holds, and the paired comparison that
`cejudge compare` computes on the same records: pairwise, McNemar's exact test on per-item correctness (items
right only in the base / only in the ablation); pointwise, the paired bootstrap difference (ablated - base)
with its CI and p. An ablation that changes no prompt of an item (translation on English texts) gives
identical records, and the table shows a difference of 0 for it rather than leaving it out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rules_table import fmt

from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.metrics import compare_runs


def value_ci(metric: dict[str, Any] | None) -> str:
    """`0.600 [0.400, 0.800]`: the table has its own n column."""
    return fmt(metric, with_n=False)


def summary_metric(run: Path, language: str) -> dict[str, Any] | None:
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    return summary["overall"] if language == "all" else summary.get("per_language", {}).get(language)


def paired(row: dict[str, Any], metric: str) -> str:
    """The paired comparison, ablated against base, in words a table cell holds."""
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


def label(differences: dict[str, list[Any]]) -> str:
    return "; ".join(f"{k} {a} -> {b}" for k, (a, b) in differences.items()) or "none (same options)"


def table(base: Path, ablated: list[Path], n_resamples: int = 1000, seed: int = 42) -> list[str]:
    """Markdown lines: a header and one row per ablation (and language, for pointwise runs)."""
    out: list[str] = []
    for run in ablated:
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
                f"| {label(cmp['differences'])} | {lang} | {row['n']} | "
                f"{value_ci(summary_metric(base, lang))} | {value_ci(summary_metric(run, lang))} | "
                f"{paired(row, cmp['metric'])} |"
            )
        if cmp["only_a"] or cmp["only_b"]:
            out.append(f"| (items only in base {cmp['only_a']}, only ablated {cmp['only_b']}) | | | | | |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("base", type=Path, help="run directory of the method as designed")
    parser.add_argument("ablated", type=Path, nargs="+", help="run directories of its ablations")
    parser.add_argument("--bootstrap", type=int, default=1000, help="resamples for the paired difference")
    args = parser.parse_args(argv)
    for run in [args.base, *args.ablated]:
        if not (run / "summary.json").is_file():
            print(f"error: {run}: no summary.json (not a finished `cejudge evaluate` run)", file=sys.stderr)
            return 2
    try:
        print("\n".join(table(args.base, args.ablated, n_resamples=args.bootstrap)))
    except CEJudgeError as exc:  # runs of another task or on other items: one line, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
