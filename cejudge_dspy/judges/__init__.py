"""The judging methods as DSPy programs: CE-Judge, the direct baseline, CheckEval and its G-Eval baseline,
the likelihood judge, their shared stage machinery, and saved (tuned) programs. No files are written here
except by `save_program`, nothing is printed, and no LM is chosen: the caller makes one current with
`dspy.context`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The face is lazy: a name is imported on first use, so that the CLI builds its flags from JudgeOptions
# without importing DSPy (`cejudge --help` answers at once; tests/cli/test_startup.py). The imports below
# are the face's list of names, read by `__getattr__`; add a name there and to __all__.
if TYPE_CHECKING:
    from cejudge_dspy.judges._choices import ADAPTER_CHOICES
    from cejudge_dspy.judges._direct import DirectPairwiseJudge, DirectPointwiseJudge
    from cejudge_dspy.judges._features import FEATURES, backbone_features, combined_features, missing_features
    from cejudge_dspy.judges._fingerprint import prompt_fingerprint
    from cejudge_dspy.judges._formatting import memo_adapter
    from cejudge_dspy.judges._geval import GEvalJudge
    from cejudge_dspy.judges._likelihood_judge import LikelihoodPairwiseJudge
    from cejudge_dspy.judges._options import JudgeOptions, Option
    from cejudge_dspy.judges._registry import (
        METHODS,
        SCORING_METHODS,
        build_program,
        check_method_backbone,
        load_program,
        method_names,
        program_for_task,
        run_program,
        run_program_identity,
    )
    from cejudge_dspy.judges._runtime import judging_run, keep_history, quiet_history
    from cejudge_dspy.judges._saved import (
        auto_choice,
        check_save_path,
        default_path,
        manifest_path,
        program_identity,
        read_manifest,
        save_program,
    )
    from cejudge_dspy.judges._stages import Stage, StageFailure
    from cejudge_dspy.judges._sync import run_sync


def __getattr__(name: str) -> Any:
    import importlib

    module = _where().get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found once
    return value


def _where() -> dict[str, str]:
    """name -> module, from the TYPE_CHECKING imports above (parsed once)."""
    global _WHERE
    if _WHERE is None:
        import ast
        from pathlib import Path

        tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
        block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
        _WHERE = {a.name: n.module for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}
    return _WHERE


_WHERE: dict[str, str] | None = None

__all__ = [
    "ADAPTER_CHOICES",
    "FEATURES",
    "DirectPairwiseJudge",
    "DirectPointwiseJudge",
    "GEvalJudge",
    "LikelihoodPairwiseJudge",
    "JudgeOptions",
    "Option",
    "METHODS",
    "SCORING_METHODS",
    "Stage",
    "StageFailure",
    "auto_choice",
    "backbone_features",
    "build_program",
    "check_method_backbone",
    "combined_features",
    "default_path",
    "judging_run",
    "keep_history",
    "load_program",
    "manifest_path",
    "memo_adapter",
    "missing_features",
    "method_names",
    "program_for_task",
    "program_identity",
    "prompt_fingerprint",
    "quiet_history",
    "read_manifest",
    "run_program",
    "run_program_identity",
    "check_save_path",
    "run_sync",
    "save_program",
]
