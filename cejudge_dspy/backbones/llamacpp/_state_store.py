"""Prompt states kept on disk, so a fresh process starts with every stage's prefix already read.

Why: the prompt-state cache (_prefix_cache.py) lives in RAM, and every `cejudge judge` is a fresh process.
Its first call of each stage reads the whole stage prefix (the adapter's field list, the stage's
instruction, the task's wording: 250-630 tokens); measured on the README's German pair, those first
calls read about 2,000 of the 2,550 prompt tokens the judgment evaluated, some 40 of its 96 seconds on
2 cores. The store keeps one llama.cpp state per *prefix family* (a prompt that shares fewer than
FAMILY_MIN tokens with every stored one starts a new family: in practice one per stage and task
wording), and the cache restores it like a state from RAM: llama.cpp re-reads only what differs.

A state holds exact KV bytes, so a restored one is the very state the store saved: it changes no answer
that the RAM cache would not. States only load into the model and llama.cpp version and context size
they came from (the directory name says which), and a file whose bytes do not match its recorded
SHA-256 is deleted, never loaded. Writes are atomic (a temporary file, then a rename), so concurrent
processes never see half a state; two may store the same family, which wastes only disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

FAMILY_MIN = 128  # same-stage prompts share 200-630 tokens; different stages 11-35
MAX_STATES = 32  # oldest used go first
MAX_BYTES = 768 << 20  # about 40 states of 600 tokens (~28 KB of KV per token for the 1.5B model)
# What reading a torn, truncated or foreign file raises (np.load reads an .npz as a zip archive).
_UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


class StateStore:
    """States of earlier prompts in one directory: `<sha256 of tokens>.npz`, the newest used last."""

    def __init__(self, directory: Path, state_type: Callable[..., Any] | None = None) -> None:
        self.directory = directory
        self._state_type = state_type  # llama_cpp.LlamaState unless a test passes another
        self._tokens: dict[Path, np.ndarray] = {}
        for path in sorted(directory.glob("*.npz"), key=_mtime):
            try:
                with np.load(path) as f:
                    self._tokens[path] = np.asarray(f["input_ids"][: int(f["n_tokens"])], dtype=np.int64)
            except _UNREADABLE:
                _remove(path)  # a torn or foreign file: a cache, so drop it

    def __len__(self) -> int:
        return len(self._tokens)

    def longest(self, tokens: np.ndarray, common: Any) -> tuple[Path | None, int]:
        """The stored state sharing the longest prefix with `tokens`, and how long it is."""
        best, best_len = None, 0
        for path, stored in self._tokens.items():
            if (shared := common(stored, tokens)) > best_len:
                best, best_len = path, shared
        return best, best_len

    def wants(self, tokens: np.ndarray, common: Any, cover: int = 0) -> bool:
        """Whether `tokens` start a prefix family the store does not have yet.

        `cover`: the leading tokens every call of the prompt's stage shares (its system turn), where the
        engine knows them. A stored prompt that parts from this one inside them is another variant of
        the stage (another instruction or output field: an ablation, a tuned program) sharing only the
        adapter's opening, so this one starts its own family; without it, each call of the variant
        would re-read all but that opening (measured: 1,774 of 2,130 prompt tokens of two judgments)."""
        return self.longest(tokens, common)[1] < max(FAMILY_MIN, cover)

    def load(self, path: Path) -> Any:
        """The state saved at `path` (a `llama_cpp.LlamaState`), or None when it is unusable."""
        make = self._state_type
        if make is None:
            from llama_cpp import LlamaState as make
        try:
            with np.load(path) as f:
                blob = f["llama_state"].tobytes()
                if hashlib.sha256(blob).hexdigest() != str(f["sha256"]):
                    raise ValueError("checksum mismatch")
                state = make(
                    # The whole buffer (n_ctx long): Llama.load_state adopts it as the model's own.
                    input_ids=np.array(f["input_ids"], dtype=np.intc),
                    # One row of logits broadcasts in Llama.load_state (see _prefix_cache.py).
                    scores=np.zeros((1, int(f["n_vocab"])), dtype=np.single),
                    n_tokens=int(f["n_tokens"]),
                    llama_state=blob,
                    llama_state_size=len(blob),
                    seed=int(f["seed"]),
                )
        except _UNREADABLE:
            self._forget(path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # the eviction order is the order of use
        return state

    def save(self, state: Any) -> None:
        """Store a state (best effort: a full or read-only disk only costs the speed-up)."""
        ids = np.asarray(state.input_ids, dtype=np.intc)
        tokens = ids[: state.n_tokens]
        blob = memoryview(state.llama_state)[: state.llama_state_size]  # hashed and written, not copied
        path = self.directory / f"{hashlib.sha256(tokens.tobytes()).hexdigest()[:32]}.npz"
        tmp: str | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.directory, suffix=".tmp", delete=False) as out:
                tmp = out.name
                np.savez(
                    out,
                    input_ids=ids,
                    n_tokens=state.n_tokens,
                    n_vocab=np.shape(state.scores)[-1],
                    seed=state.seed,
                    llama_state=np.frombuffer(blob, dtype=np.uint8),
                    sha256=hashlib.sha256(blob).hexdigest(),
                )
            os.chmod(tmp, 0o644)  # NamedTemporaryFile creates 0600; a shared cache must stay readable
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                _remove(Path(tmp))
            return
        self._tokens[path] = tokens.astype(np.int64)
        self._evict()

    def _evict(self) -> None:
        paths = sorted(self._tokens, key=_mtime)
        sizes = {p: _size(p) for p in paths}
        while paths and (len(paths) > MAX_STATES or sum(sizes[p] for p in paths) > MAX_BYTES):
            self._forget(paths.pop(0))

    def _forget(self, path: Path) -> None:
        self._tokens.pop(path, None)
        _remove(path)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
