"""Shared test setup: no network metadata fetches, an isolated DSPy cache, the shared data folder."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile
from pathlib import Path

import hypothesis  # noqa: F401  (imported first on purpose; see below)
import pytest

from tests import support

# Hypothesis's pytest plugin imports hypothesis lazily, while printing the summary. After the tuning
# tests (run alone) that late import failed in ast.parse on CPython 3.11.7 with "SystemError: AST
# constructor recursion depth mismatch" (the interpreter's AST depth counter left off by something
# earlier in the session): all tests passed, exit status 1. Importing it here, before any test runs,
# avoids the late parse. The full suite never hit it (its test modules import hypothesis early).
# Before dspy is imported anywhere: keep DSPy's disk cache out of the user's home and stop the
# model-metadata download attempt (there is no network here).
if "DSPY_CACHEDIR" not in os.environ:
    os.environ["DSPY_CACHEDIR"] = tempfile.mkdtemp(prefix="cejudge-test-dspy-cache-")
    atexit.register(shutil.rmtree, os.environ["DSPY_CACHEDIR"], ignore_errors=True)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Tuning checkpoints live in a private per-user folder (~/.cache/cejudge-dspy/checkpoints); tests and the
# subprocesses they start (docs snippets running optimize.py) keep theirs in a throwaway one instead.
if "CEJUDGE_CHECKPOINTS" not in os.environ:
    os.environ["CEJUDGE_CHECKPOINTS"] = tempfile.mkdtemp(prefix="cejudge-test-checkpoints-")
    atexit.register(shutil.rmtree, os.environ["CEJUDGE_CHECKPOINTS"], ignore_errors=True)
# The embedded server's saved stage prefixes (~/.cache/cejudge-dspy/prompt-states): the session's real-model
# tests share one throwaway folder, so a test run neither reads nor leaves the user's.
if "CEJUDGE_PROMPT_STATES" not in os.environ:
    os.environ["CEJUDGE_PROMPT_STATES"] = tempfile.mkdtemp(prefix="cejudge-test-prompt-states-")
    atexit.register(shutil.rmtree, os.environ["CEJUDGE_PROMPT_STATES"], ignore_errors=True)

# The Ctrl-C tests send SIGINT to the commands they start. A shell without job control that starts this
# suite in the background (`nohup python -m pytest &` in a script) starts it with SIGINT ignored, and an
# ignored signal stays ignored in every child it starts: those commands would never see the test's Ctrl-C
# (seen: five Ctrl-C tests waiting out their 60-120 s bounds). A handled signal is reset to the default
# in a child, so handling it here gives every command the suite starts a Ctrl-C of its own.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SHARED_DATA = support.SHARED_DATA


@pytest.fixture(autouse=True)
def no_shipped_programs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake-LM tests judge with the hand-written programs: `--program auto` would otherwise load the
    tuned programs shipped in optimized/, whose instructions the fake engines do not know. Tests of the
    shipped programs read tests.support.OPTIMIZED explicitly."""
    monkeypatch.setenv("CEJUDGE_OPTIMIZED", str(tmp_path_factory.mktemp("optimized")))


@pytest.fixture(scope="session")
def embedded_model() -> None:
    """The real embedded model (llama.cpp's server and the packaged model parts), for the slow tests that
    judge with it; they skip without it, except in CI (CI=true), where its absence means the install step
    broke: a failure, not a skip."""
    import importlib.util

    from cejudge_dspy.backbones import _model_file as embedded

    reason = None
    if importlib.util.find_spec("xllamacpp") is None:
        reason = "llama.cpp's server (xllamacpp) is not installed"
    elif embedded.packaged_parts() is None:
        reason = "the packaged model parts are not installed"
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must install cejudge-dspy[embedded]")
    if reason:
        pytest.skip(reason)


@pytest.fixture
def shared_data() -> Path:
    """`../shared/data` beside the repository; tests that need it skip cleanly when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not present")
    return SHARED_DATA
