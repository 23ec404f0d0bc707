"""A run's tables, in the order `evaluate` and `merge --members` print them."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType

from cejudge_dspy.cli.display._label_free import label_free_table
from cejudge_dspy.cli.display._panel import panel_tables
from cejudge_dspy.cli.display._rules import decision_rules_table, reliability_table, selective_table
from cejudge_dspy.cli.display._tables import dimension_tables, summary_table


def run_tables(summary: dict[str, Any], mode: str) -> list[RenderableType]:
    """The summary (where some item has a gold label), the label-free shares or distributions (where some
    has none), dimensions, decision rules, reliability, calibration, the risk-coverage of selective judging,
    and a panel's."""
    label_free = label_free_table(summary)
    labelled = label_free is None or summary["n_items"] > summary["label_free"]["n_items"]
    tables: list[Any] = [summary_table(summary) if labelled else None, label_free, dimension_tables(summary)]
    tables.append(decision_rules_table(summary) if labelled else None)  # the rules' metrics need labels
    if (calibration := summary.get("decision_rules", {}).get("calibration")) and calibration["n"]:
        tables.append(reliability_table(calibration))
    if (selective := summary.get("selective")) and selective["n"] > selective["n_without_confidence"]:
        tables.append(selective_table(selective, mode))
    tables += panel_tables(summary["panel"], summary["metric"]) if summary.get("panel") else []
    return [t for t in tables if t is not None]
