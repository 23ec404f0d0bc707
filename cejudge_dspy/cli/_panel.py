"""Panels on the command line: repeated `--lm` / `--method` (every pairing a member) or `--panel FILE`, the
members' checks before anything is written, their backbones, the panel judge and its run identity.

`panel_members` says whether a command's flags name a panel at all (None: one judge, as before). Everything
is checked before a run directory opens (`check_panel`): each member's options on the task, its backbone
spec and its method on that backbone, each failure one line naming the member.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._common import adapter_choice, backbone_options, check_key, repeat_penalty
from cejudge_dspy.cli._program_args import judge_options
from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import TaskSpec

if TYPE_CHECKING:  # the flags are built without DSPy
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


def panel_members(args: argparse.Namespace) -> list[PanelMember] | None:
    """The members the flags name (a panel file's or every pairing of repeated --lm/--method), with the
    command's --api-base/--api-key/--adapter where a member has none; None for one judge."""
    from cejudge_dspy.judges.panel import check_names, members_from_flags, read_panel_file

    lms = list(dict.fromkeys(getattr(args, "lm_all", None) or [args.lm]))
    methods = list(dict.fromkeys(getattr(args, "method_all", None) or [args.method]))
    path = getattr(args, "panel", None)
    if path:
        if len(lms) > 1 or len(methods) > 1:
            raise InputError("names the members; drop the repeated --lm/--method", field="--panel")
        members = read_panel_file(path, judge_options(args), args.lm)
    elif len(lms) > 1 or len(methods) > 1:
        members = members_from_flags(lms, methods, judge_options(args))
        check_names(members, "--lm/--method")
    else:
        return None
    return [
        replace(
            m,
            api_base=m.api_base or args.api_base,
            api_key=m.api_key or args.api_key,
            adapter=m.adapter or adapter_choice(args),
        )
        for m in members
    ]


def _source(args: argparse.Namespace) -> str:
    return str(args.panel) if getattr(args, "panel", None) else "panel"


def check_panel(args: argparse.Namespace, spec: TaskSpec, members: list[PanelMember]) -> None:
    """Each member's options, backbone and method, checked without loading a model: one line naming the
    member (and the panel file) for the first that fails."""
    from cejudge_dspy.backbones import check_backbone
    from cejudge_dspy.errors import CEJudgeError
    from cejudge_dspy.judges import check_method_backbone
    from cejudge_dspy.judges.panel import check_members

    if getattr(args, "ray", None) is not None:
        raise InputError("judges one judge per run; run a panel without --ray", field="--ray")
    check_members(members, spec, _source(args))
    for m in members:
        try:
            check_backbone(m.lm, **member_backbone_options(args, m))
            check_key(m.lm, m.api_key, m.api_base)
            check_method_backbone(m.method, m.lm, m.api_base)
        except CEJudgeError as exc:
            raise type(exc)(f"{_source(args)}: member '{m.name}': {exc}") from None


def member_backbone_options(args: argparse.Namespace, member: PanelMember) -> dict[str, Any]:
    """The command's backbone flags with the member's own server, key and adapter."""
    return backbone_options(args) | {
        "api_base": member.api_base,
        "api_key": member.api_key,
        "adapter": member.adapter or adapter_choice(args),
    }


def build_panel(
    args: argparse.Namespace, spec: TaskSpec, members: list[PanelMember]
) -> tuple[Any, list[dict[str, Any]]]:
    """The panel judge (each member's program as `run_program` builds it) and run.json's `panel`."""
    from cejudge_dspy.errors import CEJudgeError
    from cejudge_dspy.judges import prompt_fingerprint, run_program, run_program_identity
    from cejudge_dspy.judges.panel import PanelJudge

    built, identity = [], []
    for m in members:
        try:
            program = run_program(spec.name, options=m.options)
        except CEJudgeError as exc:
            raise type(exc)(f"{_source(args)}: member '{m.name}': {exc}") from None
        label = run_program_identity(spec.name, m.method, m.options.program)
        built.append((m, program))
        identity.append(m.identity(spec, label, prompt_fingerprint(program)))
    return PanelJudge(built, spec.mode, judge_options(args).tie_band), identity


def panel_identity(
    args: argparse.Namespace, members: list[PanelMember], panel: list[dict[str, Any]]
) -> dict[str, Any]:
    """What a panel run's identity says in place of one judge's: `method` and `program` "panel", `lm` the
    members' backbones, and `panel` each member's own identity (so a changed panel never resumes)."""
    from cejudge_dspy.backbones import is_local

    lms = list(dict.fromkeys(m.lm for m in members))
    return {
        "method": "panel",
        "lm": " + ".join(lms),
        "repeat_penalty": None if not any(is_local(lm) for lm in lms) else repeat_penalty(args),
        "panel": panel,
    }


@contextmanager
def panel_backbone(args: argparse.Namespace, members: list[PanelMember], status: Any = None) -> Iterator[Any]:
    """Build each distinct member backbone once and make them the panel's for the block; the first
    member's is also the current LM and adapter (what a record's `features` describe)."""
    import dspy

    from cejudge_dspy.backbones import make_lm, preferred_adapter
    from cejudge_dspy.judges import memo_adapter
    from cejudge_dspy.judges.panel import panel_backbones

    def on_status(message: str) -> None:
        if status is not None:
            status.update(message)

    # One LM per (lm, api_base), however many adapters its members ask in: a local model loads once.
    lms: dict[tuple[str, str | None], Any] = {}
    backbones: dict[tuple[str, str | None, str], tuple[Any, Any]] = {}
    for m in members:
        if m.backbone in backbones:
            continue
        options = member_backbone_options(args, m)
        if (m.lm, m.api_base) not in lms:
            lms[m.lm, m.api_base] = make_lm(m.lm, on_status=on_status, **options)
        # Every member gets an adapter of its own, never None: a member on DSPy's default would judge in
        # whatever adapter the block around it has (the first member's). Memoised as a judging run's is
        # (`judges.memo_adapter`; the same prompts, formatted once per signature).
        adapter = memo_adapter(preferred_adapter(m.lm, options["adapter"]))
        backbones[m.backbone] = (lms[m.lm, m.api_base], adapter)
    first_lm, first_adapter = backbones[members[0].backbone]
    with panel_backbones(backbones), dspy.context(lm=first_lm, adapter=first_adapter):
        yield first_lm


def judge_with_panel(
    args: argparse.Namespace, spec: TaskSpec, items: list[Any], members: list[PanelMember]
) -> int:
    """`cejudge judge` with a panel: each item judged by every member, then each member's verdict and the
    panel's votes printed (or, with --json, the panel's result with its `members`)."""
    import json
    import time

    from cejudge_dspy.cli._progress import JudgeDisplay, live
    from cejudge_dspy.cli.display import console, verdict_panel, votes_table
    from cejudge_dspy.judges.verdicts import JudgeResult
    from cejudge_dspy.usage import clock, on_progress

    check_panel(args, spec, members)
    program, _ = build_panel(args, spec, members)
    out, err = console(), console(stderr=True)
    display = JudgeDisplay(err, len(items))
    results = []
    with (
        live(err, display, transient=True),
        panel_backbone(args, members, display),
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
