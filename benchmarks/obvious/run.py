"""Run the obvious-items benchmark through the `cejudge evaluate` CLI and print its figures.

    python benchmarks/obvious/run.py --lm embedded --method cejudge --out runs/obvious-cejudge
    python benchmarks/obvious/run.py --lm simulated:0 --set pairwise --limit 10 --program base

Flags this script does not know (`--constrained`, `--no-cache`, `--program base`, `--orders single`,
`--concurrency 2`, ...) go to `cejudge evaluate` unchanged. The pairwise set runs as task `chat` in
OUT/pairwise, the pointwise set as task `literary` in OUT/pointwise; `cejudge evaluate` resumes from
what is there, so a rerun only judges what is missing. `--no-run` prints the figures of what OUT holds.

Only the CLI is used, never the package's modules, so this keeps working when they move. The layout
of results.jsonl is read in one place, `read_run`; everything after it works on plain rows.
README.md next to this file says what each printed figure means. `--record` appends the figures as
tables, dated, with the host and versions, to docs/measurements/data/obvious.json, which
docs/measurements/embedded-obvious-items.md shows (benchmarks/record.py).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

try:
    from benchmarks.record import Cell, Table, add_record_argument, record
except ModuleNotFoundError:  # run as a script (python benchmarks/obvious/run.py): the root is not on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.record import Cell, Table, add_record_argument, record

HERE = Path(__file__).resolve().parent
SETS = {
    "pairwise": {
        "task": "chat",
        "data": HERE / "pairwise.jsonl",
        # The data is in the common pairwise schema; only the id column needs naming (ids are numbered
        # rows otherwise).
        "fields": ["id=id"],
    },
    "pointwise": {
        "task": "literary",
        "data": HERE / "pointwise.jsonl",
        # `quality` goes into the item's subset, which pointwise tasks do not otherwise use, so each
        # record carries its grade (and `--subset garbled` picks one grade).
        "fields": [
            "id=id",
            "instruction=source",
            "response=translation",
            "label=intended_score",
            "language_pair=language_pair",
            "subset=quality",
        ],
    },
}
# Flags that would point `cejudge evaluate` at other data or another place; the script sets them itself.
OWNED = ("--task", "--data", "--field", "--const", "--out")
GRADES = ("perfect", "minor_slip", "wrong_meaning", "garbled", "wrong_language", "untranslated")
GARBAGE = ("garbled", "wrong_language", "untranslated")


# --- reading a run: the one place that knows the record layout -------------------------------------------


def read_run(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(run.json, rows) of a `cejudge evaluate` run directory; see README.md for the fields used.

    One row per item id (a retried item's last record wins), with the fields the figures need:
    id, status ("ok" | "unparsed" | "error"), language, response_language, kind (the item's subset),
    label, verdict (final pairwise verdict: "A", "B", "tie" or None), score (pointwise, or None),
    orders (the orders run, "AB" and/or "BA"), ab / ba (each order's verdict mapped back to the original
    responses, None when that order gave none or was not run), shown (the verdicts as the model said
    them, one per order run), order_free (the graded judgment decided from the two responses' own
    grades, so no order was shown: its verdict stands for both orders), seconds
    and calls (LM calls, cache hits included). A torn last line (a run killed mid-write) is skipped.
    """
    config_path = run_dir / "run.json"
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
    latest: dict[str, dict[str, Any]] = {}
    path = run_dir / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines):
                break
            raise
        latest[record["id"]] = record
    rows = []
    for record in latest.values():
        item, result = record.get("item") or {}, record.get("result") or {}
        orders = {o.get("order"): o for o in result.get("orders") or []}
        # A pair decided by its grades was never shown as a pair: the verdict holds in either order.
        order_free = not orders and bool(result.get("grades")) and result.get("verdict") in ("A", "B")
        free = result.get("verdict") if order_free else None
        rows.append(
            {
                "id": record["id"],
                "status": record.get("status"),
                "language": item.get("language"),
                "response_language": item.get("response_language"),
                "kind": item.get("subset"),
                "label": item.get("label"),
                "verdict": result.get("verdict"),
                # The model's own final answer when the headline came from token probabilities (--decision).
                "argmax_verdict": (result.get("argmax") or {}).get("verdict", result.get("verdict")),
                "score": result.get("score"),
                "ab": free or (orders.get("AB") or {}).get("verdict"),
                "ba": free or (orders.get("BA") or {}).get("verdict"),
                "order_free": order_free,
                "orders": list(orders),
                "shown": [o.get("shown_verdict") for o in orders.values()],
                "seconds": record.get("seconds"),
                "calls": (result.get("usage") or {}).get("calls"),
            }
        )
    return config, sorted(rows, key=lambda r: r["id"])


# --- figures: pure functions of rows ---------------------------------------------------------------------


def ratio(k: int, n: int) -> dict[str, Any]:
    """A share with its counts; value None when there is nothing to divide by."""
    return {"value": k / n if n else None, "k": k, "n": n}


def per_item(
    values: Iterable[float | None], n_items: int, fallback_total: float | None = None
) -> float | None:
    """Mean of the values that are present and positive; else fallback_total / n_items (wall clock)."""
    present = [float(v) for v in values if v is not None and v > 0]
    if present:
        return sum(present) / len(present)
    if fallback_total is not None and n_items:
        return fallback_total / n_items
    return None


def pairwise_figures(rows: Sequence[dict[str, Any]], wall_seconds: float | None = None) -> dict[str, Any]:
    """Figures of pairwise rows. Accuracies are over all n items: an item without a verdict in an order
    is not right in that order. Position consistency is over the items with a verdict in both orders."""
    n = len(rows)
    right_ab = sum(r["ab"] is not None and r["ab"] == r["label"] for r in rows)
    right_ba = sum(r["ba"] is not None and r["ba"] == r["label"] for r in rows)
    both_right = sum(r["ab"] is not None and r["ab"] == r["ba"] == r["label"] for r in rows)
    # Order-free verdicts agree with themselves by construction: consistency is over the shown pairs.
    both_given = [r for r in rows if r["ab"] is not None and r["ba"] is not None and not r.get("order_free")]
    shown = [s for r in rows for s in r["shown"] if s is not None]
    # `--orders single`: some item ran the first order and none the swapped one. Items without any order
    # (every stage before the verdict failed) leave both orders' figures defined, at "not right".
    ran = {o for r in rows for o in r["orders"]}
    single_order = "AB" in ran and "BA" not in ran
    return {
        "n": n,
        "accuracy_ab": ratio(right_ab, n),
        "accuracy_ba": None if single_order else ratio(right_ba, n),
        "accuracy_both_orders": None if single_order else ratio(both_right, n),
        "position_consistency": None
        if single_order
        else ratio(sum(r["ab"] == r["ba"] for r in both_given), len(both_given)),
        "accuracy_final": ratio(sum(r["verdict"] == r["label"] for r in rows), n),
        "accuracy_final_argmax": ratio(
            sum(r.get("argmax_verdict", r["verdict"]) == r["label"] for r in rows), n
        ),
        "ties": sum(r["verdict"] == "tie" for r in rows),
        "decided_by_grades": sum(bool(r.get("order_free")) for r in rows),
        "unparsed": sum(r["status"] == "unparsed" for r in rows),
        "errors": sum(r["status"] == "error" for r in rows),
        "share_shown_a": ratio(sum(s == "A" for s in shown), len(shown)),
        "seconds_per_item": per_item((r["seconds"] for r in rows), n, wall_seconds),
        "calls_per_item": per_item((r["calls"] for r in rows), n),
    }


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho (scipy), None when undefined (fewer than 2 pairs or a constant side)."""
    from scipy.stats import spearmanr

    if len(xs) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    rho = float(spearmanr(xs, ys).statistic)
    return None if math.isnan(rho) else rho


def pointwise_figures(rows: Sequence[dict[str, Any]], wall_seconds: float | None = None) -> dict[str, Any]:
    """Figures of pointwise rows (kind = quality grade, label = intended score). Spearman is over the
    scored items; the two shares are over all items of their grades (an unscored item misses)."""
    scored = [r for r in rows if r["score"] is not None]
    by_grade: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_grade[r["kind"] or "?"].append(r)
    order = [g for g in GRADES if g in by_grade] + sorted(g for g in by_grade if g not in GRADES)
    grades = {}
    for grade in order:
        scores = [r["score"] for r in by_grade[grade] if r["score"] is not None]
        intended = sorted({r["label"] for r in by_grade[grade]})
        grades[grade] = {
            "n": len(by_grade[grade]),
            "scored": len(scores),
            "intended": intended[0] if len(intended) == 1 else intended,
            "mean_score": sum(scores) / len(scores) if scores else None,
        }
    perfect = by_grade.get("perfect", [])
    garbage = [r for g in GARBAGE for r in by_grade.get(g, [])]
    return {
        "n": len(rows),
        "spearman": spearman([r["score"] for r in scored], [r["label"] for r in scored]),
        "spearman_n": len(scored),
        "mean_score_by_grade": grades,
        "perfect_scored_6_or_more": ratio(
            sum(r["score"] is not None and r["score"] >= 6 for r in perfect), len(perfect)
        ),
        "garbage_scored_2_or_less": ratio(
            sum(r["score"] is not None and r["score"] <= 2 for r in garbage), len(garbage)
        ),
        "unparsed": sum(r["status"] == "unparsed" for r in rows),
        "errors": sum(r["status"] == "error" for r in rows),
        "seconds_per_item": per_item((r["seconds"] for r in rows), len(rows), wall_seconds),
        "calls_per_item": per_item((r["calls"] for r in rows), len(rows)),
    }


def breakdown(
    rows: Sequence[dict[str, Any]],
    key: Callable[[dict[str, Any]], str],
    figures: Callable[[Sequence[dict[str, Any]]], dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """`figures` of each group of rows, groups named by `key` and sorted."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return {name: figures(groups[name]) for name in sorted(groups)}


def language_pair(row: dict[str, Any]) -> str:
    src, tgt = row["language"] or "?", row["response_language"]
    return f"{src}-{tgt}" if tgt and tgt != src else src


def report(kind: str, rows: Sequence[dict[str, Any]], wall_seconds: float | None = None) -> dict[str, Any]:
    """All figures of one set: overall, and by language and kind (pairwise) or language pair (pointwise)."""
    if kind == "pairwise":
        return {
            "overall": pairwise_figures(rows, wall_seconds),
            "by_language": breakdown(rows, lambda r: r["language"] or "?", pairwise_figures),
            "by_kind": breakdown(rows, lambda r: r["kind"] or "?", pairwise_figures),
        }
    return {
        "overall": pointwise_figures(rows, wall_seconds),
        "by_language_pair": breakdown(rows, language_pair, pointwise_figures),
    }


# --- printing --------------------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, dict):  # a ratio
        return "n/a" if value["value"] is None else f"{value['value']:.{digits}f} ({value['k']}/{value['n']})"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def short(value: Any) -> str:
    if isinstance(value, dict):
        return "n/a" if value["value"] is None else f"{value['value']:.2f}"
    return "n/a" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def number(value: Any) -> str:
    """7.0 as 7; a list of numbers (a grade with mixed intended scores) as 5/6."""
    if isinstance(value, list):
        return "/".join(number(v) for v in value)
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body, strict=True)]

    def cells(line: Sequence[str]) -> str:  # the group name left-aligned, the numbers right-aligned
        first, *rest = (str(c) for c in line)
        return "  ".join(
            [first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))]
        )

    return "\n".join("  " + cells(line) for line in [header, *body])


def cost_line(o: dict[str, Any]) -> str:
    seconds, calls = fmt(o["seconds_per_item"], 2), fmt(o["calls_per_item"], 1)
    return f"seconds per item: {seconds} · LM calls per item: {calls}"


def print_pairwise(rep: dict[str, Any], title: str) -> None:
    o = rep["overall"]
    print(f"\n== {title}")
    print(
        f"items {o['n']} · unparsed {o['unparsed']} · errors {o['errors']} · ties {o['ties']}"
        f" · decided by the grades (no order shown) {o['decided_by_grades']}"
    )
    print(f"accuracy, first order shown (A/B):   {fmt(o['accuracy_ab'])}")
    print(f"accuracy, swapped order shown (B/A): {fmt(o['accuracy_ba'])}")
    print(f"accuracy, right in both orders:      {fmt(o['accuracy_both_orders'])}")
    print(f"final verdict right (run's rule):     {fmt(o['accuracy_final'])}")
    print(f"final verdict right (argmax answers): {fmt(o['accuracy_final_argmax'])}")
    print(f"position consistency:                {fmt(o['position_consistency'])}")
    print(f"share of 'A' among shown verdicts:   {fmt(o['share_shown_a'])}")
    print(cost_line(o))
    header = ["", "n", "acc A/B", "acc B/A", "both", "consist", "ties", "unparsed", "errors"]
    for name, groups in (("language", rep["by_language"]), ("kind", rep["by_kind"])):
        body = [
            [
                g,
                str(f["n"]),
                short(f["accuracy_ab"]),
                short(f["accuracy_ba"]),
                short(f["accuracy_both_orders"]),
                short(f["position_consistency"]),
                str(f["ties"]),
                str(f["unparsed"]),
                str(f["errors"]),
            ]
            for g, f in groups.items()
        ]
        print(f"by {name}:")
        print(table([name, *header[1:]], body))


def print_pointwise(rep: dict[str, Any], title: str) -> None:
    o = rep["overall"]
    print(f"\n== {title}")
    print(f"items {o['n']} · unparsed {o['unparsed']} · errors {o['errors']}")
    print(f"Spearman, judge score vs intended score: {fmt(o['spearman'])} (n={o['spearman_n']})")
    print(f"perfect translations scored >= 6:        {fmt(o['perfect_scored_6_or_more'])}")
    print(f"garbage scored <= 2:                     {fmt(o['garbage_scored_2_or_less'])}")
    print(cost_line(o))
    body = [
        [g, str(f["n"]), str(f["scored"]), number(f["intended"]), short(f["mean_score"])]
        for g, f in o["mean_score_by_grade"].items()
    ]
    print("mean judge score by grade:")
    print(table(["grade", "n", "scored", "intended", "mean score"], body))
    body = [
        [
            p,
            str(f["n"]),
            short(f["spearman"]),
            short(f["perfect_scored_6_or_more"]),
            short(f["garbage_scored_2_or_less"]),
            str(f["unparsed"] + f["errors"]),
        ]
        for p, f in rep["by_language_pair"].items()
    ]
    print("by language pair:")
    print(table(["pair", "n", "spearman", "perfect>=6", "garbage<=2", "unparsed+err"], body))


# --- recording (--record) --------------------------------------------------------------------------------

RATIO = "{:.3f} ({}/{})"  # a ratio cell: [value, k, n]


def _ratio(value: dict[str, Any] | None) -> Cell:
    return None if value is None or value["value"] is None else [value["value"], value["k"], value["n"]]


def _groups(groups: dict[str, dict[str, Any]], name: str, title: str) -> Table:
    columns = [name, "n", "acc A/B", "acc B/A", "both", "consist", "ties", "unparsed", "errors"]
    rows: list[list[Cell]] = [
        [
            g,
            f["n"],
            *(
                _ratio(f[k])
                for k in ("accuracy_ab", "accuracy_ba", "accuracy_both_orders", "position_consistency")
            ),
            f["ties"],
            f["unparsed"],
            f["errors"],
        ]  # fmt: skip
        for g, f in groups.items()
    ]
    return Table(columns, rows, ["", "", *["{:.2f}"] * 4, "", "", ""], title)


def pairwise_tables(rep: dict[str, Any], title: str) -> list[Table]:
    o = rep["overall"]
    keys = ("accuracy_ab", "accuracy_ba", "accuracy_both_orders", "accuracy_final", "accuracy_final_argmax",
            "position_consistency", "share_shown_a")  # fmt: skip
    columns = ["n", "acc A/B", "acc B/A", "right in both orders", "final (run's rule)", "final (argmax)",
               "position consistency", "share of A shown", "ties", "decided by the grades", "unparsed",
               "errors", "s/item", "calls/item"]  # fmt: skip
    counts = [o["ties"], o["decided_by_grades"], o["unparsed"], o["errors"]]
    row = [o["n"], *(_ratio(o[k]) for k in keys), *counts, o["seconds_per_item"], o["calls_per_item"]]
    overall = Table(columns, [row], ["", *[RATIO] * 7, "", "", "", "", "{:.2f}", "{:.1f}"], title)
    return [
        overall,
        _groups(rep["by_language"], "language", "pairwise, by language"),
        _groups(rep["by_kind"], "kind", "pairwise, by kind"),
    ]


def pointwise_tables(rep: dict[str, Any], title: str) -> list[Table]:
    o = rep["overall"]
    columns = ["n", "Spearman (judge vs intended)", "scored", "perfect scored >= 6", "garbage scored <= 2",
               "unparsed", "errors", "s/item", "calls/item"]  # fmt: skip
    row = [o["n"], o["spearman"], o["spearman_n"], _ratio(o["perfect_scored_6_or_more"]),
           _ratio(o["garbage_scored_2_or_less"]), o["unparsed"], o["errors"], o["seconds_per_item"],
           o["calls_per_item"]]  # fmt: skip
    overall = Table(columns, [row], ["", "{:.3f}", "", RATIO, RATIO, "", "", "{:.2f}", "{:.1f}"], title)
    grades: list[list[Cell]] = [
        [g, f["n"], f["scored"], number(f["intended"]), f["mean_score"]]
        for g, f in o["mean_score_by_grade"].items()
    ]
    pairs: list[list[Cell]] = [
        [
            p,
            f["n"],
            f["spearman"],
            _ratio(f["perfect_scored_6_or_more"]),
            _ratio(f["garbage_scored_2_or_less"]),
            f["unparsed"] + f["errors"],
        ]  # fmt: skip
        for p, f in rep["by_language_pair"].items()
    ]
    return [
        overall,
        Table(
            ["grade", "n", "scored", "intended", "mean score"],
            grades,
            ["", "", "", "", "{:.2f}"],
            "pointwise, mean judge score by grade",
        ),  # fmt: skip
        Table(
            ["pair", "n", "spearman", "perfect >= 6", "garbage <= 2", "unparsed + errors"],
            pairs,
            ["", "", "{:.2f}", RATIO, RATIO, ""],
            "pointwise, by language pair",
        ),  # fmt: skip
    ]


# --- running ---------------------------------------------------------------------------------------------


def cejudge_command() -> str:
    """The `cejudge` script of this interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / "cejudge"
    found = str(beside) if beside.exists() else shutil.which("cejudge")
    if not found:
        sys.exit("run.py: no `cejudge` command; install the package (pip install -e .) in this environment")
    return found


def evaluate_command(which: str, args: argparse.Namespace, extra: Sequence[str], out: Path) -> list[str]:
    spec = SETS[which]
    cmd = [cejudge_command(), "evaluate", "--task", spec["task"], "--data", str(spec["data"])]
    for field in spec["fields"]:
        cmd += ["--field", field]
    cmd += ["--lm", args.lm, "--method", args.method, "--out", str(out)]
    if args.limit is not None:
        cmd += ["--limit", str(args.limit)]
    return cmd + list(extra)


def parse_args(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Any other flag is passed to `cejudge evaluate` (see `cejudge evaluate --help`).",
        allow_abbrev=False,  # an abbreviation must not swallow a flag meant for cejudge
    )
    p.add_argument("--lm", default="embedded", help="backbone, as for cejudge (default: embedded)")
    p.add_argument("--method", default="cejudge", help="cejudge (default), direct, ...")
    p.add_argument(
        "--out",
        help="run directory; the sets go to OUT/pairwise and OUT/pointwise (default runs/obvious-METHOD)",
    )
    p.add_argument("--set", choices=("pairwise", "pointwise", "both"), default="both", dest="which")
    p.add_argument("--limit", type=int, help="judge a seeded, language-stratified sample of N items per set")
    p.add_argument("--json", help="also write the figures to this JSON file")
    p.add_argument("--no-run", action="store_true", help="do not run cejudge; report what OUT holds")
    add_record_argument(p, "obvious")
    args, extra = p.parse_known_args(argv)
    owned = [a for a in extra if a.split("=", 1)[0] in OWNED]
    if owned:
        p.error(f"{', '.join(owned)}: set by this script (data, mapping and run directories are fixed)")
    return args, extra


def main(argv: Sequence[str] | None = None) -> int:
    args, extra = parse_args(argv)
    root = Path(args.out or f"runs/obvious-{args.method}")
    which = ["pairwise", "pointwise"] if args.which == "both" else [args.which]
    figures: dict[str, Any] = {"out": str(root), "lm": args.lm, "method": args.method, "passed_on": extra}
    tables: list[Table] = []
    for name in which:
        out = root / name
        wall = None
        if not args.no_run:
            cmd = evaluate_command(name, args, extra, out)
            print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
            start = time.monotonic()
            rc = subprocess.call(cmd)
            wall = time.monotonic() - start
            if rc != 0:
                partial = (out / "results.jsonl").exists()
                hint = f"; `--no-run --out {root}` reports what was written" if partial else ""
                print(f"run.py: cejudge evaluate failed (exit {rc}) on the {name} set{hint}", file=sys.stderr)
                return rc
        config, rows = read_run(out)
        if not rows:
            print(f"run.py: no records in {out / 'results.jsonl'}", file=sys.stderr)
            return 1
        rep = report(name, rows, wall)
        rep["run"] = config
        figures[name] = rep
        title = (
            f"obvious {name} · task {config.get('task', SETS[name]['task'])} · "
            f"{config.get('method', args.method)} · {config.get('lm', args.lm)} · "
            f"program {config.get('program', '?')} · {out}"
        )
        (print_pairwise if name == "pairwise" else print_pointwise)(rep, title)
        tables += (pairwise_tables if name == "pairwise" else pointwise_tables)(
            rep, title.rsplit(" · ", 1)[0]
        )
        sys.stdout.flush()  # before the next set's cejudge writes to the same terminal
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nfigures: {args.json}")
    record(args, "obvious", tables, argv, module="benchmarks.obvious.run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
