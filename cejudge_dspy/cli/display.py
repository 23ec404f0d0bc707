"""Rich rendering for the CLI: verdict panels, run tables, task listings. The only module (with the
CLI) that imports rich; everything it shows comes from JudgeResult, summaries and TaskSpec."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cejudge_dspy.items import Item
from cejudge_dspy.results import JudgeResult
from cejudge_dspy.tasks import TaskSpec


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _bullets(items: Sequence[str]) -> Text:
    return Text("\n".join(f"• {q}" for q in items) or "(none)")


def verdict_panel(
    result: JudgeResult, spec: TaskSpec, item_id: str | None = None, item: Item | None = None
) -> Panel:
    """One judged item in plain words: who won (or the score and what its level means), what each
    presentation order said about the original responses, the feedback, each checklist with the
    judge's answers under the questions they answer, and the LM work it took."""
    title = f"{spec.name} · {result.method}" + (f" · {item_id}" if item_id else "")
    if not result.ok:
        body = Text.assemble(
            ("Unparsed: no verdict or score. ", "bold red"),
            f"The {result.error_stage} stage's output could not be read ({result.error}). "
            "An unparsed result is counted as such in runs, never graded.",
        )
        return Panel(body, title=title, border_style="red")
    if result.mode == "pairwise":
        parts: list[Any] = [*pairwise_verdict(result, item), Text("")]
    else:
        parts = [pointwise_score(result, spec), Text("")]
    if (line := probability_line(result)) is not None:
        parts[-1:-1] = [line]
    feedback_from = " (A shown first)" if result.mode == "pairwise" and len(result.orders) > 1 else ""
    parts += [Text(f"Feedback{feedback_from}", style="bold"), Text(result.feedback or "(none)")]
    matched, unmatched = match_answers(result.answers, result.checklists)
    if matched:
        parts += [
            Text(""),
            Text(f"→ marks the judge's answer to the question above it{feedback_from}", style="dim"),
        ]
    for name, checklist in result.checklists.items():
        parts += [
            Text(""),
            Text(_checklist_title(name, item), style="bold"),
            _questions(checklist, matched, name),
        ]
    if unmatched:
        parts += [
            Text(""),
            Text("Answers that name no checklist question", style="bold"),
            _bullets(unmatched),
        ]
    u = result.usage
    parts += [
        Text(""),
        Text(
            f"LM calls {u.calls} (cached {u.cached}, reused {u.reused}) · tokens "
            f"{u.prompt_tokens} in / {u.completion_tokens} out",
            style="dim",
        ),
    ]
    border = "yellow" if result.consistent is False else "green"
    return Panel(Group(*parts), title=title, border_style=border)


def probability_line(result: JudgeResult) -> Text | None:
    """What the token probabilities said, beside the argmax answer (None for records without them)."""
    probs = result.probabilities
    if probs is None:
        return None
    decided = f"decided by {result.decision}"
    if not probs.ok:
        return Text(
            f"Probabilities: {probs.status.replace('_', ' ')} ({probs.reason}); {decided}", style="dim"
        )
    argmax = result.argmax
    if result.mode == "pairwise":
        per_order = "; ".join(
            f"{o.order[0]} shown first: P(first better) {o.p_first:.3f}"
            for o in result.orders
            if o.p_first is not None
        )
        text = (
            f"Probabilities: p(A) {probs.p_a:.3f} ({per_order}) -> {probs.verdict}, confidence "
            f"{probs.confidence:.3f}, tie band {probs.tie_band:g}; argmax verdict "
            f"{argmax.verdict if argmax else result.verdict}; {decided}"
        )
    elif probs.dimension_scores:
        dims = ", ".join(f"{k} {v:.3f}" for k, v in probs.dimension_scores.items())
        text = f"Probabilities: mean P(yes) {probs.score:.3f} ({dims}); {decided}"
    else:
        dist = ", ".join(f"{k}: {v:.3f}" for k, v in probs.distribution.items())
        text = (
            f"Probabilities: expected score {probs.score:.2f} ({dist}); argmax score "
            f"{argmax.score if argmax else result.score}; {decided}"
        )
    return Text(text, style="dim")


def _quoted(item: Item | None, which: str) -> str:
    text = getattr(item, f"response_{which.lower()}", None) if item is not None else None
    if not text:
        return ""
    text = " ".join(text.split())
    return f' ("{text[:40]}…")' if len(text) > 40 else f' ("{text}")'


def pairwise_verdict(result: JudgeResult, item: Item | None = None) -> list[Text]:
    """`Verdict: A ("Paris") is better: both presentation orders picked it.` and one line per order
    saying which original response it picked and where that response was shown."""
    picks = [o.verdict for o in result.orders]
    shown_first = [o.shown_verdict == "A" for o in result.orders]
    probs = result.probabilities
    by_probability = result.decision == "probability" and probs is not None and probs.ok
    if result.verdict == "tie":
        head = Text("Verdict: tie", style="bold yellow")
        if by_probability:
            why = f": p(A) {probs.p_a:.3f} lies inside the tie band, so neither response is preferred"
        else:
            why = ": the two orders disagree, so neither response is preferred"
            if all(shown_first):
                why += " (each order picked the response shown first: a position preference)"
            elif not any(shown_first):
                why += " (each order picked the response shown second: a position preference)"
        head.append(why + ".")
    else:
        winner = f"{result.verdict}{_quoted(item, str(result.verdict))}"
        head = Text(f"Verdict: {winner} is better", style="bold green")
        if len(picks) <= 1:
            head.append(": judged in one order only (A shown first); --orders both also judges the swap.")
        elif all(p == result.verdict for p in picks):
            head.append(": both presentation orders picked it.")
        elif by_probability:
            head.append(
                f": the orders disagree, and the judge's token probabilities favour it over both orders "
                f"(p(A) {probs.p_a:.3f}, confidence {probs.confidence:.3f})."
            )
        else:
            head.append(": the presentation orders did not both pick it.")
    lines = [head]
    for order in result.orders:
        first, second = order.order[0], order.order[1]
        if order.verdict is None:
            lines.append(Text(f"  {first} shown first, {second} second: no verdict ({order.error})"))
            continue
        where = "first" if order.shown_verdict == "A" else "second"
        lines.append(
            Text(
                f"  {first} shown first, {second} second: picked {order.verdict} (the response shown {where})"
            )
        )
    return lines


def pointwise_score(result: JudgeResult, spec: TaskSpec) -> Text:
    """`Score: 5 / 7: <what level 5 means on the task's scale>`; CheckEval: the share of Yes."""
    if result.method in ("checkeval", "cejudge-checkeval"):
        head = Text(f"Score: {_fmt(result.score)} (share of Yes answers, 0 to 1)", style="bold green")
    else:
        _, hi = spec.scale_range if spec.scale else (0, 1)
        head = Text(f"Score: {_fmt(result.score)} / {hi}", style="bold green")
        meaning = spec.scale.get(round(result.score)) if spec.scale and result.score is not None else None
        if meaning:
            head.append(f": {meaning}")
    if result.dimension_scores:
        head.append("\n  " + ", ".join(f"{k} {_fmt(v, 2)}" for k, v in result.dimension_scores.items()))
    return head


def _checklist_title(name: str, item: Item | None) -> str:
    if name in ("a", "b"):
        return f"Checklist for response {name.upper()}{_quoted(item, name)}"
    return f"Checklist ({name})"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def match_answers(
    answers: Sequence[str], checklists: dict[str, list[str]]
) -> tuple[dict[tuple[str, int], list[str]], list[str]]:
    """Place each free-text answer under the checklist question it names.

    The judge writes short answers "each naming the item", not numbered ones, so an answer goes to the
    question most of whose words it repeats (at least 60%); the repeated question is cut from the shown
    answer when the answer has the form `question -> answer`. Answers that name no question are
    returned apart, never dropped. Display only: nothing downstream reads this matching."""
    matched: dict[tuple[str, int], list[str]] = {}
    unmatched: list[str] = []
    questions = [(name, i, _words(q)) for name, qs in checklists.items() for i, q in enumerate(qs)]
    for answer in answers:
        said = _words(answer)
        best, best_score = None, 0.0
        for name, i, words in questions:
            score = len(words & said) / len(words) if words else 0.0
            if score > best_score:
                best, best_score = (name, i), score
        if best is None or best_score < 0.6:
            unmatched.append(answer)
            continue
        text, asked = answer, next(words for n, i, words in questions if (n, i) == best)
        for sep in ("->", "→"):
            head, found, tail = answer.partition(sep)
            if found and tail.strip() and len(asked & _words(head)) >= 0.6 * len(asked):
                text = tail.strip()
                break
        matched.setdefault(best, []).append(text)
    return matched, unmatched


def _questions(checklist: Sequence[str], matched: dict[tuple[str, int], list[str]], name: str) -> Text:
    if not checklist:
        return Text("(none)")
    text = Text()
    for i, question in enumerate(checklist):
        text.append(("\n" if i else "") + f"• {question}")
        for answer in matched.get((name, i), []):
            text.append(f"\n    → {answer}", style="cyan")
    return text


def tasks_table(tasks: dict[str, TaskSpec]) -> Table:
    table = Table(title="Declared tasks (programs/)")
    for col in ("task", "mode", "metric", "dataset", "description"):
        table.add_column(col)
    for name, spec in sorted(tasks.items()):
        source = spec.dataset.hub_id or "local files"
        table.add_row(name, spec.mode, spec.metric, source, spec.description)
    return table


def items_panels(spec: TaskSpec, items: Sequence[Item]) -> list[Panel]:
    panels = []
    for item in items:
        rows = [
            f"[bold]language[/] {item.language}"
            + (f" → {item.response_language}" if item.response_language else ""),
            f"[bold]label[/] {item.label}",
            f"[bold]instruction[/] {_clip(item.instruction)}",
        ]
        if item.mode == "pairwise":
            rows += [
                f"[bold]response A[/] {_clip(item.response_a)}",
                f"[bold]response B[/] {_clip(item.response_b)}",
            ]
        else:
            rows.append(f"[bold]response[/] {_clip(item.response)}")
        panels.append(Panel("\n".join(rows), title=f"{spec.name} · {item.id}"))
    return panels


def _clip(text: str | None, limit: int = 400) -> str:
    text = (text or "").replace("[", "\\[")
    return text if len(text) <= limit else text[:limit] + " …"


def summary_table(summary: dict[str, Any], title: str | None = None) -> Table:
    """The paper-style table: metric per language with its 95% CI, and what each item counted as.

    Per row, `items` = `n` (scored) + `unparsed` + `gold ties` (pairwise only) + `excluded` (errors and
    items without a gold label); no CI below 5 scored items. The caption names the pairwise position
    statistics in words; README.md ("Reading a run table") explains each number."""
    metric = summary["metric"]
    pairwise = "share_final_A" in summary
    table = Table(title=title or f"{summary['task']} · {', '.join(summary.get('methods', []))}")
    columns = ["language", metric, "95% CI", "items", "n", "unparsed"] + (["gold ties"] if pairwise else [])
    for col in [*columns, "excluded"]:
        table.add_column(col, justify="right" if col != "language" else "left")
    few = False

    def row(name: str, m: dict[str, Any]) -> None:
        nonlocal few
        c = m.get("counts") or {}
        if m.get("ci_low") is not None:
            ci = f"[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]"
        elif m["n"] < 5:
            ci, few = "n < 5", True
        else:
            ci = "—"
        cells = [name, _fmt(m["value"]), ci, _fmt(c.get("items")), str(m["n"]), _fmt(c.get("unparsed"))]
        if pairwise:
            cells.append(_fmt(c.get("gold_ties")))
        excluded = c.get("errors", 0) + c.get("no_label", 0) if c else m["n_excluded"]
        table.add_row(*cells, str(excluded))

    for lang, m in summary.get("per_language", {}).items():
        row(lang, m)
    if "overall" in summary:
        row("[bold]all items[/]", summary["overall"])
    blank = [""] * (len(columns) - 1)
    if summary.get("per_language"):
        table.add_row("[bold]average (macro)[/]", _fmt(summary.get("average")), *blank[1:])
    elif summary.get("dimensions"):
        table.add_row("(labels are per dimension: see the table below)", *blank)
    caption = [
        f"items {summary['n_items']}",
        f"unparsed {summary['n_unparsed']}",
        f"errors {summary['n_error']}",
    ]
    if few:
        caption.append("no CI below 5 scored items")
    if "position_consistency" in summary:
        consistency = _fmt(summary["position_consistency"]["value"])
        caption.append(f"position consistency {consistency} (same pick in both orders)")
    if pairwise:
        first = _fmt(summary["share_shown_A"]["value"])
        caption.append(f"picked the response shown first {first} (0.5: no position bias)")
        caption.append(
            f"final verdict A {_fmt(summary['share_final_A']['value'])}"
            + (f", tie {_fmt(summary['share_tie']['value'])}" if "share_tie" in summary else "")
        )
    usage = summary.get("usage", {})
    caption.append(f"LM calls/item {_fmt(usage.get('calls_per_item'), 1)}")
    table.caption = " · ".join(caption)
    return table


_WHY = {  # correlations take (judge, human): x is the judge's side
    "constant x: correlation undefined": "n/a, the judge gave every item the same score",
    "constant y: correlation undefined": "n/a, the human scores are all equal",
}


def _why(reason: str) -> str:
    return _WHY.get(reason, reason)


def dimension_tables(summary: dict[str, Any]) -> Table | None:
    dims = summary.get("dimensions")
    if not dims:
        return None
    table = Table(title="Correlation with humans per dimension (sample level | per document)")
    table.add_column("dimension")
    for name in ("spearman", "kendall", "pearson"):
        table.add_column(name, justify="right")
    for dim, row in dims.items():
        cells = [
            f"{_fmt(row[n]['value'])} | {_fmt((row.get(f'{n}_per_document') or {}).get('value'))}"
            for n in ("spearman", "kendall", "pearson")
        ]
        table.add_row(dim, *cells)
    # Say why a cell is n/a: "constant x" (the judge gave every item the same score) is a finding.
    reasons = {
        f"{dim}: {_why(row['spearman']['reason'])}" for dim, row in dims.items() if row["spearman"]["reason"]
    }
    per_doc = {(row.get("spearman_per_document") or {}).get("reason") for row in dims.values()} - {None}
    table.caption = "; ".join(sorted(reasons) + [f"per document: {r}" for r in sorted(per_doc)]) or None
    return table


def compare_table(cmp: dict[str, Any]) -> Table:
    """Two runs on their common items: metric of each, agreement between them, and the test's p-value."""
    a, b = cmp["runs"]
    table = Table(title=f"{cmp['task']}: A = {a['method']} ({a['lm']}) vs B = {b['method']} ({b['lm']})")
    for col in ("language", "n", f"{cmp['metric']} A", f"{cmp['metric']} B", "agreement A~B", "test", "p"):
        table.add_column(col, justify="left" if col == "language" else "right")
    for row in cmp["rows"]:
        test = row["test"]
        table.add_row(
            row["language"],
            str(row["n"]),
            _fmt(row["a"]["value"]),
            _fmt(row["b"]["value"]),
            _fmt(row["agreement"]["value"]),
            test["name"],
            _fmt(test.get("p_value")),
        )
    table.caption = (
        f"common items {cmp['common_items']} · only in A {cmp['only_a']} · only in B {cmp['only_b']}"
    )
    return table


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)
