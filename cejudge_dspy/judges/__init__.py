"""The judging methods as DSPy programs: CE-Judge, the direct baseline, CheckEval and its G-Eval baseline,
their shared stage machinery, and saved (tuned) programs. No files are written here except by
`save_program`, nothing is printed, and no LM is chosen: the caller makes one current with `dspy.context`."""

from cejudge_dspy.judges._direct import DirectPairwiseJudge, DirectPointwiseJudge
from cejudge_dspy.judges._fingerprint import prompt_fingerprint
from cejudge_dspy.judges._formatting import memo_adapter
from cejudge_dspy.judges._geval import GEvalJudge
from cejudge_dspy.judges._options import JudgeOptions, Option
from cejudge_dspy.judges._registry import (
    METHODS,
    build_program,
    load_program,
    method_names,
    program_for_task,
    run_program,
    run_program_identity,
)
from cejudge_dspy.judges._runtime import judging_run, keep_history, quiet_history
from cejudge_dspy.judges._saved import (
    auto_choice,
    default_path,
    manifest_path,
    program_identity,
    read_manifest,
    save_program,
)
from cejudge_dspy.judges._stages import Stage, StageFailure

__all__ = [
    "DirectPairwiseJudge",
    "DirectPointwiseJudge",
    "GEvalJudge",
    "JudgeOptions",
    "Option",
    "METHODS",
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
    "prompt_fingerprint",
    "quiet_history",
    "read_manifest",
    "run_program",
    "run_program_identity",
    "save_program",
]
