"""The corpus of bad inputs issue #11 asks about: every option, declaration, program, manifest, checklist,
data file and run directory a user (or a fault) can get wrong. Each case builds its files under a fresh
folder and names the `cejudge` arguments and environment that read them.

`run_case` runs one in-process and classifies it: "one line" (a non-zero exit, one `error:` line on
stderr, and no run directory written), "traceback" (an exception escaped), or "accepted" (exit 0).
test_faults.py asserts "one line" for all; benchmarks/experiments/integrity_table.py prints the counts.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import FIXTURES as _FIXTURES
from tests.support import REPO

FIXTURES = _FIXTURES / "data"
SIM = ["--lm", "simulated:0", "--bootstrap", "0"]


@dataclass
class Case:
    name: str
    argv: Callable[[Path], list[str]]  # builds files under the folder, returns the arguments
    env: Callable[[Path], dict[str, str]] = field(default=lambda d: {})


def good_data(d: Path, n: int = 12, name: str = "good.jsonl") -> Path:
    """A valid pairwise file of `n` items (each its own instruction, so shards split them)."""
    path = d / name
    if not path.exists():
        path.write_text("".join(json.dumps({**ROW, "prompt": f"question {i}"}) + "\n" for i in range(n)))
    return path


def evaluate(*extra: str, task: str = "chat", data: str | Path | None = None) -> Callable[[Path], list[str]]:
    return lambda d: [
        "evaluate",
        "--task",
        task,
        "--data",
        str(data or good_data(d)),
        "--out",
        str(d / "run"),
        *SIM,
        *extra,
    ]


def data_file(name: str, content: bytes | str, task: str = "chat", *extra: str) -> Case:
    def argv(d: Path) -> list[str]:
        path = d / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return evaluate(*extra, task=task, data=path)(d)

    return Case(f"data: {name} {content[:40]!r}", argv)


ROW = {"prompt": "p", "chosen": "a", "rejected": "b", "language": "en"}


def rows(*changes: dict) -> str:
    return "".join(json.dumps({**ROW, "id": f"r{i}", **c}) + "\n" for i, c in enumerate(changes))


def declaration(text: bytes | str, name: str = "broken") -> Case:
    """A broken declaration beside the shipped ones; `tasks show` of it must be one line naming it."""

    def argv(d: Path) -> list[str]:
        folder = d / "programs"
        shutil.copytree(REPO / "programs", folder)
        (folder / f"{name}.toml").write_bytes(text if isinstance(text, bytes) else text.encode())
        return ["tasks", "show", name]

    return Case(f"declaration: {text[:50]!r}", argv, lambda d: {"CEJUDGE_PROGRAMS": str(d / "programs")})


GOOD_DECL = 'name = "broken"\nmode = "pairwise"\nmetric = "accuracy"\ntask = "t"\n'


def program(
    state: Callable[[dict], object] | bytes, manifest: Callable[[dict], object] | None = None
) -> Case:
    """A saved program derived from the hand-written chat program, loaded with --program PATH."""

    def argv(d: Path) -> list[str]:
        from cejudge_dspy.judges import save_program
        from cejudge_dspy.judges.cejudge import PairwiseJudge

        save_program(PairwiseJudge("chat"), d / "base.json", {"task": "chat", "task_version": 1})
        base = json.loads((d / "base.json").read_text())
        meta = json.loads((d / "base.manifest.json").read_text())
        path = d / "p.json"
        path.write_bytes(state if isinstance(state, bytes) else json.dumps(state(base)).encode())
        if manifest is not False:
            (d / "p.manifest.json").write_text(json.dumps(manifest(meta) if manifest else meta))
        return evaluate("--program", str(path))(d)

    return Case(f"program: {getattr(state, '__name__', 'bytes')}/{getattr(manifest, '__name__', '-')}", argv)


def checklist(content: Callable[[dict], object] | bytes) -> Case:
    def argv(d: Path) -> list[str]:
        (d / "cl").mkdir()
        base = json.loads((REPO / "checklists" / "summeval.json").read_text())
        data = content if isinstance(content, bytes) else json.dumps(content(base)).encode()
        (d / "cl" / "summeval.json").write_bytes(data)
        return evaluate("--method", "checkeval", task="summeval", data=FIXTURES / "summeval.jsonl")(d)

    return Case("checklist", argv, lambda d: {"CEJUDGE_CHECKLISTS": str(d / "cl")})


def _set(path: str, value: object) -> Callable[[dict], dict]:
    """Set a value at a `/`-separated key path (digits index lists)."""

    def change(data: dict) -> dict:
        target = data
        *parents, last = path.split("/")
        for key in parents:
            target = target[key] if not key.isdigit() else target[int(key)]
        target[last if not last.isdigit() else int(last)] = value
        return data

    change.__name__ = f"{path}={value!r}"[:40]
    return change


def _drop_kept(data: dict) -> dict:
    for q in data["questions"]:
        q["kept"] = False
    return data


def CASES() -> list[Case]:  # noqa: N802 - a table, built fresh per run
    opts = [
        ["--lm", "simulatd:5"],
        ["--lm", "gguf:/nonexistent.gguf"],
        ["--lm", "gguf:"],
        ["--lm", ""],
        ["--lm", "simulated:abc"],
        ["--lm", "simulated:-5"],
        ["--lm", "embedded", "--api-base", "http://127.0.0.1:9/v1"],
        ["--lm", "simulated:0", "--api-base", "http://127.0.0.1:9/v1"],
        ["--translator", "deepl"],
        ["--method", "directt"],
        ["--program", "/nonexistent.json"],
        ["--bootstrap", "-5"],
        ["--concurrency", "0"],
        ["--limit", "0"],
        ["--limit", "-3"],
        ["--max-tokens", "0"],
        ["--temperature", "-1"],
        ["--shard", "0/4"],
        ["--shard", "5/4"],
        ["--shard", "abc"],
        ["--shard", "1/0"],
        ["--field", "nokey"],
        ["--field", "foo=bar"],
        ["--field", "instruction="],
        ["--field", "instruction=nosuchcolumn"],
        ["--const", "label"],
        ["--language", "xx"],
        ["--language", "ja"],
        ["--subset", "nosuchsubset"],
    ]
    cases = [Case(f"option: {' '.join(o)}", evaluate(*o)) for o in opts]
    cases += [
        Case("option: --task caht", lambda d: evaluate()(d)[:2] + ["caht"] + evaluate()(d)[3:]),
        Case(
            "option: no --task", lambda d: ["evaluate", "--data", str(good_data(d)), "--out", str(d / "run")]
        ),
        Case("option: --data missing", evaluate(data="/nonexistent/x.jsonl")),
        Case("option: --data empty dir", lambda d: (d / "e").mkdir() or evaluate(data=d / "e")(d)),
        Case(
            "option: --data .txt", lambda d: (d / "x.txt").write_text("x") and evaluate(data=d / "x.txt")(d)
        ),
    ]
    cases += [
        data_file("empty.jsonl", ""),
        data_file("blank.jsonl", "\n\n  \n"),
        data_file("empty.csv", ""),
        data_file("header.csv", "prompt,chosen,rejected,language\n"),
        data_file("torn.jsonl", rows({}) + '{"prompt": "p", "cho'),
        data_file("list.jsonl", "[1]\n"),
        data_file("latin1.jsonl", rows({"prompt": "x"}).encode().replace(b'"x"', b'"\xe9"')),
        data_file("binary.parquet", b"\x00\x01garbage"),
        data_file("nocols.jsonl", '{"a": 1}\n'),
        data_file("label.jsonl", rows({"label": "C"}), "chat", "--field", "label=label"),
        # An empty label cell is no bad input: it leaves its item unlabelled (a partly labelled file, #48;
        # tests/data/test_declared_constants.py).
        data_file("dup.jsonl", rows({"id": "x"}, {"id": "x"}), "chat", "--field", "id=id"),
        data_file("emptytext.jsonl", rows({"prompt": " "})),
        data_file("dicttext.jsonl", rows({"chosen": {"a": 1}})),
        data_file("lang.jsonl", rows({"language": "Klingonese"})),
        data_file("object.json", json.dumps({"prompt": "p"})),
        data_file("de-en.csv", "source;tgt;rating\ns;t;abc\n", "literary"),
        data_file(
            "noscore.jsonl", json.dumps({"source": "s", "system_output": "o", "scores": {"x": 1}}), "summeval"
        ),
    ]
    cases += [
        declaration(GOOD_DECL + '[dataset]\nhubid = "x"\n'),
        declaration(GOOD_DECL + "[dataset]\nsplit = 3\n"),
        declaration(GOOD_DECL.replace('mode = "pairwise"', 'mode = "pointwise"') + '[scale]\nx = "bad"\n'),
        declaration(GOOD_DECL.replace('mode = "pairwise"', 'mode = "pointwise"') + "[scale]\n1 = 5\n"),
        declaration(GOOD_DECL + 'version = "one"\n'),
        declaration(GOOD_DECL + "version = 1.5\n"),
        declaration(GOOD_DECL + "[dataset.fields]\ninstruction = 3\n"),
        declaration(GOOD_DECL + '[dataset.fields]\nnosuch = "x"\n'),
        declaration(GOOD_DECL + "[dataset.constants]\nlabel = [1]\n"),
        declaration(GOOD_DECL.encode() + b'description = "\xff\xfe"\n'),
        declaration("name = \n"),
        declaration(GOOD_DECL.replace("pairwise", "both")),
        declaration(GOOD_DECL.replace("accuracy", "f1")),
        declaration(GOOD_DECL.replace('name = "broken"\n', "")),
        declaration(GOOD_DECL.replace('task = "t"\n', "")),
        declaration(GOOD_DECL + 'dataset = "x"\n'),
        declaration(GOOD_DECL + "criteria = 3\n"),
        declaration(GOOD_DECL + 'dimensions = "x"\n'),
        declaration(GOOD_DECL + '[[dimensions]]\nname = "d"\ndefinition = "x"\nsubdimensions = [1]\n'),
        declaration(
            GOOD_DECL + '[[dimensions]]\nname = "d"\ndefinition = "x"\n'
            '[[dimensions.subdimensions]]\nname = "s"\nseeds = [1]\n'
        ),
        declaration(GOOD_DECL.replace('"broken"', '"chat"')),
    ]
    cases += [
        program(b'{"concepts.predict": {"tra'),
        program(lambda s: []),
        program(lambda s: {}),
        program(b"\x89PNG\r\n\x1a\n\x00\x00binary"),
        program(_set("judge.predict/signature/instructions", 123)),
        program(_set("judge.predict/signature", "x")),
        program(_set("judge.predict/demos", "x")),
        program(_set("judge.predict", 5)),
        program(lambda s: s, _set("stages", "oops")),
        program(lambda s: s, _set("stages/0", "oops")),
        program(lambda s: s, _set("task", "reasoning")),
        program(lambda s: s, _set("task_version", 7)),
        program(lambda s: s, _set("format", "other")),
        program(lambda s: s, False),  # no manifest
    ]
    cases += [
        checklist(lambda c: [1]),
        checklist(lambda c: {}),
        checklist(_drop_kept),
        checklist(_set("questions/0/text", None)),
        checklist(_set("questions/0/text", "")),
        checklist(_set("questions", "x")),
        checklist(_set("questions/0", 3)),
        checklist(_set("task", "chat")),
        checklist(b"\xff\xfe not json"),
        checklist(b'{"task": "summeval", "vers'),
    ]
    return cases + RUN_CASES()


def _shard_runs(d: Path, n: int, ks: list[int], **extra: list[str]) -> list[str]:
    from cejudge_dspy.cli import main

    paths = []
    for k in ks:
        out = d / f"s{k}of{n}{len(extra.get(str(k), []))}"
        argv = evaluate("--shard", f"{k}/{n}", *extra.get(str(k), []))(d)
        argv[argv.index("--out") + 1] = str(out)
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 0
        paths.append(str(out))
    return paths


def _results_without_run_json(d: Path) -> list[str]:
    paths = _shard_runs(d, 2, [1, 2])
    (Path(paths[1]) / "run.json").unlink()
    return paths


def merge(build: Callable[[Path], list[str]], *extra: str) -> Callable[[Path], list[str]]:
    return lambda d: ["merge", *build(d), "--out", str(d / "run"), *extra]


def _corrupt_middle(d: Path) -> list[str]:
    from cejudge_dspy.cli import main

    argv = evaluate()(d)
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        main(argv)
    lines = (d / "run" / "results.jsonl").read_text().splitlines()
    lines[2] = lines[2][:30]
    (d / "run" / "results.jsonl").write_text("\n".join(lines) + "\n")
    shutil.move(d / "run", d / "old")
    return [*argv[:-6], "--out", str(d / "old"), *SIM]


def RUN_CASES() -> list[Case]:  # noqa: N802
    return [
        Case("merge: shards 1+2 of 4", merge(lambda d: _shard_runs(d, 4, [1, 2]))),
        Case("merge: 1/4 with 2/2", merge(lambda d: _shard_runs(d, 4, [1]) + _shard_runs(d, 2, [2]))),
        Case(
            "merge: other seed",
            merge(lambda d: _shard_runs(d, 2, [1]) + _shard_runs(d, 2, [2], **{"2": ["--seed", "7"]})),
        ),
        Case("merge: a folder without run.json", merge(lambda d: [str((d / "x").mkdir() or d / "x")])),
        Case("merge: results without run.json", merge(_results_without_run_json)),
        Case("merge: a file", merge(lambda d: [str(good_data(d))])),
        Case("merge: not run directories", merge(lambda d: [str(d / "nope1"), str(d / "nope2")])),
        Case(
            "merge: other data file",
            merge(
                lambda d: (
                    _shard_runs(d, 2, [1])
                    + _shard_runs(d, 2, [2], **{"2": ["--data", str(good_data(d, 9, "other.jsonl"))]})
                )
            ),
        ),
        Case(
            "merge: other backbone",
            merge(lambda d: _shard_runs(d, 2, [1]) + _shard_runs(d, 2, [2], **{"2": ["--max-tokens", "9"]})),
        ),
        Case("merge: into a non-empty --out", lambda d: ["merge", *_shard_runs(d, 1, [1]), "--out", str(d)]),
        Case("merge: one shard twice", merge(lambda d: _shard_runs(d, 2, [1]) * 2)),
        Case("run dir: corrupt middle line", _corrupt_middle),
    ]


def run_case(case: Case, folder: Path) -> tuple[str, str]:
    """("one line" | "traceback" | "accepted" | "wrote output", detail) for one case, in-process."""
    from cejudge_dspy.cli import main
    from cejudge_dspy.tasks import _catalog

    folder.mkdir(parents=True, exist_ok=True)
    env = case.env(folder)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    _catalog._registry.cache_clear()
    err, out = io.StringIO(), io.StringIO()
    try:
        argv = case.argv(folder)
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
    except BaseException as exc:  # noqa: BLE001 - what escapes is the finding
        return "traceback", f"{type(exc).__name__}: {exc}"
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        _catalog._registry.cache_clear()
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    if code == 0:
        return "accepted", err.getvalue()[-300:]
    if "Traceback" in err.getvalue() or not lines or not lines[-1].startswith("error: "):
        return "traceback", err.getvalue()[-300:]
    if (folder / "run" / "run.json").exists() or (folder / "run" / "results.jsonl").exists():
        return "wrote output", lines[-1]
    return "one line", lines[-1]
