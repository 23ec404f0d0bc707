"""The likelihood judge: a pair decided by the backbone's own mean token log probability of each response,
no judgment call (`--method likelihood`, on a backbone that scores a given text)."""

from cejudge_dspy.judges.likelihood._judge import (
    SCORING_BACKBONES,
    LikelihoodPairwiseJudge,
    likelihood_program,
)

__all__ = ["SCORING_BACKBONES", "LikelihoodPairwiseJudge", "likelihood_program"]
