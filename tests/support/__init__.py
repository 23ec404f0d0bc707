"""What the tests share: fakes, toy runtimes, run fixtures, bad inputs, servers, and where things are."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
SUPPORT = TESTS / "support"
FIXTURES = TESTS / "fixtures"
OPTIMIZED = REPO / "optimized"  # the tuned programs shipped in the repository
BENCHMARKS = REPO / "benchmarks"
SHARED_DATA = REPO.parent / "shared" / "data"  # ../shared/data beside the repository (may be absent)
