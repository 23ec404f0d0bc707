"""The answers of several systems to the same prompts, read through the data package's readers.

Two layouts:

- one long table (one file or directory): a row per (prompt, system) answer; the system's name is read from
  the column `--field system=COLUMN` names (default `system`), the prompt from `--field prompt=COLUMN`
  (default: the task's `group` column when it maps one, else the instruction text itself);
- one file per system (`NAME=PATH`, or a bare PATH named after its file stem): each row one answer, its
  prompt named by the file's id (the id column, else the row number), so the files must list the same
  prompts under the same ids.

Each answer is read as a pointwise item of the task (its instruction, response, language and, where the
task maps one, its label): a pairwise task is read through a pointwise view of its declaration, so a
pairwise declaration for system outputs maps `response` too. The label, when read, is the answer's human
score: a number as it is, a dict of scores averaged over the keys `human_keys` names (default: the task's
dimensions' human keys). The same prompt must show every system the same instruction; a system answering a
prompt twice, or an instruction that differs between systems, is one line naming the file and item.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cejudge_dspy.data import Item, load_items
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.tasks import Dimension, TaskSpec

# The rank-only keys of --field: they name columns the item fields do not have.
SYSTEM_KEY = "system"
PROMPT_KEY = "prompt"
DEFAULT_SYSTEM_COLUMN = "system"
_SHORT = 80  # prompt keys longer than this (a whole instruction) are named by a digest


@dataclass(frozen=True)
class Answer:
    """One system's answer to one prompt: the pointwise item that reads it, and its human score."""

    prompt: str
    system: str
    item: Item
    human: float | None = None


@dataclass(frozen=True)
class SystemAnswers:
    """Every system's answers, keyed by (prompt, system); systems and prompts in the order first read."""

    systems: tuple[str, ...]
    prompts: tuple[str, ...]
    answers: dict[tuple[str, str], Answer] = field(default_factory=dict)
    sources: tuple[str, ...] = ()

    def answer(self, prompt: str, system: str) -> Answer | None:
        return self.answers.get((prompt, system))

    def shared_prompts(self, a: str, b: str) -> list[str]:
        """The prompts both systems answered, in reading order."""
        return [p for p in self.prompts if (p, a) in self.answers and (p, b) in self.answers]

    def language(self, prompt: str) -> str:
        return next(a.item.language for (p, _), a in self.answers.items() if p == prompt)

    @property
    def labelled(self) -> bool:
        return any(a.human is not None for a in self.answers.values())


def parse_sources(values: Sequence[str]) -> list[tuple[str | None, str]]:
    """`--data` values as (system name or None, path): `NAME=PATH` names a system's file; a bare PATH is a
    long table when it is the only one, else a system named after its file stem."""
    out: list[tuple[str | None, str]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if sep and name.strip() and not Path(value).exists():
            out.append((name.strip(), path.strip()))
        else:
            out.append((None, value))
    if len(out) > 1:
        out = [(name or Path(path).stem, path) for name, path in out]
    names = [n for n, _ in out if n is not None]
    if len(set(names)) < len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"system '{dup}' is named twice; name each file NAME=PATH", field="--data")
    return out


def load_systems(
    task: TaskSpec,
    sources: Sequence[str] | Sequence[tuple[str | None, str]],  # all texts or all pairs
    *,
    fields: dict[str, str] | None = None,
    constants: dict[str, str] | None = None,
    human_keys: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    systems: Sequence[str] | None = None,
    prompts: int | None = None,
) -> SystemAnswers:
    """Read the systems' answers (see the module docstring). `sources`: `--data` values or (name, path)
    pairs; `fields`/`constants` as `evaluate` takes them, plus `system=COLUMN` and `prompt=COLUMN`;
    `systems` keeps only those systems; `prompts` keeps the first N prompts in reading order."""
    texts = [s for s in sources if isinstance(s, str)]
    parsed = parse_sources(texts) if texts else [s for s in sources if isinstance(s, tuple)]
    if not parsed or (texts and len(texts) < len(sources)):
        raise InputError("name the systems' answers: one long table, or NAME=PATH per system", field="--data")
    fields = dict(fields or {})
    system_column = fields.pop(SYSTEM_KEY, None)
    prompt_column = fields.pop(PROMPT_KEY, None)
    view = reading_view(task, human_keys)
    if prompt_column:
        fields["group"] = prompt_column
    if task.mode == "pairwise":
        # A pair's columns and its A/B/tie label are not an answer's; an answer reads `response` (the
        # declaration's, else the column of that name).
        data = view.dataset
        fields_ = {"response": "response"} | _answer_only(data.fields)
        view = replace(view, dataset=replace(data, fields=fields_, constants=_answer_only(data.constants)))
    answers: list[Answer] = []
    if len(parsed) == 1 and parsed[0][0] is None:
        column = system_column or DEFAULT_SYSTEM_COLUMN
        # The system's name travels in the item's `subset` (a column-to-text field the loader keeps as is).
        items = _load(view, parsed[0][1], fields | {"subset": column}, constants, languages, SYSTEM_KEY)
        for item in items:
            if item.subset is None:
                raise InputError(
                    f"no system named (column '{column}' is empty)", item=item.id, field="system"
                )
            answers.append(
                _answer(item, _prompt_key(item, bool(prompt_column)), item.subset, view, human_keys)
            )
    else:
        if system_column:
            raise InputError(
                "names a column of a long table; with one file per system, drop it", field="system"
            )
        for name, path in parsed:
            assert name is not None
            for item in _load(view, path, fields, constants, languages, None):
                prompt = item.group if prompt_column and item.group else item.id
                answers.append(_answer(item, prompt, name, view, human_keys))
    return _collect(answers, [p for _, p in parsed], systems, prompts)


def reading_view(task: TaskSpec, human_keys: Sequence[str] | None) -> TaskSpec:
    """The task as the answers are read: pointwise, with the human keys as score dimensions (so that a
    dict label parses into them)."""
    dimensions = task.dimensions if task.mode == "pointwise" else ()
    if human_keys:
        dimensions = tuple(Dimension(name=k, definition=k, subdimensions=(), human_key=k) for k in human_keys)
    return replace(task, mode="pointwise", dimensions=dimensions)


def _answer_only(mapping: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in mapping.items() if k not in ("label", "response_a", "response_b")}


def _load(
    view: TaskSpec,
    path: str,
    fields: dict[str, str],
    constants: dict[str, str] | None,
    languages: Sequence[str] | None,
    carried: str | None,
) -> list[Item]:
    try:
        return load_items(view, path, fields=fields, constants=constants, languages=languages)
    except DataError as exc:
        if carried is None:
            raise
        # The loader speaks of the item field that carries the system's name; say what the user maps.
        text = (
            str(exc).replace("for subset", f"for {carried}").replace("--field subset=", f"--field {carried}=")
        ).replace(" or a constant subset value", "")
        raise DataError(text) from None


def _prompt_key(item: Item, mapped: bool) -> str:
    """A long table's prompt: the mapped prompt column, else the task's group, else the instruction."""
    key = item.group if (mapped or item.group) and item.group else item.instruction
    return key if len(key) <= _SHORT and "\n" not in key else "prompt-" + _digest(key)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def _answer(item: Item, prompt: str, system: str, view: TaskSpec, human_keys: Sequence[str] | None) -> Answer:
    return Answer(prompt, system, item, _human(item, view, human_keys))


def _human(item: Item, view: TaskSpec, human_keys: Sequence[str] | None) -> float | None:
    """The answer's human score: a number label as it is, a dict averaged over the human keys."""
    label = item.label
    if label is None or isinstance(label, str):
        return None
    if isinstance(label, dict):
        keys = list(human_keys or [d.human_key for d in view.dimensions if d.human_key]) or list(label)
        values = [label[k] for k in keys if k in label]
        return statistics.fmean(values) if values else None
    return float(label)


def _collect(
    answers: list[Answer], where: list[str], keep: Sequence[str] | None, n_prompts: int | None
) -> SystemAnswers:
    by_key: dict[tuple[str, str], Answer] = {}
    instruction: dict[str, tuple[str, str]] = {}
    for a in answers:
        if (a.prompt, a.system) in by_key:
            raise InputError(
                f"system '{a.system}' answers prompt '{a.prompt}' twice ({_where(a)})",
                item=a.item.id,
                field="system",
            )
        seen = instruction.setdefault(a.prompt, (a.system, a.item.instruction))
        if seen[1] != a.item.instruction:
            raise InputError(
                f"prompt '{a.prompt}' shows system '{a.system}' another instruction than system '{seen[0]}' "
                f"({_where(a)}); map the prompt to a column that names it (--field prompt=COLUMN)",
                item=a.item.id,
                field="instruction",
            )
        by_key[(a.prompt, a.system)] = a
    systems = list(dict.fromkeys(a.system for a in answers))
    if keep:
        unknown = [s for s in keep if s not in systems]
        if unknown:
            raise InputError(
                f"no system '{unknown[0]}' in the data; systems: {', '.join(systems)}", field="--system"
            )
        systems = [s for s in systems if s in set(keep)]
    prompts = list(dict.fromkeys(a.prompt for a in answers))
    if n_prompts is not None:
        prompts = prompts[:n_prompts]
    if len(systems) < 2:
        raise DataError(f"{', '.join(where)}: {len(systems)} system(s) found; ranking needs at least two")
    kept = {k: v for k, v in by_key.items() if k[0] in set(prompts) and k[1] in set(systems)}
    return SystemAnswers(tuple(systems), tuple(prompts), kept, tuple(where))


def _where(answer: Answer) -> str:
    source = answer.item.meta.get("source", "?")
    return f"{Path(str(source)).name} row {int(answer.item.meta.get('row', 0)) + 1}"
