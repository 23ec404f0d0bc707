"""Stage prefixes kept across processes by llama.cpp's slot save and restore
(`cejudge_dspy/backbones/_prompt_states.py`).

The fast tests drive the save/restore protocol against a fake server on 127.0.0.1 that records the requests
and writes or reads the slot files as llama.cpp's server does. The slow test runs the packaged model on two
servers one after the other, as two processes would, and counts the prompt tokens the second evaluated.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import dspy
import pytest

from benchmarks.bench_local_server import evaluated_tokens
from cejudge_dspy.backbones import _prompt_states as states
from tests.support.llama_server import llama_server_available

SYSTEM = [{"role": "system", "content": "Judge the answer."}, {"role": "user", "content": "2+2? 4"}]


class FakeSlots:
    """A fake llama.cpp server's slot endpoints: `save` writes a file of the slot's "state" into the save
    directory, `restore` reads one (answering 400 when `fail_restore`), `/completion` answers."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.requests: list[tuple[str, dict]] = []
        self.fail_restore = False
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                url = urlparse(self.path)
                action = parse_qs(url.query).get("action", [""])[0]
                fake.requests.append((f"{url.path} {action}".strip(), body))
                status = 200
                if action == "save":
                    (fake.directory / body["filename"]).write_bytes(b"state")
                elif action == "restore":
                    readable = (fake.directory / body["filename"]).is_file()
                    status = 400 if fake.fail_restore or not readable else 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        states.forget(self.api_base)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeSlots]:
    server = FakeSlots(tmp_path)
    yield server
    server.close()


def test_a_prefix_is_saved_after_its_first_call_and_restored_by_the_next_process(fake: FakeSlots) -> None:
    states.keep(fake.api_base, fake.directory)
    key = states.prefix_key(SYSTEM)
    states.before(fake.api_base, SYSTEM)
    assert fake.requests == []  # nothing saved yet: nothing to restore
    states.after(fake.api_base, SYSTEM)
    assert fake.requests == [("/slots/0 save", {"filename": f"{key}.{os.getpid()}.part"})]
    assert [p.name for p in fake.directory.iterdir()] == [f"{key}.bin"]  # renamed whole
    states.before(fake.api_base, SYSTEM)
    states.after(fake.api_base, SYSTEM)
    assert len(fake.requests) == 1  # once a process: the server's own cache holds it from then on

    states.forget(fake.api_base)  # the next process: nothing seen yet
    states.keep(fake.api_base, fake.directory)
    fake.requests.clear()
    states.before(fake.api_base, SYSTEM)
    # The slot's prompt is parked in the host-memory cache first, then the state restored into the slot.
    assert [r[0] for r in fake.requests] == ["/completion", "/slots/0 restore"]
    assert fake.requests[1][1] == {"filename": f"{key}.bin"}
    states.after(fake.api_base, SYSTEM)
    assert len(fake.requests) == 2  # it had a state: not saved again


def test_a_state_that_fails_to_restore_is_deleted_and_the_call_goes_on(fake: FakeSlots) -> None:
    key = states.prefix_key(SYSTEM)
    (fake.directory / f"{key}.bin").write_bytes(b"from another build")
    fake.fail_restore = True
    states.keep(fake.api_base, fake.directory)
    states.before(fake.api_base, SYSTEM)
    assert not (fake.directory / f"{key}.bin").exists()


def test_the_same_server_reached_again_keeps_what_was_restored_and_an_unwritable_folder_keeps_nothing(
    fake: FakeSlots, tmp_path: Path
) -> None:
    (fake.directory / f"{states.prefix_key(SYSTEM)}.bin").write_bytes(b"state")
    states.keep(fake.api_base, fake.directory)
    states.before(fake.api_base, SYSTEM)
    states.keep(fake.api_base, fake.directory)  # another LM for the same server (make_lm again)
    states.before(fake.api_base, SYSTEM)
    assert [r[0] for r in fake.requests] == ["/completion", "/slots/0 restore"]  # restored once
    states.forget(fake.api_base)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    states.keep(fake.api_base, blocked / "states")  # cannot be made: nothing kept, no error
    assert not states.kept(fake.api_base)


def test_calls_without_a_system_message_or_to_other_servers_are_left_alone(fake: FakeSlots) -> None:
    states.keep(fake.api_base, fake.directory)
    states.before(fake.api_base, [{"role": "user", "content": "hi"}])
    states.after(fake.api_base, None)
    states.before("http://127.0.0.1:9/v1", SYSTEM)  # a server not kept (a user's own)
    states.after("http://127.0.0.1:9/v1", SYSTEM)
    assert fake.requests == []
    assert states.prefix_key(SYSTEM) != states.prefix_key([{"role": "system", "content": "Judge it."}])


def test_the_directory_is_per_model_and_build_and_can_be_moved_or_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = Path("/models/qwen.gguf")
    monkeypatch.delenv(states.ENV_PROMPT_STATES, raising=False)
    default = states.prompt_state_dir(model, tmp_path)
    assert default is not None and default.parent == tmp_path / "prompt-states"
    assert default.name.startswith("qwen-xllamacpp")
    monkeypatch.setenv(states.ENV_PROMPT_STATES, str(tmp_path / "elsewhere"))
    assert states.prompt_state_dir(model, tmp_path).parent == tmp_path / "elsewhere"  # type: ignore[union-attr]
    monkeypatch.setenv(states.ENV_PROMPT_STATES, "off")
    assert states.prompt_state_dir(model, tmp_path) is None


def test_the_least_recently_used_states_go_first_when_the_directory_is_full(tmp_path: Path) -> None:
    for age, name in enumerate(["old", "middle", "new"]):
        path = tmp_path / f"{name}.bin"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    states._prune(tmp_path, max_bytes=250)
    assert sorted(p.stem for p in tmp_path.glob("*.bin")) == ["middle", "new"]


class Verdict(dspy.Signature):
    """You judge whether an answer to a question is correct. Read the question, then the answer, and decide.
    A correct answer states the right fact plainly; an answer that hedges, contradicts itself or names a
    wrong fact is incorrect. Spelling and punctuation do not matter; only the fact does. Answers in any
    language are judged alike. Think about the question's subject before you read the answer, and consider
    what a careful expert of that subject would accept as correct, and what they would reject."""

    question: str = dspy.InputField(desc="the question that was asked")
    answer: str = dspy.InputField(desc="the answer to judge")
    correct: bool = dspy.OutputField(desc="whether the answer is correct")


@pytest.mark.slow
def test_a_second_server_reads_a_stage_prefix_the_first_computed(tmp_path: Path) -> None:
    """Two servers one after the other with one save directory, as two processes: the second evaluates only
    what its call does not share with the first call's saved prompt."""
    if reason := llama_server_available():
        pytest.fail(reason) if os.environ.get("CI") else pytest.skip(reason)
    from cejudge_dspy.backbones import make_lm, resolve_gguf
    from cejudge_dspy.backbones._builders import gguf_model_name
    from cejudge_dspy.backbones._local_server import LocalServer, ServerConfig
    from cejudge_dspy.backbones._slots import hold_to_slots

    path = resolve_gguf()
    alias = gguf_model_name(path).split("/", 1)[1]
    config = ServerConfig(model=str(path), alias=alias, metrics=True, states=str(tmp_path))
    evaluated, verdicts = [], []
    for question, answer in (
        ("What is the capital of France?", "Paris"),
        ("How many legs has a cat?", "Four"),
    ):
        server = LocalServer(config)
        api_base = server.start()
        try:
            hold_to_slots(api_base, 1)
            states.keep(api_base, tmp_path)
            lm = make_lm(f"llama-server/{alias}", api_base=api_base, cache=False)
            before = evaluated_tokens(api_base)[0]
            with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
                verdicts.append(dspy.Predict(Verdict)(question=question, answer=answer).correct)
            evaluated.append(evaluated_tokens(api_base)[0] - before)
        finally:
            states.forget(api_base)
            server.stop()
    # The system message alone is some 250 tokens; the second call evaluates its own question and answer
    # (and the one-token request that parks the slot), not the instructions again.
    assert evaluated[0] > 250, evaluated
    assert evaluated[1] < evaluated[0] - 200, evaluated
    assert len(list(tmp_path.glob("*.bin"))) == 1
    assert all(isinstance(v, bool) for v in verdicts)
