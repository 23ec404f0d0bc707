"""GEPA's checkpoint, kept where only this user's cejudge writes it and loaded only once its signature checks.

gepa saves its state with pickle (`gepa_state.bin`) and resumes with `pickle.load`: whoever can write that
file runs code in the next `optimize`. A checkpoint in the user's --out folder (a cloned repository, a
shared folder, an unpacked archive) is such a file. So gepa's run dir is a private per-user directory,
`<checkpoints>/<digest of the log dir's path>/` (0700, under `$CEJUDGE_CHECKPOINTS`, else
`$CEJUDGE_CACHE/checkpoints`, else `~/.cache/cejudge-dspy/checkpoints`), and every state gepa saves there is
signed with an HMAC whose key (0600) lives beside it. A state is unpickled only after its signature checks,
from the very bytes that were checked; anything else is refused with one line. gepa then loads the same
file itself, on resume; in between only this user can change it (the folder is 0700).

The user's log dir (`optimized/TASK.gepa/`) keeps only `cejudge_run.json`, which says where the checkpoint is;
deleting the log dir starts over, as before. A `gepa_state.bin` found in it (written by an older cejudge,
or planted) is refused, never loaded.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import secrets
import shutil
import stat
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import InputError

ENV_CHECKPOINTS, ENV_CACHE = "CEJUDGE_CHECKPOINTS", "CEJUDGE_CACHE"
STATE, SIGNATURE, MARKER, KEY = "gepa_state.bin", "gepa_state.bin.hmac", "cejudge_run.json", ".key"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def checkpoints_root() -> Path:
    """The per-user folder that holds every private GEPA checkpoint."""
    if root := os.environ.get(ENV_CHECKPOINTS):
        return Path(root).expanduser()
    if cache := os.environ.get(ENV_CACHE):
        return Path(cache).expanduser() / "checkpoints"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cejudge-dspy" / "checkpoints"


def _private_dir(path: Path) -> Path:
    """`path` as a directory only this user can enter, created 0700; refuse one that others could write."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path}: the checkpoint folder is a symlink or not a folder; delete it")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise InputError(
            f"{path}: the checkpoint folder belongs to another user; delete it or set {ENV_CHECKPOINTS}"
        )
    if info.st_mode & 0o022:  # others could have written into it: nothing in it can be trusted
        raise InputError(f"{path}: the checkpoint folder is writable by other users; delete it")
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def _read_private(path: Path) -> bytes:
    """A file's bytes, never through a symlink."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _fresh_file(path: Path, data: bytes, mode: int) -> Path:
    """A new temporary file beside `path` holding `data` (created exclusively: no symlink followed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return tmp


def _write_file(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace `path` with `data` atomically; a symlink at `path` is replaced, never followed."""
    os.replace(_fresh_file(path, data, mode), path)


def _key(root: Path) -> bytes:
    """This user's signing key, created on first use (32 random bytes, 0600): published with a hard
    link, so a second process never reads a half-written key."""
    path = root / KEY
    if not os.path.lexists(path):
        tmp = _fresh_file(path, secrets.token_bytes(32), 0o600)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process published its key first: use that one
        finally:
            tmp.unlink()
    key = _read_private(path)
    if len(key) != 32:
        raise InputError(f"{path}: the checkpoint signing key is damaged; delete it")
    return key


class Checkpoint:
    """The private gepa run dir behind one user-visible log dir; also a gepa callback that signs each save."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.root = checkpoints_root()
        digest = hashlib.sha256(str(log_dir.resolve()).encode("utf-8")).hexdigest()[:32]
        self.dir = self.root / digest

    @property
    def state(self) -> Path:
        return self.dir / STATE

    def exists(self) -> bool:
        return self.state.exists()

    def open(self) -> None:
        """Create the private dirs and the key (call before gepa writes anything)."""
        _private_dir(self.root)
        _private_dir(self.dir)
        self._secret = _key(self.root)

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def _mac(self, data: bytes) -> str:
        return hmac.new(self._secret, data, hashlib.sha256).hexdigest()

    def sign(self) -> None:
        """Sign the state gepa has just saved (it saves through a temporary file and a rename)."""
        if self.state.exists():
            _write_file(self.dir / SIGNATURE, self._mac(_read_private(self.state)).encode("ascii"))

    # gepa callbacks: a state is saved before each iteration (on_state_saved follows) and once at the end.
    def on_state_saved(self, event: Any) -> None:
        self.sign()

    def on_optimization_end(self, event: Any) -> None:
        self.sign()

    def load(self) -> dict[str, Any]:
        """The saved state's fields, unpickled only from bytes whose signature checks; else one line."""
        refuse = f"{self.state}: refusing to load this GEPA checkpoint"
        again = f"delete {self.dir} (or {self.log_dir}) to start over"
        try:
            data = _read_private(self.state)
            signed = self.dir / SIGNATURE
            signature = _read_private(signed).decode("ascii", "replace") if os.path.lexists(signed) else ""
        except OSError as exc:
            raise InputError(f"{refuse}: {exc.strerror or exc}; {again}") from None
        if not signature:
            raise InputError(f"{refuse}: it is not signed, so not written by this user's cejudge; {again}")
        if not hmac.compare_digest(signature, self._mac(data)):
            raise InputError(
                f"{refuse}: not written by this user's cejudge, or cut off while being saved; {again}"
            )
        try:
            state = pickle.loads(data)  # noqa: S301 - signed by this user's key just above
        except Exception as exc:  # noqa: BLE001 - a state from another gepa version
            raise InputError(f"{refuse}: it cannot be read ({type(exc).__name__}); {again}") from None
        if not isinstance(state, dict) or "program_candidates" not in state:
            raise InputError(f"{refuse}: it is not a GEPA state; {again}")
        return state


def prepare(log_dir: Path, fingerprint: dict[str, Any]) -> tuple[Checkpoint, bool]:
    """The checkpoint for `log_dir`, checked; True when it holds a state this run continues.

    Refuses a pickle in the user's log dir, a checkpoint written for another split, and one whose
    signature does not check, each with one line.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    stray = log_dir / STATE
    if os.path.lexists(stray):
        raise InputError(
            f"{stray}: refusing to load a GEPA checkpoint from the output folder: not written by this "
            f"user's cejudge (checkpoints now live in {checkpoints_root()}); delete {stray} to start over"
        )
    checkpoint = Checkpoint(log_dir)
    checkpoint.open()
    marker = log_dir / MARKER
    if not os.path.lexists(marker):  # the log dir was deleted (or never existed): start over
        checkpoint.discard()
        _private_dir(checkpoint.dir)
    private = checkpoint.dir / MARKER
    if os.path.lexists(private):
        try:
            old = json.loads(_read_private(private))
        except (OSError, ValueError):
            old = {}  # a damaged marker of our own: the fingerprint check below names the difference
        diff = next((k for k in fingerprint if old.get(k) != fingerprint[k]), None)
        if diff:
            raise InputError(
                f"{log_dir} holds a GEPA run with another {diff}; delete it to start over, "
                "or pick another --out"
            )
    resumed = checkpoint.exists()
    if resumed:
        checkpoint.load()  # refused here, before gepa's own pickle.load could run
    _write_file(private, json.dumps(fingerprint, indent=1).encode("utf-8"))
    # The user-visible pointer: says where the checkpoint is; its presence means "continue".
    pointer = {**fingerprint, "checkpoint": str(checkpoint.dir)}
    _write_file(marker, (json.dumps(pointer, indent=1) + "\n").encode("utf-8"), 0o644)
    return checkpoint, resumed
