"""The judging methods as DSPy programs: CE-Judge, the direct baseline, CheckEval and its G-Eval baseline,
their shared stage machinery, and saved (tuned) programs. No files are written here except by
`save_program`, nothing is printed, and no LM is chosen: the caller makes one current with `dspy.context`."""

from cejudge_dspy.methods.cejudge import PairwiseJudge, PointwiseJudge, reference_default
from cejudge_dspy.methods.cejudge.tiebreak import DEFAULT_TIE_BREAKER, TIE_BREAKERS
from cejudge_dspy.methods.checkeval import CheckEvalJudge, Checklist
from cejudge_dspy.methods.direct import DirectPairwiseJudge, DirectPointwiseJudge
from cejudge_dspy.methods.formatting import memo_adapter
from cejudge_dspy.methods.geval import GEvalJudge
from cejudge_dspy.methods.registry import (
    METHODS,
    build_program,
    load_program,
    method_names,
    program_for_task,
    run_program,
    run_program_identity,
)
from cejudge_dspy.methods.runtime import judging_run, keep_history, quiet_history
from cejudge_dspy.methods.saved import (
    auto_choice,
    default_path,
    manifest_path,
    program_identity,
    read_manifest,
    save_program,
)
from cejudge_dspy.methods.stages import Stage, StageFailure

__all__ = [
    "DEFAULT_TIE_BREAKER",
    "METHODS",
    "TIE_BREAKERS",
    "CheckEvalJudge",
    "Checklist",
    "DirectPairwiseJudge",
    "DirectPointwiseJudge",
    "GEvalJudge",
    "PairwiseJudge",
    "PointwiseJudge",
    "Stage",
    "StageFailure",
    "auto_choice",
    "build_program",
    "default_path",
    "judging_run",
    "keep_history",
    "load_program",
    "manifest_path",
    "memo_adapter",
    "method_names",
    "program_for_task",
    "program_identity",
    "quiet_history",
    "read_manifest",
    "reference_default",
    "run_program",
    "run_program_identity",
    "save_program",
]
