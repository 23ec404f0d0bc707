"""Stage prefixes kept across processes, by llama.cpp's own slot save and restore.

The calls of one stage share a long prefix: the signature's instructions, fields and format, in the system
message (about 2,000 of the README pair's 2,550 prompt tokens). Within a process the server's host-memory
prompt cache (`cache_ram_mib`) keeps it, but every new process computed every prefix again: 1,699 of the
3,762 prompt tokens one paragraph-length pair evaluated, at about 50 ms a token on 2 cores
(docs/measurements/local-server.md). The in-process engine before the server road kept them on disk;
llama.cpp's server can too (`--slot-save-path`, `POST /slots/0?action=save|restore`). For a server the package
started with one slot, `ServerLM` calls `before` and `after` around each call, holding the slot:

* the first call of a process whose system message has a saved state (`<sha256 of it>.bin`) first parks
  what the slot holds in the host-memory cache (a one-token request with another prompt: the server moves
  a slot's prompt there when the slot takes a different one), then restores the state into the slot, so
  the call reads its prefix instead of computing it;
* the first call whose system message has none is followed by a save of the slot, which then holds that
  call's prompt, written under a temporary name and renamed, so a concurrent process never reads half a file.

A state fits only the model file and llama.cpp build that wrote it, so each has its own directory
(`prompt_state_dir`). `CEJUDGE_PROMPT_STATES=off` turns this off; a directory there moves it. A state that
fails to restore is deleted and the call computes its prefix, as it would have anyway. The directory is kept
under `MAX_BYTES`, the least recently used states removed first.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ENV_PROMPT_STATES = "CEJUDGE_PROMPT_STATES"  # a directory for the saved states, or "off"
MAX_BYTES = 2 * 1024**3  # about 28 KB a token of the 1.5B model: some 75 stage prefixes of 1,000 tokens
REQUEST_TIMEOUT_S = 300.0  # a restore reads tens of MB, and the park request waits for the slot's server


def prompt_state_dir(model: Path, cache_root: Path) -> Path | None:
    """Where the states of `model` live: `$CEJUDGE_PROMPT_STATES` or `<cache_root>/prompt-states`, then a
    directory per model file and llama.cpp build; None when `$CEJUDGE_PROMPT_STATES` is "off"."""
    root = os.environ.get(ENV_PROMPT_STATES, "").strip()
    if root.lower() in ("off", "0", "false", "no"):
        return None
    try:
        build = importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        build = "unknown"
    base = Path(root).expanduser() if root else cache_root / "prompt-states"
    return base / f"{model.stem}-xllamacpp{build}"


def prefix_key(messages: Sequence[Any] | None) -> str | None:
    """The name of the state for a call's messages: a digest of its system message (None without one)."""
    if not messages or not isinstance(messages[0], dict) or messages[0].get("role") != "system":
        return None
    content = messages[0].get("content")
    if not isinstance(content, str) or not content:
        return None
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class _Store:
    directory: Path
    server: str  # the server's root URL (no /v1)
    seen: set[str] = field(default_factory=set)  # prefixes this process already restored or saved
    fresh: set[str] = field(default_factory=set)  # prefixes seen without a state: saved after their call
    lock: threading.Lock = field(default_factory=threading.Lock)


_stores: dict[str, _Store] = {}
_lock = threading.Lock()


def keep(api_base: str, directory: Path) -> None:
    """From now on, the stage prefixes of calls to the one-slot server at `api_base` (which was started
    with `directory` as its slot save path) are kept in `directory` and restored from it.

    The same server reached again by another LM keeps what this process restored and saved. A directory
    that cannot be made (a read-only cache) keeps nothing: the calls compute their prefixes as before."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    with _lock:
        store = _stores.get(api_base)
        if store is None or store.directory != directory:
            _stores[api_base] = _Store(directory, api_base.removesuffix("/v1"))


def forget(api_base: str) -> None:
    with _lock:
        _stores.pop(api_base, None)


def kept(api_base: object) -> bool:
    with _lock:
        return isinstance(api_base, str) and api_base in _stores


def _store(api_base: object) -> _Store | None:
    with _lock:
        return _stores.get(api_base) if isinstance(api_base, str) else None


def _slot_action(store: _Store, action: str, filename: str) -> bool:
    response = httpx.post(
        f"{store.server}/slots/0", params={"action": action}, json={"filename": filename},
        timeout=REQUEST_TIMEOUT_S,
    )  # fmt: skip
    return response.status_code == 200


def before(api_base: object, messages: Sequence[Any] | None) -> None:
    """Before a call, holding the slot: restore its prefix's saved state on the first call that has one."""
    store = _store(api_base)
    key = prefix_key(messages)
    if store is None or key is None:
        return
    with store.lock:
        if key in store.seen:
            return
        store.seen.add(key)
    path = store.directory / f"{key}.bin"
    if not path.is_file():
        with store.lock:
            store.fresh.add(key)
        return
    try:
        # Park the slot's prompt in the host-memory cache first: a restore overwrites the slot as it is.
        httpx.post(
            f"{store.server}/completion", json={"prompt": "\n", "n_predict": 1, "cache_prompt": True},
            timeout=REQUEST_TIMEOUT_S,
        ).raise_for_status()  # fmt: skip
        restored = _slot_action(store, "restore", path.name)
    except httpx.HTTPError:
        return  # the call computes its prefix, as it would have anyway
    if restored:
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept the longest (`_prune`)
    else:  # written by another build, or damaged: never tried again
        with contextlib.suppress(OSError):
            path.unlink()


def after(api_base: object, messages: Sequence[Any] | None) -> None:
    """After a call that reached the server, still holding the slot: save the slot's state if its prefix
    had none (the slot then holds that call's prompt)."""
    store = _store(api_base)
    key = prefix_key(messages)
    if store is None or key is None:
        return
    with store.lock:
        if key not in store.fresh:
            return
        store.fresh.discard(key)
    part = f"{key}.{os.getpid()}.part"
    try:
        saved = _slot_action(store, "save", part)
    except httpx.HTTPError:
        saved = False
    target = store.directory / f"{key}.bin"
    with contextlib.suppress(OSError):
        if saved:
            os.replace(store.directory / part, target)
            _prune(store.directory)
        else:
            (store.directory / part).unlink(missing_ok=True)


def _prune(directory: Path, max_bytes: int = MAX_BYTES) -> None:
    """Remove the least recently used states until the directory holds at most `max_bytes`."""
    states = []
    for path in directory.glob("*.bin"):
        with contextlib.suppress(OSError):
            stat = path.stat()
            states.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in states)
    for _, size, path in sorted(states):
        if total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            total -= size
