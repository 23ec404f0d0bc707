"""`PanelJudge`: every member judges the item, each on its own backbone, and `combine` gives the panel's
result.

Programs hold no LM (the package's rule): the caller makes the members' backbones current for the run with
`panel_backbones({member.backbone: (lm, adapter)})`, and each member judges under `dspy.context(lm=...)`
of its own. A member whose backbone is not given judges on the current LM. Members run concurrently, the
CE-Judge members sharing one memo of stage results (`_share_work`). One that errors is recorded with its
error and the panel decides from the others, while an unreachable backbone stops the run (every item would
fail), as it does for a single judge.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, Literal

import dspy

from cejudge_dspy.backbones import error_line, explain_backbone_error
from cejudge_dspy.errors import BackboneError
from cejudge_dspy.judges._machinery._backbone_features import backbone_features
from cejudge_dspy.judges._machinery._shared_work import SharedWork
from cejudge_dspy.judges._machinery._sync_bridge import run_sync
from cejudge_dspy.judges.panel._combine import MemberOutcome, combine
from cejudge_dspy.judges.panel._members import PanelMember
from cejudge_dspy.judges.verdicts import DEFAULT_TIE_BAND

# (lm, adapter or None) per member backbone (`PanelMember.backbone`), for the block of `panel_backbones`.
Backbones = Mapping[tuple[str, str | None, str], tuple[Any, Any]]
_backbones: ContextVar[Backbones | None] = ContextVar("panel_backbones", default=None)


@contextmanager
def panel_backbones(backbones: Backbones) -> Iterator[None]:
    """Make the members' backbones current for the block (see the module docstring)."""
    token = _backbones.set(backbones)
    try:
        yield
    finally:
        _backbones.reset(token)


def panel_lms() -> list[Any]:
    """The members' LMs of the enclosing `panel_backbones` block (none outside one): the runner redacts
    each one's API key from the records."""
    return [lm for lm, _ in (_backbones.get() or {}).values()]


class PanelJudge(dspy.Module):
    """A judge whose members are (backbone, method, options) triples with their programs."""

    def __init__(
        self,
        members: Sequence[tuple[PanelMember, dspy.Module]],
        mode: Literal["pairwise", "pointwise"],
        tie_band: float = DEFAULT_TIE_BAND,
    ) -> None:
        super().__init__()
        self.member_specs = [m for m, _ in members]
        # A list attribute: DSPy finds the members' predictors under it (named_predictors, fingerprints).
        self.members = [p for _, p in members]
        self.mode = mode
        self.tie_band = tie_band
        _share_work(self.members)

    async def aforward(self, **inputs: Any) -> dspy.Prediction:
        outcomes = await asyncio.gather(
            *(self._judge(m, p, inputs) for m, p in zip(self.member_specs, self.members, strict=True))
        )
        result = combine(self.mode, outcomes, self.tie_band)
        return dspy.Prediction(result=result, members=[o.to_dict() for o in outcomes])

    def forward(self, **inputs: Any) -> dspy.Prediction:
        return run_sync(self.aforward(**inputs))

    async def _judge(
        self, member: PanelMember, program: dspy.Module, inputs: dict[str, Any]
    ) -> MemberOutcome:
        backbone = (_backbones.get() or {}).get(member.backbone)
        if backbone is None:
            scope: Any = nullcontext()
        else:
            lm, adapter = backbone
            scope = dspy.context(lm=lm, **({"adapter": adapter} if adapter else {}))
        start = time.monotonic()
        with scope:
            try:
                pred = await program.acall(**inputs)
                outcome = MemberOutcome(member.name, pred.result.status, pred.result)
            except BackboneError:
                raise
            except Exception as exc:  # the member's error; the panel decides from the others
                explained = explain_backbone_error(exc, member.lm, api_base=member.api_base)
                if explained is not None:
                    raise explained from exc
                reason = f"{type(exc).__name__}: {error_line(exc)}"  # one line, no client traceback
                outcome = MemberOutcome(member.name, "error", None, error=reason)
            outcome.features = backbone_features(dspy.settings.lm, dspy.settings.adapter)  # this member's
        outcome.seconds = round(time.monotonic() - start, 3)
        return outcome


def _share_work(programs: Sequence[dspy.Module]) -> None:
    """One `SharedWork` memo for every member program that keeps one (CE-Judge's): members run concurrently,
    so two asking the same stage the same thing would both reach the backbone before DSPy's cache held the
    answer; the memo's key names the stage's prompt and the LM, so only identical calls on one backbone
    are shared (the second member records them as `reused`)."""
    shared = [p for p in programs if isinstance(getattr(p, "shared", None), SharedWork)]
    for program in shared[1:]:
        program.shared = shared[0].shared
