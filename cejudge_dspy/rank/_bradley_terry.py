"""Bradley-Terry strengths from pairwise outcomes, fitted with choix, and their bootstrap over prompts.

Model: P(i beats j) = exp(theta_i) / (exp(theta_i) + exp(theta_j)); the strengths are log-strengths,
centred on 0. The fit is choix's `ilsr_pairwise_dense` (iterative Luce spectral ranking: the maximum
likelihood estimate, Maystre and Grossglauser 2015) on the matrix of points each system took from each
other. Ties count as half a win for each side: a tie adds 0.5 to both cells of its pair, so the likelihood
is exactly the half-win one. `alpha` initialises the rates of choix's Markov chain (its regularisation:
loosely, a Beta prior on each pair's outcome), which keeps a system that won every comparison, or one never
compared, at a finite strength; alpha=0 gives the plain maximum likelihood where it exists.

The intervals resample prompts (with replacement), keep every comparison of each drawn prompt as often as
it was drawn, refit, and take the 2.5th and 97.5th percentiles of each strength.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cejudge_dspy.errors import CEJudgeError

# Small beside one comparison's weight: the data decide the ranking; a clean sweep stays finite.
DEFAULT_ALPHA = 0.01


@dataclass(frozen=True)
class Outcome:
    """One judged comparison: `score` is what `first` earned against `second` (1, 0.5 for a tie, 0)."""

    prompt: str
    first: str
    second: str
    score: float


def _choix() -> Any:
    try:
        import choix
    except ImportError:
        raise CEJudgeError(
            "ranking systems fits Bradley-Terry strengths with choix, a dependency of cejudge-dspy: "
            "pip install 'choix>=0.4,<0.5'"
        ) from None
    return choix


def points(systems: Sequence[str], outcomes: Sequence[Outcome]) -> np.ndarray:
    """The matrix of points: [i, j] is what system i took from system j (a tie half each)."""
    index = {s: i for i, s in enumerate(systems)}
    matrix = np.zeros((len(systems), len(systems)))
    for o in outcomes:
        a, b = index[o.first], index[o.second]
        matrix[a, b] += o.score
        matrix[b, a] += 1.0 - o.score
    return matrix


def _fit(matrix: np.ndarray, alpha: float, start: np.ndarray | None = None) -> np.ndarray:
    if not matrix.any():
        return np.zeros(len(matrix))
    theta = np.asarray(
        _choix().ilsr_pairwise_dense(matrix, alpha=alpha, initial_params=start, max_iter=500), dtype=float
    )
    return theta - theta.mean()


def bradley_terry(
    systems: Sequence[str], outcomes: Sequence[Outcome], alpha: float = DEFAULT_ALPHA
) -> dict[str, float]:
    """The systems' log-strengths (mean 0) from `outcomes`, ties as half wins; with no outcome at all,
    every strength is 0."""
    theta = _fit(points(systems, outcomes), alpha)
    return {s: float(theta[i]) for i, s in enumerate(systems)}


def bootstrap_strengths(
    systems: Sequence[str],
    outcomes: Sequence[Outcome],
    *,
    n_resamples: int,
    seed: int,
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, tuple[float, float]] | None:
    """95% percentile intervals of each strength over prompts resampled with replacement; None without
    resamples or outcomes."""
    if n_resamples < 1 or not outcomes:
        return None
    by_prompt: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_prompt.setdefault(o.prompt, []).append(o)
    per_prompt = np.stack([points(systems, found) for found in by_prompt.values()])
    start = _fit(per_prompt.sum(axis=0), alpha)
    rng = np.random.default_rng(seed)
    draws = np.empty((n_resamples, len(systems)))
    for r in range(n_resamples):
        counts = np.bincount(rng.integers(0, len(per_prompt), len(per_prompt)), minlength=len(per_prompt))
        draws[r] = _fit(np.tensordot(counts, per_prompt, axes=1), alpha, start)
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    return {s: (float(low[i]), float(high[i])) for i, s in enumerate(systems)}


def mean_interval(
    values: dict[str, list[tuple[str, float]]], *, n_resamples: int, seed: int
) -> dict[str, tuple[float, float]] | None:
    """95% percentile intervals of each system's mean score over prompts resampled with replacement.
    `values`: system -> [(prompt, score)]; a resample's mean for a system is over the drawn prompts it
    answered (a draw without any keeps no value)."""
    if n_resamples < 1:
        return None
    prompts = sorted({p for scores in values.values() for p, _ in scores})
    if not prompts:
        return None
    at = {p: i for i, p in enumerate(prompts)}
    rng = np.random.default_rng(seed)
    counts = np.stack(
        [
            np.bincount(rng.integers(0, len(prompts), len(prompts)), minlength=len(prompts))
            for _ in range(n_resamples)
        ]
    )
    out: dict[str, tuple[float, float]] = {}
    for system, scores in values.items():
        if not scores:
            continue
        idx = np.array([at[p] for p, _ in scores])
        vals = np.array([v for _, v in scores])
        weights = counts[:, idx]
        totals = weights.sum(axis=1)
        means = (weights * vals).sum(axis=1)[totals > 0] / totals[totals > 0]
        low, high = np.percentile(means, [2.5, 97.5])
        out[system] = (float(low), float(high))
    return out
