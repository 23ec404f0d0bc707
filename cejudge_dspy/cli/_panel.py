"""Panels on the command line: repeated `--lm` / `--method` (every pairing a member) or `--panel FILE`, read
into the members (`panel_members`; None: one judge, as before), and `cejudge judge` with a panel. The
checks, the panel judge and its backbones are the library's (`cejudge_dspy.evaluate`)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.tasks import TaskSpec

if TYPE_CHECKING:  # the flags are built without DSPy
    from cejudge_dspy.backbones import BackboneOptions
    from cejudge_dspy.judges.panel import PanelMember


def add_panel_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--panel",
        default=None,
        metavar="FILE",
        help="judge with a panel: a TOML file of [[member]] tables, each with its lm (and api_base, "
        'api_key, adapter, name) and judge options by name (method = "direct"); repeating --lm or --method '
        "instead makes every pairing a member (docs/how-to/judge-with-a-panel.md)",
    )


def panel_members(
    args: argparse.Namespace, methods: list[str], judge: JudgeOptions, backbone: BackboneOptions
) -> list[PanelMember] | None:
    """The members the flags name (a panel file's or every pairing of repeated --lm/--method), with the
    command's server, key and adapter where a member has none; None for one judge."""
    from cejudge_dspy.judges.panel import check_names, members_from_flags, read_panel_file

    lms = list(dict.fromkeys(args.lm_all or [backbone.lm]))
    if args.panel:
        if len(lms) > 1 or len(methods) > 1:
            raise InputError("names the members; drop the repeated --lm/--method", field="--panel")
        members = read_panel_file(args.panel, judge, backbone.lm)
    elif len(lms) > 1 or len(methods) > 1:
        members = members_from_flags(lms, methods, judge)
        check_names(members, "--lm/--method")
    else:
        return None
    return [
        replace(
            m,
            api_base=m.api_base or backbone.api_base,
            api_key=m.api_key or backbone.api_key,
            adapter=m.adapter or backbone.adapter,
        )
        for m in members
    ]


def judge_with_panel(
    args: argparse.Namespace,
    spec: TaskSpec,
    items: list[Any],
    members: list[PanelMember],
    judge: JudgeOptions,
    backbone: BackboneOptions,
) -> int:
    """`cejudge judge` with a panel: each item judged by every member, then each member's verdict and the
    panel's votes printed (or, with --json, the panel's result with its `members`)."""
    import json
    import time

    from cejudge_dspy.cli._progress import JudgeDisplay, live
    from cejudge_dspy.cli.display import console, verdict_panel, votes_table
    from cejudge_dspy.evaluate import build_panel, check_panel, panel_backbone
    from cejudge_dspy.judges.verdicts import JudgeResult
    from cejudge_dspy.usage import clock, on_progress

    source = str(args.panel) if args.panel else "panel"
    check_panel(spec, members, backbone, source)
    program, _ = build_panel(spec, members, judge.tie_band, source)
    out, err = console(), console(stderr=True)
    display = JudgeDisplay(err, len(items))
    results = []
    with (
        live(err, display, transient=True),
        panel_backbone(members, backbone, display.update),
        on_progress(display.on_stage),
    ):
        for n, item in enumerate(items, 1):
            display.start_item(n)
            started = time.monotonic()
            pred = program(**item.inputs())
            results.append((item, pred.result, pred.members))
            err.print(
                f"item {n}/{len(items)} judged by the panel in {clock(time.monotonic() - started)}",
                style="dim",
            )
    for item, result, outcomes in results:
        item_id = item.id if len(items) > 1 else None
        if args.json:
            row = {"id": item.id, **result.to_dict(), "members": outcomes}
            out.print_json(json.dumps(row, ensure_ascii=False))
            continue
        for m in outcomes:
            if m.get("result"):
                out.print(
                    verdict_panel(JudgeResult.from_dict(m["result"]), spec, f"member {m['name']}", item)
                )
        out.print(votes_table(result, outcomes, item_id))
    return 0 if all(r.ok for _, r, _ in results) else 1
