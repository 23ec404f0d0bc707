"""The tables `cejudge rank` prints (and `cejudge view` beside its page): the ranking with its intervals,
the win-rate matrix, and the agreement with the humans' ranking where the answers carry human scores."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(ci: list[float] | None, digits: int = 2) -> str:
    return "" if not ci else f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def ranking_table(summary: dict[str, Any]) -> Table:
    """One row per system, best first: its strength (pairwise) or mean score (pointwise) with its 95%
    bootstrap interval over prompts, and what it rests on."""
    pairwise = summary["mode"] == "pairwise"
    key = "strength" if pairwise else "mean_score"
    run = summary.get("run", {})
    table = Table(title=f"{run.get('task', '')} · ranking ({run.get('method', '')})")
    table.add_column("#", justify="right")
    table.add_column("system")
    table.add_column("strength (log)" if pairwise else "mean score", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("comparisons" if pairwise else "answers", justify="right")
    human = (summary.get("human") or {}).get("system_means") or {}
    if human:
        table.add_column("human mean", justify="right")
    for row in summary["systems"]:
        cells = [str(row["rank"]), row["system"], _num(row[key]), _ci(row["ci"]), str(row["n"])]
        table.add_row(*cells, *([_num(human.get(row["system"]))] if human else []))
    counts = summary.get("comparisons") or summary.get("answers") or {}
    parts = [f"{k} {v}" for k, v in counts.items()]
    if pairwise:
        bias = summary["position_bias"]
        parts.append(
            f"ties {summary['ties']['n']} ({summary['tie_rule']})"
            + (
                f"; position bias: the response shown first won {bias['first_won']} of {bias['orders']} "
                f"orders ({_num(bias['first_share'])})"
                if bias["orders"]
                else ""
            )
        )
        parts.append("Bradley-Terry log-strengths, mean 0; 95% bootstrap intervals over prompts")
    else:
        parts.append("95% bootstrap intervals over prompts")
    table.caption = " · ".join(parts)
    return table


def win_rate_table(summary: dict[str, Any]) -> Table | None:
    """Row system against column system: its share of points (a tie is half), with the comparisons."""
    matrix = summary.get("win_rate")
    if not matrix:
        return None
    order = [row["system"] for row in summary["systems"]]
    table = Table(title="win rate (row against column; ties count half)")
    table.add_column("")
    for name in order:
        table.add_column(name, justify="right")
    for a in order:
        cells = []
        for b in order:
            cell = matrix[a].get(b) if a != b else None
            cells.append("" if cell is None or cell["rate"] is None else f"{cell['rate']:.2f} ({cell['n']})")
        table.add_row(a, *cells)
    return table


def human_table(summary: dict[str, Any]) -> Table | None:
    """The judge's ranking of the systems against the humans', beside the item-level figures."""
    human = summary.get("human")
    if not human:
        return None
    table = Table(title="agreement with the human scores")
    table.add_column("level")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("n", justify="right")
    system = human["system_level"]
    for name in ("kendall", "spearman"):
        p = system.get(f"{name}_p")
        value = _num(system[name], 3) + (f" (p {p:.3f})" if p is not None else "")
        table.add_row("systems", f"{name} over systems", value, str(system["n_systems"]))
    item = human["item_level"]
    if "agreement" in item:
        table.add_row(
            "items", "verdict agrees with the human scores", _num(item["agreement"], 3), str(item["n"])
        )
    else:
        for name in ("kendall", "spearman"):
            table.add_row("items", f"{name} over answers", _num(item[name], 3), str(item["n"]))
    return table


def ranking_tables(summary: dict[str, Any]) -> list[Table]:
    """The ranking, the win-rate matrix (pairwise) and the agreement with humans (where known)."""
    tables = [ranking_table(summary), win_rate_table(summary), human_table(summary)]
    return [t for t in tables if t is not None]
