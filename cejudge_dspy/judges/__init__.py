"""The judging methods as DSPy programs: CE-Judge, the direct baseline, CheckEval and its G-Eval baseline,
the likelihood judge, their shared stage machinery, and saved (tuned) programs. No files are written here
except by `save_program`, nothing is printed, and no LM is chosen: the caller makes one current with
`dspy.context`."""

import lazy_loader

# The face is lazy (lazy_loader.attach): a name is imported on first use, so that the CLI builds its
# flags without importing DSPy (`cejudge --help` answers at once; tests/cli/test_startup.py), and dir()
# lists every name. One list: the module that holds each public name.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_choices": ["ADAPTER_CHOICES"],
        "_direct": ["DirectPairwiseJudge", "DirectPointwiseJudge"],
        "_features": ["FEATURES", "backbone_features", "combined_features", "missing_features"],
        "_fingerprint": ["prompt_fingerprint"],
        "_formatting": ["memo_adapter"],
        "_geval": ["GEvalJudge"],
        "_likelihood_judge": ["LikelihoodPairwiseJudge"],
        "_options": ["JudgeOptions", "Option"],
        "_registry": [
            "METHODS",
            "SCORING_METHODS",
            "build_program",
            "check_method_backbone",
            "load_program",
            "method_names",
            "program_for_task",
            "run_program",
            "run_program_identity",
        ],
        "_runtime": ["judging_run", "keep_history", "quiet_history"],
        "_saved": [
            "auto_choice",
            "default_path",
            "manifest_path",
            "program_identity",
            "read_manifest",
            "save_program",
        ],
        "_stages": ["Stage", "StageFailure"],
    },
)
