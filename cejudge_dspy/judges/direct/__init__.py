"""The direct baseline: one judgment call on the same backbone, no concepts, translations or checklists
(`--method direct`), pointwise and pairwise."""

from cejudge_dspy.judges.direct._judge import DirectPairwiseJudge, DirectPointwiseJudge, direct_program

__all__ = ["DirectPairwiseJudge", "DirectPointwiseJudge", "direct_program"]
