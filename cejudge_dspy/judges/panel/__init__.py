"""Panels: several judges for one run. A member is a (backbone, method, options) triple (`PanelMember`),
from repeated `--lm`/`--method` flags or a panel file; `PanelJudge` has every member judge each item on its
own backbone and `combine` gives the panel's verdict (majority, with "no majority" its own outcome; the mean
of the members' p(A) or scores) and the item's agreement. The run-level statistics (stacking, kappa, alpha,
paired tests) are `cejudge_dspy.metrics.panel_summary`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Lazy like the judges' face: the CLI reads panel files without importing DSPy.
if TYPE_CHECKING:
    from cejudge_dspy.judges.panel._combine import (
        NO_MAJORITY,
        MemberOutcome,
        agreement_share,
        combine,
        majority,
        vote_entropy,
    )
    from cejudge_dspy.judges.panel._judge import PanelJudge, panel_backbones, panel_lms
    from cejudge_dspy.judges.panel._members import (
        PanelMember,
        check_members,
        check_names,
        members_from_flags,
        read_panel_file,
    )

_WHERE = {
    "NO_MAJORITY": "_combine",
    "MemberOutcome": "_combine",
    "agreement_share": "_combine",
    "combine": "_combine",
    "majority": "_combine",
    "vote_entropy": "_combine",
    "PanelJudge": "_judge",
    "panel_backbones": "_judge",
    "panel_lms": "_judge",
    "PanelMember": "_members",
    "check_members": "_members",
    "check_names": "_members",
    "members_from_flags": "_members",
    "read_panel_file": "_members",
}


def __getattr__(name: str) -> Any:
    import importlib

    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "NO_MAJORITY",
    "MemberOutcome",
    "PanelJudge",
    "PanelMember",
    "agreement_share",
    "check_members",
    "check_names",
    "combine",
    "majority",
    "members_from_flags",
    "panel_backbones",
    "panel_lms",
    "read_panel_file",
    "vote_entropy",
]
