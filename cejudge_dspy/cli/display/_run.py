"""A run's tables, in the order `evaluate` and `merge --members` print them."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType

from cejudge_dspy.cli.display._panel import panel_tables
from cejudge_dspy.cli.display._rules import decision_rules_table, reliability_table, selective_table
from cejudge_dspy.cli.display._tables import dimension_tables, summary_table


def run_tables(summary: dict[str, Any], mode: str) -> list[RenderableType]:
    """The summary, dimensions, decision rules, reliability, calibration, the risk-coverage of selective
    judging, and a panel's."""
    tables: list[Any] = [summary_table(summary), dimension_tables(summary), decision_rules_table(summary)]
    if (calibration := summary.get("decision_rules", {}).get("calibration")) and calibration["n"]:
        tables.append(reliability_table(calibration))
    if (selective := summary.get("selective")) and selective["n"] > selective["n_without_confidence"]:
        tables.append(selective_table(selective, mode))
    tables += panel_tables(summary["panel"], summary["metric"]) if summary.get("panel") else []
    return [t for t in tables if t is not None]
