"""The package's architecture as tests: no private names across subpackages, one road to a backbone for
tuning and judging, and a built wheel that carries its tasks and runs outside the checkout."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import dspy
import pytest

from cejudge_dspy.cli import main
from cejudge_dspy.errors import CEJudgeError
from tests import support
from tests.support.fakes import StopAfterReading, spy_on_adapter

ROOT = support.REPO
PACKAGE = ROOT / "cejudge_dspy"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _package(module: str) -> str:
    """The package that owns a module: itself for a package, the folder for a module in it, and for what
    lies in a private folder (a package's private modules grouped, as `judges._machinery`) the package
    above it: its face is the one it serves."""
    parts = module.split(".")
    private = next((i for i, part in enumerate(parts) if _is_private(part)), None)
    if private is not None:
        return ".".join(parts[:private])
    return module if ROOT.joinpath(*parts).is_dir() else module.rpartition(".")[0]


def _inside(importer: str, package: str) -> bool:
    owner = _package(importer)
    return owner == package or owner.startswith(package + ".")


def _private_reach(importer: str, target: str, names: list[str]) -> list[str]:
    """What `from target import names` in `importer` reaches that is private to a package the importer
    is not inside of: a private module on the path, or a private name of the target's package."""
    found = []
    parts = target.split(".")
    # What lies under the first private part is private to the package above it, however deep.
    first = next((i for i, part in enumerate(parts) if _is_private(part)), None)
    if first is not None and not _inside(importer, ".".join(parts[:first])):
        found.append(f"{importer} imports the private module {target}")
    for name in names:
        if _is_private(name) and not _inside(importer, _package(target)):
            found.append(f"{importer} imports {target}.{name}")
    return found


def _imports() -> list[tuple[str, ast.ImportFrom]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cejudge_dspy"):
                found.append((_module_name(path), node))
    return found


def test_no_module_imports_a_private_name_from_another_package() -> None:
    found = []
    for importer, node in _imports():
        assert node.level == 0, f"{importer}: relative import"
        found += _private_reach(importer, node.module or "", [a.name for a in node.names])
    assert found == []


def test_the_private_name_check_can_fail() -> None:
    assert _package("cejudge_dspy.judges.checkeval._judge") == "cejudge_dspy.judges.checkeval"
    assert _package("cejudge_dspy.judges") == "cejudge_dspy.judges"
    assert _package("cejudge_dspy.errors") == "cejudge_dspy"
    assert _package("cejudge_dspy.judges._machinery._stage") == "cejudge_dspy.judges"
    assert _package("cejudge_dspy.judges._machinery") == "cejudge_dspy.judges"
    # Inside a package (and its subpackages) its private modules are open; from outside, only its face.
    stage = "cejudge_dspy.judges._machinery._stage"  # a private folder of judges: open to all of judges
    assert _private_reach("cejudge_dspy.judges.cejudge._pairwise", stage, ["Stage"]) == []
    assert _private_reach("cejudge_dspy.judges.direct._judge", stage, ["Stage"]) == []
    assert _private_reach("cejudge_dspy.cli._app", stage, ["Stage"]) != []
    assert _private_reach("cejudge_dspy.evaluate._runner", stage, ["Stage"]) != []
    assert _private_reach("cejudge_dspy.cli._app", "cejudge_dspy.usage", ["_calls"]) != []
    assert _private_reach("cejudge_dspy.usage._accounting", "cejudge_dspy.usage._calls", ["_watch"]) == []


def test_the_package_root_holds_only_the_public_api_and_the_errors() -> None:
    files = {p.name for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py"}
    assert files == {"__init__.py", "errors.py"}


def test_modules_inside_a_package_are_private_and_no_module_re_exports() -> None:
    public, re_exports = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in {"__init__.py", "__main__.py"} or path.parent == PACKAGE:
            continue
        if not _is_private(path.stem):
            public.append(_module_name(path))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
            for n in tree.body
        ):
            re_exports.append(_module_name(path))
    assert public == [] and re_exports == []


def test_every_public_name_has_one_import_path() -> None:
    """Across packages a function or class is imported from one place: the face of its package."""
    import importlib

    paths: dict[int, set[str]] = {}
    for importer, node in _imports():
        target = node.module or ""
        if target == "cejudge_dspy" or _inside(importer, _package(target)):
            continue
        module = importlib.import_module(target)
        for alias in node.names:
            obj = getattr(module, alias.name)
            if callable(obj) and not isinstance(obj, type(importlib)):
                paths.setdefault(id(obj), set()).add(f"{target}.{alias.name}")
    assert [sorted(p) for p in paths.values() if len(p) > 1] == []


def test_no_function_in_the_package_runs_over_80_lines() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > 80:
                    long.append(f"{_module_name(path)}.{node.name}: {lines} lines")
    assert long == []


def test_tuning_and_judging_a_local_model_use_the_same_adapter(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "pairs.jsonl"
    rows = [
        {
            "id": f"p{n}",
            "prompt": f"q{n}",
            "response_a": "a",
            "response_b": "b",
            "label": "A",
            "language": "en",
        }
        for n in range(6)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    seen: dict[str, Any] = {}
    spy_on_adapter(monkeypatch, seen)

    class Stop(StopAfterReading, CEJudgeError):
        pass

    def tuning(*_: Any, **__: Any) -> Any:
        seen["optimize"] = dspy.settings.adapter
        raise Stop("stop after reading the adapter")

    monkeypatch.setattr("cejudge_dspy.tuning.optimize", tuning)  # `cejudge optimize` imports it when it runs
    judge = ["judge", "--task", "chat", "--instruction", "q", "--response-a", "a", "--response-b", "b"]
    assert main([*judge, "--lm", "embedded"]) == 2
    tune = ["optimize", "--task", "chat", "--data", str(data), "--train", "2"]
    assert main([*tune, "--dev", "1", "--budget", "4", "--lm", "embedded", "--yes"]) == 2
    assert type(seen["judge"]) is type(seen["optimize"]) is dspy.JSONAdapter
    # An HTTP backbone keeps DSPy's default adapter on both roads.
    seen.clear()
    assert main([*judge, "--lm", "openai/x", "--api-base", "http://127.0.0.1:9/v1"]) == 2
    assert main([*tune, "--dev", "1", "--budget", "4", "--lm", "openai/x", "--yes"]) == 2
    assert seen["judge"] is None and seen["optimize"] is None
    capsys.readouterr()


def _wheel(tmp: Path) -> Path:
    # Build from a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
    source, out = tmp / "source", tmp / "dist"
    for name in ("pyproject.toml", "README.md", "cejudge_dspy", "programs", "optimized", "checklists"):
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.gepa")
            )
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    return next(out.glob("cejudge_dspy-*.whl"))


def test_the_built_wheel_ships_tasks_and_judges_outside_the_checkout(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The dependencies come from this environment's site-packages (no index needed); a path listed in a
    # .pth file is not scanned for .pth files itself, so this environment's editable install stays out.
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)]
    subprocess.run(pip, check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEJUDGE_") and k != "PYTHONPATH"}
    outside = tmp_path / "elsewhere"
    outside.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(venv / "bin" / "cejudge"), *args],
            cwd=outside,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    where = subprocess.run(
        [str(python), "-c", "import cejudge_dspy, sys; print(cejudge_dspy.__file__)"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(site), where
    tasks = run("tasks")
    assert tasks.returncode == 0, tasks.stderr
    for name in ("chat", "literary", "reasoning", "summeval", "topical_chat"):
        assert name in tasks.stdout
    args = ["--task", "chat", "--instruction", "q", "--response-a", "a", "--response-b", "b", "--json"]
    judged = run("judge", *args, "--lm", "simulated:0")
    assert judged.returncode in (0, 1), judged.stderr
    assert json.loads(judged.stdout)["mode"] == "pairwise"
    # The tuned-programs folder ships too (found through the import system, inside the installed package).
    folder = subprocess.run(
        [str(python), "-c", "from cejudge_dspy.tasks._resources import folder; print(folder('optimized'))"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert folder.startswith(site) and Path(folder, "README.md").is_file(), folder
