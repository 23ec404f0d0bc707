"""Saved (optimized) programs: `optimized/NAME.json` (DSPy state) plus `optimized/NAME.manifest.json`.

DSPy's saved state carries instructions and field descriptions but no field names or types, and it
restores descriptions by position: a state saved for another task, an older declaration or a changed
signature would load silently and wrongly. The manifest records what the state was saved for, and
`load_program` refuses a state whose task, declaration version or stage fields differ.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_args

from cejudge_dspy.errors import CEJudgeError, TaskError
from cejudge_dspy.files import (
    make_dirs,
    read_bytes,
    read_json,
    refuse_symlink,
    write_failure,
    write_file_atomic,
)
from cejudge_dspy.tasks import TaskSpec, folder, load_task

if TYPE_CHECKING:  # DSPy is imported where a program is saved or loaded, not to name one's file
    import dspy

FORMAT = "cejudge-optimized/1"
FIX = "re-run optimize.py for this task or use --program base"
M = TypeVar("M", bound="dspy.Module")


def optimized_dir() -> Path:
    """Where optimized programs live: `$CEJUDGE_OPTIMIZED`, else the repository's `optimized/`."""
    return folder("optimized")


def default_path(task: str | TaskSpec) -> Path:
    return optimized_dir() / f"{load_task(task).name}.json"


def manifest_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.stem + ".manifest.json")


def type_name(annotation: Any) -> str:
    """`str`, `list[str]`, `Literal['A', 'B']`: stable text for comparing field types."""
    if isinstance(annotation, type) and not get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def stage_fields(program: dspy.Module) -> list[dict[str, Any]]:
    """Per predictor, in order: its attribute path and its input/output field names and types."""
    stages = []
    for name, pred in program.named_predictors():
        sig = pred.signature
        stages.append(
            {
                "name": name,
                "signature": sig.__name__,
                "inputs": [[k, type_name(f.annotation)] for k, f in sig.input_fields.items()],
                "outputs": [[k, type_name(f.annotation)] for k, f in sig.output_fields.items()],
            }
        )
    return stages


def save_program(program: dspy.Module, path: str | Path, manifest: dict[str, Any]) -> Path:
    """Write the program's DSPy state to `path` and its manifest beside it; returns the manifest path.

    An LM bound to a predictor (SIMBA binds sampling LMs to candidates) is stripped from a copy: the
    judge's LM is chosen at run time, and an engine LM cannot be serialised anyway.
    """
    path = Path(path)
    missing = [k for k in ("task", "task_version") if k not in manifest]
    if missing:
        raise CEJudgeError(f"a manifest needs {missing}; build it with OptimizeReport.manifest(...)")
    check_save_path(path)
    clean = program.deepcopy()
    stripped = [name for name, pred in clean.named_predictors() if pred.lm is not None]
    for _, pred in clean.named_predictors():
        pred.lm = None
    state_bytes = _dspy_state(clean, path)
    state = json.loads(state_bytes)
    bound = [key for key, value in state.items() if isinstance(value, dict) and value.get("lm")]
    if bound:  # cannot happen after stripping; refuse rather than ship credentials or model paths
        raise CEJudgeError(f"refusing to save {path}: predictors {bound} still carry an LM")
    write_file_atomic(path, state_bytes)  # no symlink followed, one line on a full or read-only disk
    full = {
        "format": FORMAT,
        **manifest,
        "stages": stage_fields(clean),
        "dspy_version": _dspy_version(),
        "stripped_lms": stripped,
    }
    full.setdefault("created", datetime.now(timezone.utc).isoformat(timespec="seconds"))
    target = manifest_path(path)
    write_file_atomic(target, json.dumps(full, indent=2, ensure_ascii=False) + "\n")
    return target


def check_save_path(path: str | Path) -> None:
    """One line, before anything is tuned, when a program cannot be saved at `path`: not a .json name,
    a symlink at it or at its manifest, or a folder that cannot be made."""
    path = Path(path)
    if path.suffix != ".json":
        raise CEJudgeError(f"optimized programs are saved as .json, got '{path}'; use --out NAME.json")
    if path.is_dir():
        raise CEJudgeError(f"{path} is a folder; use --out NAME.json")
    refuse_symlink(path)
    refuse_symlink(manifest_path(path))
    make_dirs(path.parent)


def _dspy_state(program: dspy.Module, path: Path) -> bytes:
    """The bytes DSPy's `save` writes for `program`, made in a fresh private folder (mkdtemp: created
    exclusively, mode 0700) beside `path`, so nothing is written through a name someone could plant."""
    try:
        scratch = Path(tempfile.mkdtemp(prefix=f".{path.stem}.", dir=path.parent))
    except OSError as exc:
        raise write_failure(path, exc) from None
    try:
        program.save(str(scratch / "state.json"))
        return (scratch / "state.json").read_bytes()
    except OSError as exc:
        raise write_failure(path, exc) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def read_manifest(path: str | Path) -> dict[str, Any]:
    target = manifest_path(path)
    if not Path(path).exists():
        raise CEJudgeError(f"optimized program '{path}' does not exist; {FIX}")
    if not target.exists():
        raise CEJudgeError(f"'{path}' has no manifest ({target.name}), so it cannot be checked; {FIX}")
    data = read_json(target, lambda line: CEJudgeError(f"manifest {line}; {FIX}"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CEJudgeError(f"manifest {target} is not a {FORMAT} manifest; {FIX}")
    stages = data.get("stages")
    if not isinstance(stages, list) or not all(
        isinstance(st, dict)
        and isinstance(st.get("name"), str)
        and all(
            isinstance(st.get(kind), list) and all(isinstance(f, list) and len(f) == 2 for f in st[kind])
            for kind in ("inputs", "outputs")
        )
        for st in stages
    ):
        raise CEJudgeError(
            f"manifest {target}: 'stages' must list each stage's name, inputs and outputs; {FIX}"
        )
    return data


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:160]


def read_state(path: str | Path, program: dspy.Module) -> dict[str, Any]:
    """The saved DSPy state at `path`, checked to be one for `program`'s stages before DSPy loads it.

    DSPy would take a truncated, empty or mistyped state with a traceback, or silently (instructions
    that are not text turn every item into an error)."""
    where = str(path)
    state = read_json(Path(path), lambda line: CEJudgeError(f"program {line}; {FIX}"))
    if not isinstance(state, dict):
        raise CEJudgeError(f"program {where} is not a saved program (a JSON {type(state).__name__}); {FIX}")
    names = [name for name, _ in program.named_predictors()]
    missing = [n for n in names if n not in state]
    extra = [k for k in state if k not in names and k != "metadata"]
    if missing or extra:
        raise CEJudgeError(
            f"program {where} does not fit this program's stages (missing {missing or 'none'}, "
            f"unknown {extra or 'none'}); {FIX}"
        )
    for name in names:
        stage = state[name]
        signature = stage.get("signature") if isinstance(stage, dict) else None
        if not isinstance(signature, dict) or not isinstance(signature.get("instructions"), str):
            raise CEJudgeError(f"program {where}: stage {name} has no text 'signature.instructions'; {FIX}")
        if not isinstance(signature.get("fields", []), list) or not isinstance(stage.get("demos", []), list):
            raise CEJudgeError(f"program {where}: stage {name} has malformed fields or demos; {FIX}")
        if any(not isinstance(f, dict) for f in signature.get("fields", [])) or any(
            not isinstance(d, dict) for d in stage.get("demos", [])
        ):
            raise CEJudgeError(f"program {where}: stage {name} has malformed fields or demos; {FIX}")
    return state


def check_manifest(manifest: dict[str, Any], spec: TaskSpec, program: dspy.Module, where: str) -> None:
    """Raise TaskError naming the first difference between the saved program and the current one."""
    if manifest.get("task") != spec.name:
        raise TaskError(f"{where} was optimized for task '{manifest.get('task')}', not '{spec.name}'; {FIX}")
    if manifest.get("task_version") != spec.version:
        raise TaskError(
            f"{where} was optimized for declaration version {manifest.get('task_version')} of "
            f"'{spec.name}', which is now version {spec.version}; {FIX}"
        )
    saved = {s["name"]: s for s in manifest.get("stages", [])}
    current = stage_fields(program)
    names_now = [s["name"] for s in current]
    if list(saved) != names_now:
        raise TaskError(f"{where} has stages {list(saved)} but the program has {names_now}; {FIX}")
    for stage in current:
        for kind in ("inputs", "outputs"):
            before = [tuple(f) for f in saved[stage["name"]][kind]]
            now = [tuple(f) for f in stage[kind]]
            if before != now:
                diff = next(
                    (
                        f"{b[0]}: {b[1]} -> {n[0]}: {n[1]}"
                        for b, n in zip(before, now, strict=False)
                        if b != n
                    ),
                    f"{len(before)} -> {len(now)} fields",
                )
                raise TaskError(f"{where}: stage {stage['name']} {kind} changed ({diff}); {FIX}")


def load_into(program: M, task: str | TaskSpec, path: str | Path) -> M:
    """Load a checked state into an already built program (in place) and return it."""
    spec = load_task(task)
    check_manifest(read_manifest(path), spec, program, str(path))
    state = read_state(path, program)
    if any(isinstance(v, dict) and v.get("lm") for v in state.values()):
        raise CEJudgeError(f"{path} carries a bound LM; refusing to load it. {FIX}")
    try:
        program.load(str(path))
    except Exception as exc:  # DSPy's loader: a shape read_state did not foresee
        raise CEJudgeError(f"program {path} could not be loaded ({_one_line(exc)}); {FIX}") from None
    return program


def auto_choice(task: str | TaskSpec) -> tuple[Path | None, str | None]:
    """What `--program auto` loads: `optimized/<task>.json` when its manifest shows a held-out gain on the
    task's metric (tuning.gain), else the base program (None) and, when a file was passed over, why."""
    path = default_path(task)
    if not path.exists():
        return None, None
    gain = read_manifest(path).get("held_out")
    if isinstance(gain, dict) and gain.get("significant") is True:
        return path, None
    why = (
        gain.get("reason")
        if isinstance(gain, dict) and gain.get("reason")
        else "its manifest records no held-out comparison (it was tuned before that rule)"
    )
    return None, f"optimized/{path.name} not used: {why}"


def resolve(task: str | TaskSpec, program: str | Path = "auto") -> Path | None:
    """The state file `program` names: None for the base program ("base", or "auto" without a tuned program
    that showed a held-out gain). An explicit path is loaded whatever its manifest says about gain."""
    if str(program) == "base":
        return None
    if str(program) == "auto":
        return auto_choice(task)[0]
    return Path(program)


def program_identity(task: str | TaskSpec, program: str | Path = "auto") -> str:
    """What `program` resolves to now, for run records: "base", or the state file with a short content hash.

    "auto" alone is not an identity: it means the base program until a tuned one is saved, so a run
    started before tuning must not resume with the tuned program (the runner compares this string).
    """
    path = resolve(task, program)
    if path is None:
        return "base"
    if not path.exists():
        raise CEJudgeError(f"program file '{path}' does not exist; use --program auto|base|PATH.json")
    fix = lambda line: CEJudgeError(f"program {line}; use --program auto|base|PATH.json")  # noqa: E731
    digest = hashlib.sha256(read_bytes(path, fix)).hexdigest()[:12]  # a pipe or /dev/zero refused
    # Location-free for the tuned programs folder, so a moved checkout still resumes its runs.
    shown = (
        f"optimized/{path.name}" if path.resolve().parent == optimized_dir().resolve() else path.as_posix()
    )
    return f"{shown}@{digest}"


def for_task(cls: type[M], task: str | TaskSpec, program: str | Path = "auto", **options: Any) -> M:
    """`cls(task, **options)` with the program `program` resolves to loaded (see `program_for_task`)."""
    judge = cls(task, **options)  # type: ignore[call-arg]
    path = resolve(task, program)
    return judge if path is None else load_into(judge, task, path)


def _dspy_version() -> str:
    import dspy

    return dspy.__version__
