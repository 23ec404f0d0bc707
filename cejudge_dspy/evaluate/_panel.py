"""A panel's run: its members checked before anything is written (options on the task, backbone spec and
method on that backbone, each failure one line naming the member), the panel judge, what its run identity
says in place of one judge's, and its members' backbones for the judging block. `evaluate` and
`cejudge judge` both use these."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.judges.panel import PanelMember
from cejudge_dspy.tasks import TaskSpec


def member_backbone(backbone: BackboneOptions, member: PanelMember) -> BackboneOptions:
    """The run's backbone settings with the member's own backbone, server, key and adapter."""
    return replace(
        backbone,
        lm=member.lm,
        api_base=member.api_base,
        api_key=member.api_key,
        adapter=member.adapter or backbone.adapter,
    )


def check_panel(
    spec: TaskSpec, members: Sequence[PanelMember], backbone: BackboneOptions, source: str = "panel"
) -> None:
    """Each member's options, backbone and method, checked without loading a model: one line naming the
    member (and `source`, the panel file) for the first that fails."""
    from cejudge_dspy.backbones import check_backbone
    from cejudge_dspy.evaluate._checks import check_api_key
    from cejudge_dspy.judges import check_method_backbone
    from cejudge_dspy.judges.panel import check_members

    check_members(members, spec, source)
    for m in members:
        try:
            check_backbone(m.lm, **member_backbone(backbone, m).kwargs())
            check_api_key(m.lm, m.api_key, m.api_base)
            check_method_backbone(m.method, m.lm, m.api_base)
        except CEJudgeError as exc:
            raise type(exc)(f"{source}: member '{m.name}': {exc}") from None


def build_panel(
    spec: TaskSpec, members: Sequence[PanelMember], tie_band: float, source: str = "panel"
) -> tuple[Any, list[dict[str, Any]]]:
    """The panel judge (each member's program as `run_program` builds it) and run.json's `panel`."""
    from cejudge_dspy.judges import prompt_fingerprint, run_program, run_program_identity
    from cejudge_dspy.judges.panel import PanelJudge

    built, identity = [], []
    for m in members:
        try:
            program = run_program(spec.name, options=m.options)
        except CEJudgeError as exc:
            raise type(exc)(f"{source}: member '{m.name}': {exc}") from None
        label = run_program_identity(spec.name, m.method, m.options.program)
        built.append((m, program))
        identity.append(m.identity(spec, label, prompt_fingerprint(program)))
    return PanelJudge(built, spec.mode, tie_band), identity


def panel_identity(
    members: Sequence[PanelMember], panel: list[dict[str, Any]], backbone: BackboneOptions
) -> dict[str, Any]:
    """What a panel run's identity says in place of one judge's: `method` and `program` "panel", `lm` the
    members' backbones, and `panel` each member's own identity (so a changed panel never resumes)."""
    from cejudge_dspy.backbones import is_local

    lms = list(dict.fromkeys(m.lm for m in members))
    local = any(is_local(lm) for lm in lms)
    return {
        "method": "panel",
        "lm": " + ".join(lms),
        "repeat_penalty": float(backbone.repeat_penalty) if local else None,
        "panel": panel,
    }


@contextmanager
def panel_backbone(
    members: Sequence[PanelMember], backbone: BackboneOptions, on_status: Any = None
) -> Iterator[Any]:
    """Build each distinct member backbone once and make them the panel's for the block; the first
    member's is also the current LM and adapter (what a record's `features` describe)."""
    import dspy

    from cejudge_dspy.backbones import make_lm, preferred_adapter
    from cejudge_dspy.judges import memo_adapter
    from cejudge_dspy.judges.panel import panel_backbones

    # One LM per (lm, api_base), however many adapters its members ask in: a local model loads once.
    lms: dict[tuple[str, str | None], Any] = {}
    backbones: dict[tuple[str, str | None, str], tuple[Any, Any]] = {}
    for m in members:
        if m.backbone in backbones:
            continue
        options = member_backbone(backbone, m).kwargs()
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
