"""The prompt-state cache: longest-prefix lookup, LRU eviction by state bytes, logits not kept; and its
on-disk store of stage prefixes."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from cejudge_dspy.backbones.llamacpp import _state_store as state_store
from cejudge_dspy.backbones.llamacpp import prompt_state_dir
from cejudge_dspy.backbones.llamacpp._prefix_cache import PrefixStateCache, common_prefix, lean_states
from cejudge_dspy.backbones.llamacpp._state_store import FAMILY_MIN, StateStore


def state(size: int, rows: int = 4) -> SimpleNamespace:
    return SimpleNamespace(llama_state_size=size, scores=np.ones((rows, 8), dtype=np.float32))


@pytest.mark.parametrize(
    ("a", "b", "n"), [([1, 2, 3], [1, 2, 4], 2), ([1, 2], [1, 2, 3], 2), ([5], [6], 0), ([], [1], 0)]
)
def test_common_prefix(a: list[int], b: list[int], n: int) -> None:
    assert common_prefix(np.array(a), np.array(b)) == n
    assert common_prefix(a, b) == n  # the batch scheduler passes plain lists


def test_lookup_returns_the_state_with_the_longest_shared_prefix() -> None:
    cache = PrefixStateCache(capacity_bytes=100)
    concepts, checklist = state(10), state(10)
    cache[[1, 2, 3, 4, 9]] = concepts  # an earlier "concepts" call: prompt + completion
    cache[[1, 7, 7, 7]] = checklist  # then another stage
    assert cache[[1, 2, 3, 5]] is concepts  # shares 3 tokens with the first, 1 with the second
    assert cache[[1, 7, 7, 0]] is checklist
    with pytest.raises(KeyError):
        cache[[8, 8]]
    assert (cache.hits, cache.misses) == (2, 1) and [1, 2] in cache and [8] not in cache


def test_states_keep_no_logits_buffer_and_eviction_counts_state_bytes() -> None:
    cache = PrefixStateCache(capacity_bytes=25)
    first = state(10)
    cache[[1]] = first
    assert first.scores.shape == (1, 8) and not first.scores.any()  # broadcasts in Llama.load_state
    cache[[2]] = state(10)
    cache[[1, 5]]  # touching the first makes the second the least recently used
    cache[[3]] = state(10)  # 30 bytes > 25: the least recently used goes
    assert cache.cache_size == 20 and [2] not in cache and cache[[1]] is first


# --- the on-disk store: one state per prefix family, for the next process --------------------------------

N_CTX, N_VOCAB = 512, 8


def llama_state(tokens: list[int], blob: bytes = b"kv") -> SimpleNamespace:
    """A state as `Llama.save_state` makes it: the whole input buffer, n_tokens of it in the KV."""
    ids = np.zeros(N_CTX, dtype=np.intc)
    ids[: len(tokens)] = tokens
    return SimpleNamespace(
        input_ids=ids,
        scores=np.ones((4, N_VOCAB), dtype=np.float32),
        n_tokens=len(tokens),
        llama_state=blob + bytes(len(tokens)),
        llama_state_size=len(blob) + len(tokens),
        seed=42,
    )


def store(directory: Path) -> StateStore:
    return StateStore(directory, state_type=SimpleNamespace)


def family(stage: int, item: int, length: int = FAMILY_MIN + 40) -> list[int]:
    """A prompt of `stage` (a shared prefix of `length` tokens) for `item`."""
    return [stage] * length + [1000 + item] * 5


def test_a_new_process_starts_from_the_stored_stage_prefixes(tmp_path: Path) -> None:
    first = PrefixStateCache(capacity_bytes=10_000, store=store(tmp_path))
    first[family(1, 0)] = llama_state(family(1, 0), b"concepts")
    first[family(1, 1)] = llama_state(family(1, 1), b"concepts")  # the same family: not stored again
    first[family(2, 0)] = llama_state(family(2, 0), b"checklist")
    assert len(list(tmp_path.glob("*.npz"))) == 2
    # Readable by others like the assembled model beside it (a shared cache), not mkstemp's 0600.
    assert {p.stat().st_mode & 0o777 for p in tmp_path.glob("*.npz")} == {0o644}

    fresh = PrefixStateCache(capacity_bytes=10_000, store=store(tmp_path))  # the next process
    restored = fresh[family(2, 7)]
    assert fresh.loaded == 1 and restored.llama_state.startswith(b"checklist")
    assert restored.n_tokens == len(family(2, 0)) and len(restored.input_ids) == N_CTX  # the whole buffer
    assert list(restored.input_ids[: restored.n_tokens]) == family(2, 0)
    assert restored.scores.shape == (1, N_VOCAB) and restored.llama_state_size == len(restored.llama_state)
    assert fresh[family(2, 8)] is restored and fresh.loaded == 1  # now from RAM
    with pytest.raises(KeyError):
        fresh[[77, 78]]


def test_a_state_whose_bytes_changed_on_disk_is_never_loaded(tmp_path: Path) -> None:
    cache = PrefixStateCache(capacity_bytes=10_000, store=store(tmp_path))
    cache[family(1, 0)] = llama_state(family(1, 0), b"the kv bytes")
    (path,) = tmp_path.glob("*.npz")
    with np.load(path) as f:
        fields = {k: f[k] for k in f.files}
    fields["llama_state"] = fields["llama_state"].copy()
    fields["llama_state"][0] ^= 1  # one flipped bit
    np.savez(path, **fields)
    fresh = PrefixStateCache(capacity_bytes=10_000, store=store(tmp_path))
    with pytest.raises(KeyError):
        fresh[family(1, 3)]
    assert fresh.loaded == 0 and not path.exists()


def test_torn_files_are_dropped_and_the_oldest_used_states_go_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "torn.npz").write_bytes(b"PK\x03\x04 half a zip")
    monkeypatch.setattr(state_store, "MAX_STATES", 2)
    s = store(tmp_path)
    assert len(s) == 0 and not (tmp_path / "torn.npz").exists()
    for stage in (1, 2, 3):
        s.save(llama_state(family(stage, 0)))
        time.sleep(0.01)  # distinct modification times
    assert len(s) == 2 and s.longest(np.array(family(1, 5)), common_prefix)[1] < FAMILY_MIN
    assert s.longest(np.array(family(3, 5)), common_prefix)[1] == FAMILY_MIN + 40


def test_a_store_that_cannot_be_written_only_costs_the_speed_up(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    cache = PrefixStateCache(capacity_bytes=10_000, store=store(blocked / "states"))
    cache[family(1, 0)] = state_in = llama_state(family(1, 0))
    assert cache[family(1, 2)] is state_in and len(cache.store) == 0


def test_where_prompt_states_live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CEJUDGE_PROMPT_STATES", raising=False)
    default = prompt_state_dir("llamacpp-local/qwen-abc123", 8192)
    assert default is not None and default.parent == tmp_path / "cache" / "prompt-states"
    assert default.name.startswith("qwen-abc123-ctx8192-llama")
    monkeypatch.setenv("CEJUDGE_PROMPT_STATES", str(tmp_path / "elsewhere"))
    assert prompt_state_dir("llamacpp-local/qwen-abc123", 2048).parent == tmp_path / "elsewhere"
    monkeypatch.setenv("CEJUDGE_PROMPT_STATES", "off")
    assert prompt_state_dir("llamacpp-local/qwen-abc123", 8192) is None


class FakeLlama:
    """What `lean_states` touches of a `llama_cpp.Llama`: the logits buffer and the two state methods,
    which copy and write it as llama-cpp-python's do."""

    def __init__(self, logits_all: bool) -> None:
        self._logits_all = logits_all
        self.scores = np.ones((512, N_VOCAB), dtype=np.float32)
        self.n_tokens = 600
        self.rows_seen: list[int] = []

    def save_state(self) -> SimpleNamespace:
        self.rows_seen.append(len(self.scores))
        return SimpleNamespace(scores=self.scores[: self.n_tokens, :].copy(), n_tokens=self.n_tokens)

    def load_state(self, state: SimpleNamespace) -> None:
        self.rows_seen.append(len(self.scores))
        self.scores[: state.n_tokens, :] = state.scores.copy()
        rest = self.scores[state.n_tokens :, :]
        rest[rest > 0] = 0.0


def test_lean_states_copy_one_row_of_logits_and_leave_the_buffer_whole() -> None:
    llama = FakeLlama(logits_all=False)
    full = llama.scores
    lean_states(llama)
    state = llama.save_state()
    llama.load_state(state)
    assert llama.rows_seen == [1, 1] and state.scores.shape == (1, N_VOCAB)
    assert llama.scores is full and full.shape == (512, N_VOCAB)  # the real buffer is back
    # With logits_all the buffer holds every token's logits (logprobs read them): left alone.
    kept = FakeLlama(logits_all=True)
    lean_states(kept)
    assert kept.save_state().scores.shape == (512, N_VOCAB) and kept.rows_seen == [512]


# --- stage variants on the serial engine: a family per system turn --------------------------------------


def test_a_stage_variant_parting_inside_the_system_turn_is_stored_as_its_own_family(tmp_path: Path) -> None:
    """Two variants of one stage share the adapter's long opening (more than FAMILY_MIN tokens) and part
    inside the system turn: with the turn's length as `cover` each is stored; without it, the second is
    not, and a fresh process would re-read all of it but the opening."""
    opening = [1] * (FAMILY_MIN + 40)
    variants = [opening + [2] * 30 + [9, 9], opening + [3] * 30 + [9, 9]]  # the system turn, then an item
    for cover, stored in ((len(opening) + 30, 2), (0, 1)):
        directory = tmp_path / f"cover-{cover}"
        cache = PrefixStateCache(capacity_bytes=10_000, store=store(directory))
        for tokens in variants:
            cache.cover = cover
            cache[tokens] = llama_state(tokens)
        cache.cover = len(opening) + 30
        cache[opening + [2] * 30 + [8, 8]] = llama_state(opening + [2] * 30 + [8, 8])  # another item
        assert len(list(directory.glob("*.npz"))) == stored


CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_the_serial_engine_tells_its_cache_each_calls_system_turn(tmp_path: Path) -> None:
    from dspy import lm15

    from cejudge_dspy.backbones.llamacpp import LlamaCppEngine
    from tests.backbones.test_backbones import FakeLlama, fake_gguf

    class TemplatedLlama(FakeLlama):
        """A fake Llama with a ChatML template, a byte tokenizer and a prompt cache."""

        metadata = {"tokenizer.chat_template": CHATML}
        _model = SimpleNamespace(token_get_text=lambda token: "<|im_end|>")

        def __init__(self, **kwargs: object) -> None:
            super().__init__(**kwargs)
            self.covers: list[int] = []

        def token_eos(self) -> int:
            return 0

        def token_bos(self) -> int:
            return -1

        def tokenize(self, text: bytes, add_bos: bool = True, special: bool = True) -> list[int]:
            return list(text)

        def set_cache(self, cache: PrefixStateCache) -> None:
            self.cache = cache

        def create_chat_completion(self, **kwargs: object) -> dict[str, object]:
            self.covers.append(self.cache.cover)
            return super().create_chat_completion(**kwargs)

    engine = LlamaCppEngine(
        fake_gguf(tmp_path / "m.gguf"),
        llama_factory=TemplatedLlama,
        prompt_cache_bytes=10_000,
        prompt_state_dir=tmp_path / "states",
    )
    for system in ("Judge the translation.", "Score it."):
        engine.complete(
            lm15.Request(model="llamacpp/fake", system=system, messages=(lm15.Message.user("an item"),))
        )
    # The system turn, and the "<|im_start|>" that both chats go on with.
    turns = [
        len(f"<|im_start|>system\n{s}<|im_end|>\n<|im_start|>")
        for s in ("Judge the translation.", "Score it.")
    ]
    assert engine._llama.covers == turns
