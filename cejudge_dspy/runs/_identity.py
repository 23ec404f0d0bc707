"""A run's identity: the settings that change its records, and how two identities are compared.

`run.json` records everything that changes a run's records (`IDENTITY_KEYS`); a rerun resumes into the
same directory only when nothing differs (_dir.open_run), and `merge` compares the shards' identities
the same way. A run.json written before a setting existed is read with what the run was judged with then
(`LATER_KEYS`), so a setting added later is not by itself a difference. Pure functions over dicts:
reading and writing run.json is _dir.py's.
"""

from __future__ import annotations

from typing import Any

from cejudge_dspy.backbones import is_local
from cejudge_dspy.errors import CEJudgeError
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.runs._redact import public_urls
from cejudge_dspy.tasks import TaskSpec, load_task

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
    # The prompt format (--adapter): the chat and JSON adapters ask for different prompts and answers.
    "adapter",
    # A panel's members, each with its backbone, method, program, prompts and options (None: one judge), so
    # a changed panel never resumes into the old one's run.
    "panel",
    # The judge's options (orders, decision, ... likelihood_check), declared once in JudgeOptions.
    *JudgeOptions.identity_keys(),
    "data_sha256",
    "id_scheme",
    "fields",
    "constants",
    "languages",
    "subsets",
    "limit",
    "first",
    "seed",
    "shard",
    # A child run of `cejudge consistency`: the items as rendered in a language ("original": as given) and
    # who rendered them; None in every other run.
    "rendering",
    "render_translator",
    # A `cejudge rank` run's own settings (the schedule, its baseline and budget, the systems, the seed);
    # None in every other run.
    "rank",
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
# default before it became the --repeat-penalty flag. A run without `reference` wrote no reference answer or
# translation (None where the program cannot take one).
LATER_KEYS: dict[str, Any] = {
    # `--first N` (the first N items in file order) came after `--limit`'s stratified sample.
    "first": None,
    "decision": "argmax",
    "tie_band": 0.0,
    "judgment": "pairwise",
    "grade_margin": None,
    # Graded runs from before the likelihood tie-breaker left close pairs to the pairwise judgment.
    "tie_breaker": lambda run: "orders" if run.get("judgment") == "graded" else None,
    "reference": lambda run: (
        False if run.get("judgment") == "graded" or _pointwise_spec(run) is not None else None
    ),
    # A run.json without the key had a pointwise reference into English from the reference stage; since
    # the key, from stage 2's translation of the source when the LLM translates
    # (judges/cejudge/_pointwise.py).
    # Under --judge-on translated the judgment read both texts in English and no reference was written.
    "english_reference": lambda run: (
        "reference translation"
        if identity_value(run, "reference")
        and _pointwise_spec(run)
        and identity_value(run, "judge_on") == "original"
        else None
    ),
    "concepts": lambda run: True if _cejudge(run) else None,
    "directions": lambda run: "both" if _cejudge(run) else None,
    "judge_on": lambda run: "original" if _cejudge(run) else None,
    # CE-Judge's pointwise judgment wrote its checklist answers before `answers` became an option.
    "answers": lambda run: True if _pointwise_spec(run) is not None else None,
    "language_check": lambda run: ("judgment" in run) if _checked(run, "check_response_language") else None,
    "likelihood_check": lambda run: False if _checked(run, "check_translation_likelihood") else None,
    "repeat_penalty": lambda run: 1.1 if is_local(run.get("lm")) else None,
    # Before a local file's `id` column named its items, every item was <file stem>/<row index>: resuming
    # such a run with the new ids would judge every item again beside its old record.
    "id_scheme": "row index",
    # Runs from before panels were judged by one judge.
    "panel": None,
    # Before --adapter every backbone judged with its own: auto.
    "adapter": "auto",
}
# The same for each member of a run.json's `panel`: members from before `adapter` judged with auto.
MEMBER_LATER_KEYS: dict[str, Any] = {"adapter": "auto"}


def _cejudge(identity: dict[str, Any]) -> bool:
    return identity.get("method", "cejudge") == "cejudge"


def _pointwise_spec(identity: dict[str, Any]) -> TaskSpec | None:
    """The task of a CE-Judge run on a pointwise task (the judge with the checks and the reference
    translation); None for any other run."""
    try:
        spec = load_task(str(identity.get("task")))
    except CEJudgeError:
        return None
    return spec if _cejudge(identity) and spec.mode == "pointwise" else None


def _checked(identity: dict[str, Any], flag: str) -> bool:
    """Whether the run's program has a pointwise check its task declares with `flag`
    (JudgeOptions' `applies` for language_check, likelihood_check)."""
    spec = _pointwise_spec(identity)
    return spec is not None and bool(getattr(spec, flag))


def identity_value(identity: dict[str, Any], key: str) -> Any:
    """A setting of a run, with what a run.json from before the setting existed was judged with. Server
    addresses are compared as run.json keeps them, without credentials (`public_urls`): a changed password
    judges the same records."""
    if key == "panel" and isinstance(identity.get(key), list):
        return [public_urls(MEMBER_LATER_KEYS | m) if isinstance(m, dict) else m for m in identity[key]]
    if key in identity:
        return public_urls({key: identity[key]})[key]
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
        _panel_diff(a, b)
        if k == "panel"
        else f"{k}: {a!r} -> {b!r}" + (f" ({_MEANS[k]})" if k in _MEANS else "")
        for k, (a, b) in identity_changes(old, new, keys).items()
    )


def _panel_diff(old: Any, new: Any) -> str:
    """Two panels' difference by member: who joined or left, and each kept member's changed settings."""
    if not isinstance(old, list) or not isinstance(new, list):
        return f"panel: {_members(old)} -> {_members(new)}"
    before = {m.get("name"): m for m in old if isinstance(m, dict)}
    after = {m.get("name"): m for m in new if isinstance(m, dict)}
    parts = [f"panel member {n!r} left" for n in before if n not in after]
    parts += [f"panel member {n!r} joined" for n in after if n not in before]
    for name in (n for n in after if n in before):
        changed = sorted(
            k for k in set(before[name]) | set(after[name]) if before[name].get(k) != after[name].get(k)
        )
        parts += [
            f"panel member {name!r} {k}: {before[name].get(k)!r} -> {after[name].get(k)!r}" for k in changed
        ]
    if not parts and [m.get("name") for m in old] != [m.get("name") for m in new]:
        parts.append(f"panel order: {_members(old)} -> {_members(new)}")
    return ", ".join(parts)


def _members(panel: Any) -> str:
    """A panel as its members' names (None: one judge)."""
    if not isinstance(panel, list):
        return "one judge" if panel is None else repr(panel)
    return "[" + ", ".join(str(m.get("name")) if isinstance(m, dict) else repr(m) for m in panel) + "]"


# What a difference in an opaque setting means, said beside its values.
_MEANS = {
    "prompts": "the stages' prompts changed: an upgrade, an edited task declaration or checklist",
    "english_reference": "the stage that writes a reference translation into English: an upgrade",
    "id_scheme": "an upgrade names items by a local file's id column; start over with --force-new",
}
