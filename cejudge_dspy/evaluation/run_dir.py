"""A run directory holds one run: its identity, an exclusive lock, and records appended atomically.

- `run.json` is the run's identity: everything that changes its records (see `IDENTITY_KEYS`). Resuming
  with any difference is refused with the difference named; `force_new` moves the old run aside into
  `superseded-<time>/` (nothing is deleted). A directory whose run.json has no records yet takes the new
  identity: nothing could mix.
- `lock` holds an exclusive OS lock (`filelock`) on `.lock` for as long as a process writes; the kernel
  drops it when the process dies, even by SIGKILL. `.holder` says who holds it, for the second writer.
- `append_records` writes its records' lines with one `write` on an O_APPEND descriptor, then fsyncs.
  A failed or short write is rolled back to the previous end of file and raised as one line: nothing
  already written is lost, and no torn line is left behind.
- `repair_torn_tail` (run on resume, under the lock) moves a torn final line (a crash or a full disk
  mid-write before this format) aside into `results.jsonl.torn`, so its item is judged again.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from cejudge_dspy.backbones import is_local
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.tasks import load_task

RESULTS, RUN, SUMMARY, TORN = "results.jsonl", "run.json", "summary.json", "results.jsonl.torn"
IDENTITY_FORMAT = 2
# What changes a run's records. `shard` is part of a shard run's identity; `merge` compares all but it.
# run.json also keeps `data` (the path): two copies of one file are the same data, so the bytes compare.
IDENTITY_KEYS = (
    "task",
    "task_version",
    "method",
    "program",
    "prompts",
    "lm",
    "api_base",
    "temperature",
    "max_tokens",
    "constrained",
    "repeat_penalty",
    "orders",
    "decision",
    "tie_band",
    "judgment",
    "grade_margin",
    "translator",
    "concepts",
    "directions",
    "judge_on",
    "language_check",
    "likelihood_check",
    "data_sha256",
    "fields",
    "constants",
    "languages",
    "subsets",
    "limit",
    "seed",
    "shard",
)


class RunWriteError(CEJudgeError):
    """results.jsonl could not be written (full disk, file size limit, permissions)."""


class RunLockedError(CEJudgeError):
    """Another process writes into the run directory."""


# Settings added after IDENTITY_FORMAT 2 and what a run.json without them was judged with: a run from
# before token probabilities resumes with `--decision argmax`.
# A run from before graded judgments has none recorded (and does not resume as a graded one).
# The ablations (concepts, checklist directions, texts judged) were fixed in CE-Judge runs before they
# became options, and are None for other methods. The response-language check came with the graded
# judgment (the release that records `judgment`): a CE-Judge run of a task that declares the check ran
# it from then on, and not before. The translation-likelihood check came later still: a run without
# `likelihood_check` did not run it. Local GGUF runs without `repeat_penalty` decoded with 1.1, the
# default before it became the --repeat-penalty flag.
LATER_KEYS: dict[str, Any] = {
    "decision": "argmax",
    "tie_band": 0.0,
    "judgment": "pairwise",
    "grade_margin": None,
    "concepts": lambda run: True if _cejudge(run) else None,
    "directions": lambda run: "both" if _cejudge(run) else None,
    "judge_on": lambda run: "original" if _cejudge(run) else None,
    "language_check": lambda run: ("judgment" in run) if _checked(run, "check_response_language") else None,
    "likelihood_check": lambda run: False if _checked(run, "check_translation_likelihood") else None,
    "repeat_penalty": lambda run: 1.1 if is_local(run.get("lm")) else None,
}


def _cejudge(identity: dict[str, Any]) -> bool:
    return identity.get("method", "cejudge") == "cejudge"


def _checked(identity: dict[str, Any], flag: str) -> bool:
    """Whether the run's program has a pointwise check its task declares with `flag`
    (cli.run_setup.language_checked, likelihood_checked)."""
    try:
        spec = load_task(str(identity.get("task")))
    except CEJudgeError:
        return False
    return _cejudge(identity) and spec.mode == "pointwise" and bool(getattr(spec, flag))


def identity_value(identity: dict[str, Any], key: str) -> Any:
    """A setting of a run, with what a run.json from before the setting existed was judged with."""
    if key in identity:
        return identity[key]
    later = LATER_KEYS.get(key)
    return later(identity) if callable(later) else later


# Settings whose value before they were recorded cannot be known: compared only when both runs have them.
# A run.json from before prompt fingerprints resumes (its prompts are unknown, as they always were).
COMPARED_WHEN_RECORDED = ("prompts",)


def identity_changes(
    old: dict[str, Any], new: dict[str, Any], keys: tuple[str, ...] = IDENTITY_KEYS
) -> dict[str, tuple[Any, Any]]:
    """The settings two identities differ in: {key: (old, new)}."""
    keys = tuple(k for k in keys if k not in COMPARED_WHEN_RECORDED or (k in old and k in new))
    values = {k: (identity_value(old, k), identity_value(new, k)) for k in keys}
    return {k: v for k, v in values.items() if v[0] != v[1]}


def identity_diff(old: dict[str, Any], new: dict[str, Any], keys: tuple[str, ...] = IDENTITY_KEYS) -> str:
    """The differences between two identities as `key: old -> new, ...` ('' when they agree)."""
    return ", ".join(
        f"{k}: {a!r} -> {b!r}" + (f" ({_MEANS[k]})" if k in _MEANS else "")
        for k, (a, b) in identity_changes(old, new, keys).items()
    )


# What a difference in an opaque setting means, said beside its values.
_MEANS = {"prompts": "the stages' prompts changed: an upgrade, an edited task declaration or checklist"}


def read_identity(out: Path) -> dict[str, Any] | None:
    """The run.json of `out`, or None; a file that is not a JSON object is one clear error."""
    path = out / RUN
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CEJudgeError(f"{path} is unreadable ({exc}); use --force-new or another --out") from None
    if not isinstance(data, dict):
        raise CEJudgeError(f"{path} is not a run description; use --force-new or another --out")
    return data


def open_run(out: Path, identity: dict[str, Any], *, force_new: bool = False) -> None:
    """Create or reopen `out` for `identity` (call under `lock`), with any torn final line moved aside.

    Refuses an existing run with another identity unless `force_new`, which moves it aside first.
    """
    out.mkdir(parents=True, exist_ok=True)
    old = read_identity(out)
    has_records = (out / RESULTS).exists() and (out / RESULTS).stat().st_size > 0
    if old is not None and has_records:
        if force_new:
            _supersede(out)
        elif old.get("identity") != IDENTITY_FORMAT:
            raise CEJudgeError(
                f"{out} holds a run from an older cejudge that did not record all its settings "
                "(temperature, max_tokens, data fingerprint); use --force-new to move it aside, "
                "or another --out"
            )
        elif diff := identity_diff(old, identity):
            raise CEJudgeError(
                f"{out} holds a run with other settings ({diff}); use --force-new to move it aside "
                "and start over, or another --out"
            )
    elif has_records and not force_new:
        raise CEJudgeError(
            f"{out} holds records but no {RUN}, so what they were judged with is unknown; "
            "use --force-new to move them aside, or another --out"
        )
    elif force_new and any(out.iterdir()):
        _supersede(out)
    write_json_atomic(out / RUN, {"identity": IDENTITY_FORMAT, **identity})
    (out / RESULTS).touch()  # a shard with no items is still a run that merge can count
    repair_torn_tail(out / RESULTS)


def _supersede(out: Path) -> None:
    aside = out / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    aside.mkdir()
    for name in (RUN, RESULTS, SUMMARY, TORN):
        if (out / name).exists():
            os.replace(out / name, aside / name)
    print(f"warning: the previous run in {out} was moved to {aside}", file=sys.stderr)


def repair_torn_tail(path: Path) -> bool:
    """Move a torn or unreadable final line into `<path>.torn` and cut it off; True if one was."""
    if not path.exists():
        return False
    data = path.read_bytes()
    body = data.rstrip(b"\n")
    if not body:
        return False
    start = body.rfind(b"\n") + 1
    last = body[start:]
    try:
        whole = isinstance(json.loads(last), dict)
    except ValueError:
        whole = False
    if whole:  # a complete record that lacks only its newline
        if not data.endswith(b"\n"):
            with path.open("ab") as fh:
                fh.write(b"\n")
        return False
    with path.with_name(path.name + ".torn").open("ab") as fh:
        fh.write(last + b"\n")
    with path.open("r+b") as fh:
        fh.truncate(start)
        os.fsync(fh.fileno())
    print(
        f"warning: {path}: the last line was cut off (an interrupted write); moved it to "
        f"{path.name}.torn, its item is judged again",
        file=sys.stderr,
    )
    return True


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one record as one line, durably; on failure leave the file as it was and raise one line."""
    append_records(path, [record])


def append_records(path: Path, records: Sequence[dict[str, Any]]) -> None:
    """Append records, one line each, in one write and one fsync; on failure leave the file as it was
    (none of them written) and raise one line."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, start)  # no torn line: the file ends where the last whole record did
            except OSError:
                pass
            raise RunWriteError(
                f"cannot write {path} ({exc.strerror or exc}); the records already written are kept: "
                "free space (or raise the file size limit) and rerun the same command to resume"
            ) from None
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise RunWriteError(f"cannot write {path} ({exc.strerror or exc}); free space and rerun") from None


@contextmanager
def lock(out: Path, command: str = "cejudge evaluate") -> Iterator[None]:
    """Hold the run directory's exclusive lock for the block; a second writer gets one line."""
    out.mkdir(parents=True, exist_ok=True)
    file_lock = FileLock(str(out / ".lock"), timeout=0)
    try:
        file_lock.acquire()
    except Timeout:
        raise RunLockedError(
            f"{out} is in use by another writer ({_holder(out)}); wait for it to finish, or use another --out"
        ) from None
    try:
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "since": time.time()}
        (out / ".holder").write_text(json.dumps(holder) + "\n", encoding="utf-8")
        yield
    finally:
        file_lock.release()


def _holder(out: Path) -> str:
    try:
        h = json.loads((out / ".holder").read_text(encoding="utf-8"))
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(h["since"]))
        return f"pid {h['pid']} on {h['host']}, {h['command']}, since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
