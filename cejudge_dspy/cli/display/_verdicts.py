"""Verdict panels: which response won in plain words, each order in terms of the original responses,
and the checklist answers under the questions they answer (_answers.py places them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from cejudge_dspy.cli.display._answers import match_answers, questions_with_answers
from cejudge_dspy.cli.display._text import _bullets, _fmt
from cejudge_dspy.tasks import TaskSpec

if TYPE_CHECKING:  # annotations only: `cejudge tasks` lists tasks without importing DSPy
    from cejudge_dspy.data import Item
    from cejudge_dspy.judges.verdicts import JudgeResult


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
        parts = [pointwise_score(result, spec), *reference_line(result, "translation"), Text("")]
    if (line := probability_line(result)) is not None:
        parts[-1:-1] = [line]
    feedback_from = " (A shown first)" if result.mode == "pairwise" and len(result.orders) > 1 else ""
    if result.grades and not result.orders:
        feedback_from = " (each response graded on its own)"
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
            questions_with_answers(checklist, matched, name),
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
    if result.mode == "pairwise" and result.method == "likelihood":  # the judge is the likelihood alone
        liked = result.details.get("likelihood") or {}
        text = (
            f"Probabilities: p(A) {probs.p_a:.3f} = sigmoid(mean token log probability of A - that of B: "
            f"{liked.get('mean_a', float('nan')):.2f} - {liked.get('mean_b', float('nan')):.2f}) -> "
            f"{probs.verdict}, confidence {probs.confidence:.3f}, tie band {probs.tie_band:g}; argmax "
            f"verdict {argmax.verdict if argmax else result.verdict}; {decided}"
        )
    elif result.mode == "pairwise" and result.decided_by.get(result.decision) == "grades":
        values = ", ".join(
            f"{k.upper()} {g.p_value:.3f}" for k, g in result.grades.items() if g.p_value is not None
        )
        text = (
            f"Probabilities: p(A) {probs.p_a:.3f} = 0.5 + (expected grade A - B) / 2 (expected grades "
            f"{values}) -> {probs.verdict}, confidence {probs.confidence:.3f}; argmax verdict "
            f"{argmax.verdict if argmax else result.verdict}; {decided}"
        )
    elif result.mode == "pairwise" and result.decided_by.get(result.decision) == "likelihood":
        liked = result.details.get("likelihood") or {}
        text = (
            f"Probabilities: p(A) {probs.p_a:.3f} = sigmoid(mean token log probability of A - that of B: "
            f"{liked.get('mean_a', float('nan')):.2f} - {liked.get('mean_b', float('nan')):.2f}), the "
            f"grades being within the margin -> {probs.verdict}, confidence {probs.confidence:.3f}; argmax "
            f"verdict {argmax.verdict if argmax else result.verdict}; {decided}"
        )
    elif result.mode == "pairwise":
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
    elif probs.dimension_scores and result.method == "geval":
        dims = ", ".join(f"{k} {v:.2f}" for k, v in probs.dimension_scores.items())
        kept = ", ".join(f"{k} {v}" for k, v in (argmax.dimension_scores if argmax else {}).items())
        text = f"Probabilities: expected score per dimension {dims}; argmax levels {kept}; {decided}"
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
        if result.method == "likelihood":
            head.append(
                ": as its own answer to the instruction the backbone finds it the more likely (each response "
                "scored on its own; no presentation order was involved)."
            )
        elif result.grades and not result.orders and result.decided_by.get(result.decision) == "likelihood":
            head.append(
                ": the two responses' grades were too close to decide, and the judge finds it the more "
                "likely answer to the instruction; no presentation order was involved."
            )
        elif result.grades and not result.orders:
            head.append(
                ": the two responses were graded on their own, so no presentation order was involved."
            )
        elif len(picks) <= 1:
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
    lines = [head, *grade_lines(result, item)]
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


def grade_lines(result: JudgeResult, item: Item | None = None) -> list[Text]:
    """One line per response grade (`A ("9") graded alone: no, expected grade 0.12`), and why the
    orders ran when they did."""
    lines = reference_line(result, "answer")
    for name, grade in result.grades.items():
        said = grade.label if grade.label is not None else f"no grade ({grade.error})"
        value = f", expected grade {grade.p_value:.2f}" if grade.p_value is not None else ""
        lines.append(Text(f"  {name.upper()}{_quoted(item, name)} graded alone: {said}{value}"))
    if result.grades and result.orders:
        lines.append(
            Text("  the grades do not separate the two, so the pairwise judgment decided:", style="dim")
        )
    return lines


def reference_line(result: JudgeResult, what: str) -> list[Text]:
    """`the judge's own answer, written first: "24"` for a --reference run (none for others)."""
    reference = result.details.get("reference")
    if not reference:
        return []
    answer = reference.get("answer")
    said = f'"{answer}"' if answer else f"none ({reference.get('error')})"
    return [Text(f"  the judge's own {what}, written first: {said}", style="dim")]


def pointwise_score(result: JudgeResult, spec: TaskSpec) -> Text:
    """`Score: 5 / 7: <what level 5 means on the task's scale>`; CheckEval: the share of Yes."""
    if result.method == "checkeval":
        head = Text(f"Score: {_fmt(result.score)} (share of Yes answers, 0 to 1)", style="bold green")
    elif result.method == "geval":
        _, hi = spec.scale_range if spec.scale else (1, 5)
        head = Text(f"Score: {_fmt(result.score)} / {hi} (mean over the dimensions)", style="bold green")
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
