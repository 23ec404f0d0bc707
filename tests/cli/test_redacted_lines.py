"""Every line a command prints says no secret of the command (issue #49): its error line and the package's
warnings alike, whatever a server echoed into them."""

from __future__ import annotations

import argparse
import logging

import pytest

from cejudge_dspy.cli._common import run_command
from cejudge_dspy.errors import BackboneError

KEY = "sk-echoed-123456"
BASE = "http://judge:url-secret-7890@127.0.0.1:9/v1"


def _args() -> argparse.Namespace:
    return argparse.Namespace(lm="openai/judge", api_key=KEY, api_base=BASE)


def test_error_lines_and_warnings_are_redacted(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    def handler(args: argparse.Namespace) -> int:
        logging.getLogger("cejudge_dspy").warning("the server said %s at %s", f"Bearer {KEY}", BASE)
        raise BackboneError(
            f"backbone failed: invalid key {KEY} at {BASE}\nTraceback (most recent call last):"
        )

    assert run_command(handler, _args()) == 3
    err = capsys.readouterr().err
    assert KEY not in err and "url-secret" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == (
        "error: backbone failed: invalid key [redacted] at http://[redacted]@127.0.0.1:9/v1"
    ), lines
    assert caplog.messages == ["the server said Bearer [redacted] at http://[redacted]@127.0.0.1:9/v1"]
