"""Text on its way to a terminal (issue #49): control characters from data, model output, server errors and
task declarations are shown, not obeyed, and rich markup is off for text the package did not write. One
console (cli/display/_text.py) does both for every command."""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cejudge_dspy.cli import main
from cejudge_dspy.cli.display import console
from cejudge_dspy.cli.display._text import SafeConsole
from cejudge_dspy.tasks import _catalog
from tests.support import REPO
from tests.support.bad_inputs import SIM, good_data

HOSTILE = "a\x1b[2J\x1b]0;title\x07b\x1b]8;;http://x/\x1b\\link\x9b\rc\ud83d"


def _printed(renderable: object, *, terminal: bool) -> str:
    buffer = io.StringIO()
    if terminal:  # styles are written as escape sequences: only those may carry ESC
        out = SafeConsole(file=buffer, force_terminal=True, color_system="standard", markup=False)
    else:
        out = console()
        out.file = buffer
    out.print(renderable)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "renderable",
    [HOSTILE, Text(HOSTILE, style="bold"), Panel(HOSTILE, title="t"), Table("col", title=HOSTILE)],
    ids=["str", "styled Text", "Panel", "Table"],
)
def test_control_characters_and_surrogates_are_written_out_not_obeyed(renderable: object) -> None:
    plain = _printed(renderable, terminal=False)
    assert "\x1b" not in plain and "\x07" not in plain and "\r" not in plain and "\x9b" not in plain
    assert "\\x1b" in plain and "\\x9b" in plain  # shown (rich itself drops a bell and a carriage return)
    styled = _printed(Text(HOSTILE, style="bold red"), terminal=True)
    assert "\x1b[2J" not in styled and "\x1b]" not in styled and "\x07" not in styled
    assert "\x1b[1;31m" in styled  # the package's own style still reaches the terminal


def test_markup_in_untrusted_text_prints_literally() -> None:
    text = "server said: [/bold] closing tag; key [redacted]; path runs/[red]x[/red]"
    assert _printed(text, terminal=False).strip() == text  # no MarkupError, nothing swallowed


@pytest.fixture
def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "programs"
    shutil.copytree(REPO / "programs", folder)
    monkeypatch.setenv("CEJUDGE_PROGRAMS", str(folder))
    _catalog._registry.cache_clear()
    yield folder
    _catalog._registry.cache_clear()


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_tasks_and_tasks_show_escape_what_a_declaration_says(programs: Path) -> None:
    chat = (programs / "chat.toml").read_text(encoding="utf-8")
    said = 'description = "clear\\u001b[2J title\\u001b]0;pwned\\u0007 [/bold]"'
    lines = [said if line.startswith("description = ") else line for line in chat.splitlines()]
    (programs / "evil.toml").write_text(
        "\n".join(lines).replace('name = "chat"', 'name = "evil"'), encoding="utf-8"
    )
    _catalog._registry.cache_clear()
    for argv in (["tasks"], ["tasks", "show", "evil"]):
        code, out, err = _run([*argv, "--data", str(good_data(programs, 2))] if "show" in argv else argv)
        assert "\x1b" not in out + err and "\x07" not in out + err, argv
    code, out, _ = _run(["tasks"])
    assert code == 0 and "\\x1b[2J" in out.replace("\n", "")


def test_an_out_path_holding_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    out = tmp_path / "[red]run[/red]"
    code, stdout, err = _run(
        ["evaluate", "--task", "chat", "--data", str(good_data(tmp_path, 2)), "--out", str(out), *SIM]
    )
    assert code == 0, err
    assert "[red]run[/red]" in stdout.replace("\n", "")


class _Refusing(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible server that refuses every request with an error holding markup and a marker."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = json.dumps({"error": {"message": "bad request [/bold] [redacted] \x1b]0;t\x07", "code": 400}})
        try:
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data.encode())
        except OSError:
            # The client may close first (litellm gives up on a 400 without reading on); the server thread's
            # traceback would land in the stderr this test reads, as if the command had printed it.
            self.close_connection = True


def test_a_server_error_holding_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = ["--lm", "openai/judge", "--api-base", f"http://127.0.0.1:{server.server_address[1]}/v1"]
        argv = [
            "evaluate",
            "--task",
            "chat",
            "--data",
            str(good_data(tmp_path, 1)),
            "--out",
            str(tmp_path / "r"),
        ]
        code, _, err = _run([*argv, *api, "--api-key", "k", "--bootstrap", "0"])
    finally:
        server.shutdown()
    assert "MarkupError" not in err and "Traceback" not in err
    assert code != 0 and "[/bold] [redacted]" in err and "\x1b" not in err
