"""The code blocks of the README and the docs, and how a test runs them (docs/contributing-docs.md).

- ```bash blocks hold commands run from the repository root: one command per line, `\\` continuations,
  `#` comments, commands chained with `&&`. Setting up (`python3 -m venv`, `. .venv/bin/activate`,
  `pip install`) is taken as done: the tests run inside the installed environment (the extras a
  `pip install -e ".[...]"` names must exist). `cejudge ...` runs in-process; `python -m benchmarks.NAME`,
  `python optimize.py` and `python -m cejudge_dspy` run as subprocesses; `export NAME=VALUE` sets a
  variable for the block's later commands. Anything else fails the test: mark the block skipped.
- On a `cejudge` command whose parser takes `--lm`, `--lm embedded` or a missing `--lm` becomes
  `--lm simulated:0`; on the other commands, `--lm embedded` does.
- ```python blocks run as they are, with `use_backbone` and `make_lm` handing out the simulated backbone
  whatever backbone they name. The blocks of one page share one namespace and one working directory, in
  document order.
- A block preceded by `<!-- skip-snippet: REASON -->` is not run; `<!-- output-of-previous -->` before a
  ```text block says it is the real output of the command block before it (checked on the embedded model
  by a slow test).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests import support

SKIP = re.compile(r"^<!--\s*skip-snippet:(?P<reason>.*?)-->\s*$")
OUTPUT_OF_PREVIOUS = re.compile(r"^<!--\s*output-of-previous\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*$")
RUN_LANGUAGES = ("bash", "python")
# Spellings that would look like commands or code but would silently not run: use bash / python.
REFUSED_LANGUAGES = ("sh", "shell", "console", "zsh", "py", "python3", "pycon", "shell-session")
SUBSTITUTE = "simulated:0"
SETUP_STEP_ERROR = "a setup step the tests cannot take"


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str  # the comment line right before the fence ("" when none)

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(support.REPO)}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        m = SKIP.match(self.marker)
        return m.group("reason").strip() if m else None

    @property
    def is_output_of_previous(self) -> bool:
        return bool(OUTPUT_OF_PREVIOUS.match(self.marker))

    @property
    def runs(self) -> bool:
        return self.lang in RUN_LANGUAGES and self.skip_reason is None


def pages() -> list[Path]:
    """The README and every page of the site (docs/hooks holds code, not pages)."""
    docs = support.REPO / "docs"
    return [support.REPO / "README.md"] + sorted(
        p for p in docs.rglob("*.md") if (docs / "hooks") not in p.parents
    )


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of one markdown file, in order, each with the marker line before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group("indent"), m.group("fence")
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence) and lines[i].strip().strip(fence[0]) == ""
        ):
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = before if before.startswith("<!--") else ""
        out.append(Block(path, start + 1, m.group("lang").lower(), "\n".join(body) + "\n", marker))
        i += 1
    return out


def commands(code: str) -> list[list[str]]:
    """A bash block as argument lists: continuations joined, comments and blank lines dropped, `&&` split."""
    joined = re.sub(r"\\\n", " ", code)
    out: list[list[str]] = []
    for line in joined.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True  # words split on blanks and on runs of ( ) ; < > | &
        words = list(lexer)
        if not words:
            continue
        for bad in ("|", "||", ";", ">", ">>", "<", "&", "&>", "(", ")"):
            if bad in words:
                raise ValueError(f"`{bad}` in {line.strip()!r}: one command per line, chained only with &&")
        command: list[str] = []
        for word in words:
            if word == "&&":
                out.append(command)
                command = []
            else:
                command.append(word)
        if command:
            out.append(command)
    return out


def split_env(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """`NAME=VALUE ... command args` as ({NAME: VALUE}, [command, args])."""
    env: dict[str, str] = {}
    while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
        name, _, value = argv[0].partition("=")
        env[name] = value
        argv = argv[1:]
    return env, argv


def with_simulated_lm(argv: list[str], *, add: bool) -> list[str]:
    """`--lm embedded` -> `--lm simulated:0`; with `add`, a missing `--lm` is added."""
    out, seen = [], False
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--lm" and i + 1 < len(argv):
            seen = True
            value = argv[i + 1]
            out += ["--lm", SUBSTITUTE if value == "embedded" else value]
            i += 2
            continue
        if word.startswith("--lm="):
            seen = True
            word = "--lm=" + (SUBSTITUTE if word == "--lm=embedded" else word[len("--lm=") :])
        out.append(word)
        i += 1
    return out + ["--lm", SUBSTITUTE] if add and not seen else out


def is_setup_step(argv: list[str]) -> bool:
    """Creating and activating the virtual environment, installing the package: taken as done."""
    if not argv:
        return False
    if argv[0] in (".", "source") and argv[1:2] and argv[1].endswith("bin/activate"):
        return True
    if argv[0] in ("python", "python3") and argv[1:3] in (["-m", "venv"], ["-m", "pip"]):
        return True
    return argv[0] in ("pip", "pip3") and argv[1:2] == ["install"]


def named_extras(argv: list[str]) -> list[str]:
    """The extras a `pip install -e ".[a,b]"` names (checked against pyproject.toml)."""
    extras: list[str] = []
    for word in argv:
        m = re.fullmatch(r"[\w./-]*\[([\w,-]+)\]", word)
        if m and not word.startswith("-"):
            extras += [e for e in m.group(1).split(",") if e]
    return extras
