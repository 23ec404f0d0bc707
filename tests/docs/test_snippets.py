"""Every command and Python snippet of the README and the docs runs, on the simulated backbone.

The convention (tests/docs/snippets.py, docs/contributing-docs.md): ```bash blocks are commands run from
the repository root, ```python blocks run as they are, ```text blocks are output; a block after
`<!-- skip-snippet: REASON -->` is not run. Each page runs in its own working directory, a copy of the
repository's top level made of links (so `runs/` a page writes stays out of the checkout), in which
`../shared` is the shared data folder beside the repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.cli import main
from tests import support
from tests.docs import snippets
from tests.support.fakes import fake_lm

PAGES = snippets.pages()
README = support.REPO / "README.md"
NOT_LINKED = {".git", ".venv", ".ci-venv", "runs", "site", ".pytest_cache", ".ruff_cache", "__pycache__"}
SUBPROCESS_TIMEOUT_S = 1800


def _rel(path: Path) -> str:
    return path.relative_to(support.REPO).as_posix()


def _cli_commands_taking_lm() -> set[str]:
    import argparse

    from cejudge_dspy.cli._app import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name for name, p in sub.choices.items() if any("--lm" in a.option_strings for a in p._actions)}


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    work.mkdir()
    for entry in support.REPO.iterdir():
        if entry.name not in NOT_LINKED and not entry.name.endswith(".egg-info"):
            (work / entry.name).symlink_to(entry)
    shared = support.REPO.parent / "shared"
    if shared.is_dir():
        (tmp_path / "shared").symlink_to(shared)
    return work


def _simulated_backbones(monkeypatch: pytest.MonkeyPatch) -> None:
    """`use_backbone(...)` and `make_lm(...)`, whatever backbone a snippet names, give the simulated one."""
    import cejudge_dspy.backbones as face
    from cejudge_dspy.backbones import _spec

    use_backbone, make_lm = _spec.use_backbone, _spec.make_lm
    for module in (face, _spec):
        monkeypatch.setattr(
            module, "use_backbone", lambda spec="embedded", **kw: use_backbone(snippets.SUBSTITUTE)
        )
        monkeypatch.setattr(module, "make_lm", lambda spec="embedded", **kw: make_lm(snippets.SUBSTITUTE))


def _run(
    argv: list[str], block: snippets.Block, work: Path, env: dict[str, str], mp: pytest.MonkeyPatch
) -> None:
    where = f"{block.where}: {' '.join(argv)}"
    step_env, argv = snippets.split_env(argv)
    if snippets.is_setup_step(argv):
        unknown = set(snippets.named_extras(argv)) - _extras()
        assert not unknown, f"{where}: pyproject.toml declares no extra {sorted(unknown)}"
        return
    if argv[0] == "export":
        for name, value in (word.partition("=")[::2] for word in argv[1:]):
            env[name] = value
            mp.setenv(name, value)
        return
    if argv[0] == "cejudge":
        args = snippets.with_simulated_lm(argv[1:], add=argv[1:2] and argv[1] in _cli_commands_taking_lm())
        with mp.context() as m:
            for name, value in step_env.items():
                m.setenv(name, value)
            assert main(args) == 0, f"{where} (run as cejudge {' '.join(args)}) exited non-zero"
        return
    python_runs = argv[0] in ("python", "python3") and (
        argv[1:2] == ["optimize.py"]
        or argv[1:2] == ["-m"]
        and re.match(r"(benchmarks\.|cejudge_dspy$)", argv[2])
    )
    assert python_runs, (
        f"{where}: the tests cannot run this command; put `<!-- skip-snippet: REASON -->` before the block"
    )
    args = [sys.executable, *snippets.with_simulated_lm(argv[1:], add=False)]
    done = subprocess.run(
        args,
        cwd=work,
        env={**os.environ, **env, **step_env},
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert done.returncode == 0, (
        f"{where} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )


def _extras() -> set[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data = tomllib.loads((support.REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"].get("optional-dependencies", {}))


def _runs(page: Path) -> bool:
    return any(b.runs for b in snippets.blocks(page))


@pytest.mark.parametrize("page", [p for p in PAGES if _runs(p)], ids=_rel)
def test_page_snippets_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's bash and python blocks, in document order, in one working directory and namespace."""
    runnable = [b for b in snippets.blocks(page) if b.runs]
    if any("../shared/" in b.code for b in runnable) and not support.SHARED_DATA.is_dir():
        pytest.skip(f"{_rel(page)} uses ../shared/, and {support.SHARED_DATA} is not present")
    work = _workdir(tmp_path)
    monkeypatch.chdir(work)
    _simulated_backbones(monkeypatch)
    namespace: dict[str, Any] = {"__name__": "__snippet__"}
    env: dict[str, str] = {}
    for block in runnable:
        if block.lang == "python":
            exec(compile(block.code, block.where, "exec"), namespace)
            continue
        try:
            argvs = snippets.commands(block.code)
        except ValueError as exc:
            pytest.fail(f"{block.where}: {exc}")
        assert argvs, f"{block.where}: a bash block without a command"
        for argv in argvs:
            _run(argv, block, work, env, monkeypatch)


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_markers_are_well_formed(page: Path) -> None:
    """A skip says why and marks a block that would run; an output marker follows a command block."""
    text = page.read_text(encoding="utf-8")
    blocks = snippets.blocks(page)
    skips = [b for b in blocks if b.skip_reason is not None]
    assert len(skips) == len(re.findall(r"^<!--\s*skip-snippet", text, re.M)), (
        f"{_rel(page)}: a `skip-snippet` comment must be the line right before a code block"
    )
    for b in skips:
        assert len(b.skip_reason) >= 10, f"{b.where}: `<!-- skip-snippet: REASON -->` needs a reason"
        assert b.lang in snippets.RUN_LANGUAGES, f"{b.where}: only bash and python blocks run; no skip needed"
    outputs = [i for i, b in enumerate(blocks) if b.is_output_of_previous]
    assert len(outputs) == len(re.findall(r"^<!--\s*output-of-previous", text, re.M)), (
        f"{_rel(page)}: an `output-of-previous` comment must be the line right before a code block"
    )
    for i in outputs:
        assert blocks[i].lang == "text", f"{blocks[i].where}: a shown output is a ```text block"
        assert i > 0 and blocks[i - 1].lang == "bash", f"{blocks[i].where}: no ```bash block before it"
        assert _shown_command(blocks[i - 1]), f"{blocks[i - 1].where}: no `cejudge` command in the block"
    for b in blocks:
        assert b.lang not in snippets.REFUSED_LANGUAGES, (
            f"{b.where}: ```{b.lang} is neither run nor output: write ```bash or ```python (or ```text)"
        )


def _shown_command(block: snippets.Block) -> list[str] | None:
    """The last `cejudge` command of a block (after its setup steps)."""
    found = [snippets.split_env(a)[1] for a in snippets.commands(block.code)]
    return next((a for a in reversed(found) if a and a[0] == "cejudge"), None)


def test_readme_python_quickstart_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's quickstart on a scripted backbone whose answers are known, so its printout is checked."""
    from cejudge_dspy.backbones import _spec

    lm, engine = fake_lm()
    monkeypatch.setattr(_spec, "make_lm", lambda spec, **kw: lm)
    code = next(b for b in snippets.blocks(README) if b.lang == "python" and b.runs)
    exec(compile(code.code, code.where, "exec"), {})
    out = capsys.readouterr().out
    assert "tie False" in out and "5 ok" in out  # the fake says "A" in both orders; scores 5
    # The fake grades both responses "yes", so the pairwise judgment breaks the tie: 9 + 2 calls.
    assert (
        "verdict (B shown first) · 11/11 calls · 0:0" in out
        or "verdict (A shown first) · 11/11 calls · 0:0" in out
    )
    assert engine.calls


def test_readme_runs_the_test_command_ci_runs() -> None:
    """CI's .ci/run runs the README's test command as the README spells it (no arguments: a bare
    `python -m pytest` once failed where CI's `-q` passed), after installing at least the extras it names."""
    text = README.read_text(encoding="utf-8")
    command = '. .venv/bin/activate && pip install -e ".[dev]" && python -m pytest'
    assert f"```bash\n{command}\n```" in text
    ci = (support.REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r'^PYTEST_ADDOPTS="[^"]*" python -m pytest$', ci, re.MULTILINE), ci
    assert re.search(r'pip install -q -e "\.\[[^"]*\bdev\b[^"]*\]"', ci), ci


def test_readme_is_short() -> None:
    """The README says what the package is for and where to read on; the manual lives in docs/."""
    size = len(README.read_bytes())
    assert size <= 12_000, f"README.md is {size} bytes; move detail into a docs page"
    assert not re.search(
        r"\b\d{1,2} (January|February|March|April|May|June|July|August|September|October|"
        r"November|December) 20\d\d\b",
        README.read_text(encoding="utf-8"),
    ), "a dated measurement belongs in docs/measurements/, not the README"


def test_the_readmes_links_resolve() -> None:
    """The README is not part of the site, so `mkdocs build --strict` does not check its links: this does."""
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links, "the README links nowhere"
    for link in links:
        if re.match(r"[a-z]+://", link):
            continue
        path = (support.REPO / link.split("#")[0]).resolve()
        assert path.exists(), f"README.md links to {link}, which does not exist"
