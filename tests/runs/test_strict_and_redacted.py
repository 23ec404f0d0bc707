"""What a run directory's files never hold (issue #49): a bare NaN or Infinity (strict JSON readers refuse
them), and a server address's credentials or a key a server echoed."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.runs import (
    append_record,
    identity_changes,
    public_url,
    public_urls,
    redact,
    redact_text,
    secrets_of,
    strict_json,
    write_json_atomic,
)


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"bare {name}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    row = {"p_a": math.nan, "scores": [1.0, math.inf, -math.inf], "nested": {"x": (math.nan, 2)}, "ok": 0.5}
    assert strict(strict_json(row)) == {
        "p_a": None,
        "scores": [1.0, None, None],
        "nested": {"x": [None, 2]},
        "ok": 0.5,
    }
    append_record(tmp_path / "results.jsonl", row)
    write_json_atomic(tmp_path / "summary.json", {"kendall": math.nan, "n": 1})
    assert strict((tmp_path / "results.jsonl").read_text())["p_a"] is None
    assert strict((tmp_path / "summary.json").read_text()) == {"kendall": None, "n": 1}


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("http://user:KEY123456@host:8000/v1", "http://[redacted]@host:8000/v1"),
        ("https://tok3n-only@host/v1", "https://[redacted]@host/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        (None, None),
    ],
)
def test_a_server_address_is_kept_without_its_credentials(url: str | None, public: str | None) -> None:
    assert public_url(url) == public


def test_every_form_of_url_credentials_is_a_secret() -> None:
    secrets = secrets_of(["sk-key-0001"], ["http://judge:p%40ss-word-9@host/v1", None])
    basic = base64.b64encode(b"judge:p@ss-word-9").decode()
    assert {"sk-key-0001", "judge:p%40ss-word-9", "judge:p@ss-word-9", "p@ss-word-9", basic} <= set(secrets)
    echoed = f"401 from Basic {basic} for p@ss-word-9 at http://judge:p%40ss-word-9@host/v1"
    line = redact_text(echoed, secrets)
    assert "ss-word" not in line and basic not in line and "[redacted]" in line, line


def test_identities_and_files_keep_addresses_public_and_compare_them_so(tmp_path: Path) -> None:
    identity = {
        "api_base": "http://u:SECRET-1@h/v1",
        "panel": [{"name": "m", "api_base": "http://u:SECRET-2@h2/v1", "lm": "openai/x"}],
    }
    write_json_atomic(tmp_path / "run.json", identity)
    text = (tmp_path / "run.json").read_text()
    assert "SECRET" not in text and text.count("[redacted]@") == 2
    stored = json.loads(text)
    assert stored == public_urls(identity)
    # A new password judges the same records: the stored run resumes; another host does not.
    again = {**identity, "api_base": "http://u:OTHER@h/v1"}
    assert identity_changes(stored, again, ("api_base", "panel")) == {}
    assert "api_base" in identity_changes(stored, {**identity, "api_base": "http://h3/v1"}, ("api_base",))


def test_error_texts_in_records_lose_url_credentials_and_labelled_keys() -> None:
    record = {"error": "backbone at http://u:pw-123456@h/v1 said Authorization: Bearer sk-zz", "prompt": "p"}
    out = redact(record)
    assert out["error"] == "backbone at http://[redacted]@h/v1 said Authorization: Bearer [redacted]", out


def test_a_view_of_an_old_run_json_with_credentials_shows_none(tmp_path: Path) -> None:
    """A run.json written before addresses were kept public still holds them: the view never shows them."""
    from cejudge_dspy.cli import main
    from tests.support.view_runs import chat_run

    run = chat_run(tmp_path)
    config = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**config, "api_base": "http://u:OLD-SECRET-1@h/v1"}))
    assert main(["view", str(run), "--bootstrap", "0"]) == 0
    page = (run / "view.html").read_text()
    assert "OLD-SECRET" not in page and "[redacted]@h/v1" in page
