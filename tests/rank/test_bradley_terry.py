"""The Bradley-Terry fit against an independent computation (Zermelo's MM iteration written here, and the
two-system closed form), ties as half wins, and the bootstrap intervals over prompts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cejudge_dspy.rank import Outcome, bootstrap_strengths, bradley_terry, mean_interval


def zermelo(systems: list[str], outcomes: list[Outcome], iterations: int = 5000) -> dict[str, float]:
    """Hunter's MM (Zermelo) for the BT maximum likelihood with ties as half wins:
    p_i <- W_i / sum_j n_ij / (p_i + p_j); log-strengths centred on 0."""
    index = {s: i for i, s in enumerate(systems)}
    n = np.zeros((len(systems), len(systems)))
    wins = np.zeros(len(systems))
    for o in outcomes:
        a, b = index[o.first], index[o.second]
        n[a, b] += 1
        n[b, a] += 1
        wins[a] += o.score
        wins[b] += 1 - o.score
    p = np.ones(len(systems))
    for _ in range(iterations):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        p = wins / denom
        p /= np.exp(np.log(p).mean())
    theta = np.log(p)
    return {s: float(theta[i] - theta.mean()) for s, i in index.items()}


def _outcomes() -> list[Outcome]:
    # Every system wins and loses somewhere (the MLE exists without a prior), with ties.
    raw = [
        ("x", "y", 1.0),
        ("x", "y", 1.0),
        ("x", "y", 0.0),
        ("x", "y", 0.5),
        ("y", "z", 1.0),
        ("y", "z", 0.5),
        ("y", "z", 0.0),
        ("y", "z", 1.0),
        ("x", "z", 1.0),
        ("x", "z", 1.0),
        ("x", "z", 0.0),
        ("z", "w", 1.0),
        ("w", "x", 1.0),
        ("w", "y", 0.5),
        ("z", "w", 0.0),
        ("w", "z", 0.5),
    ]
    return [Outcome(f"p{i % 5}", a, b, s) for i, (a, b, s) in enumerate(raw)]


def test_fit_matches_zermelo_mm_with_ties_as_half_wins() -> None:
    systems = ["w", "x", "y", "z"]
    fit = bradley_terry(systems, _outcomes(), alpha=0.0)
    reference = zermelo(systems, _outcomes())
    for s in systems:
        assert fit[s] == pytest.approx(reference[s], abs=1e-4)
    assert sum(fit.values()) == pytest.approx(0.0, abs=1e-9)


def test_two_systems_closed_form() -> None:
    # x scores 3 wins + 1 tie = 3.5 of 5: the MLE log-odds is log(3.5 / 1.5).
    outcomes = [Outcome("p", "x", "y", s) for s in (1.0, 1.0, 1.0, 0.5, 0.0)]
    fit = bradley_terry(["x", "y"], outcomes, alpha=0.0)
    assert fit["x"] - fit["y"] == pytest.approx(math.log(3.5 / 1.5), abs=1e-4)


def test_a_tie_is_exactly_half_a_win() -> None:
    # One tie weighs as much as a win and a loss: 2 wins + 2 ties == 3 wins + 1 loss.
    ties = [Outcome("p", "x", "y", s) for s in (1.0, 1.0, 0.5, 0.5)]
    split = [Outcome("p", "x", "y", s) for s in (1.0, 1.0, 1.0, 0.0)]
    a, b = bradley_terry(["x", "y"], ties, alpha=0.0), bradley_terry(["x", "y"], split, alpha=0.0)
    assert a["x"] == pytest.approx(b["x"], abs=1e-5)


def test_prior_keeps_a_clean_sweep_finite_and_ordered() -> None:
    outcomes = [Outcome(f"p{i}", "x", "y", 1.0) for i in range(4)]
    fit = bradley_terry(["x", "y", "z"], outcomes)
    assert all(math.isfinite(v) for v in fit.values())
    assert fit["x"] > fit["z"] > fit["y"]  # z, never compared, sits between the winner and the loser


def test_bootstrap_over_prompts() -> None:
    systems = ["w", "x", "y", "z"]
    outcomes = _outcomes()
    fit = bradley_terry(systems, outcomes)
    first = bootstrap_strengths(systems, outcomes, n_resamples=200, seed=3)
    again = bootstrap_strengths(systems, outcomes, n_resamples=200, seed=3)
    assert first == again  # seeded
    assert first is not None
    for s in systems:
        low, high = first[s]
        assert low < high
        assert low - 1e-9 <= fit[s] <= high + 1e-9
    # One prompt: every resample draws it, so every interval collapses onto the fit.
    one = [Outcome("p", o.first, o.second, o.score) for o in outcomes]
    single = bootstrap_strengths(systems, one, n_resamples=50, seed=1)
    assert single is not None
    for s in systems:
        assert single[s][0] == pytest.approx(single[s][1], abs=1e-6)
    assert bootstrap_strengths(systems, outcomes, n_resamples=0, seed=1) is None


def test_mean_interval_resamples_prompts() -> None:
    values = {"a": [("p1", 1.0), ("p2", 3.0), ("p3", 5.0)], "b": [("p1", 2.0), ("p2", 2.0), ("p3", 2.0)]}
    ci = mean_interval(values, n_resamples=500, seed=0)
    assert ci is not None
    assert ci["a"][0] < 3.0 < ci["a"][1]
    assert 1.0 <= ci["a"][0] and ci["a"][1] <= 5.0
    assert ci["b"] == (2.0, 2.0)  # a constant score has no spread to resample
