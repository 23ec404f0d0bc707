"""`consistency(...)`: does the verdict survive the language? The call `cejudge consistency` makes.

Every option and input is checked before anything is written (as `evaluate` checks its own: the run's
numbers, the backbone, each method on the task, the languages the translator must write, the items' own
versions of their texts); then the renderings and one ordinary child run per (rendering, method) are judged
under the parent directory (`judge_consistency`), and the summary is returned. A rerun resumes.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.consistency._layout import ORIGINAL_RUN
from cejudge_dspy.consistency._parallel import check_covered, parallel_fields, parallel_versions
from cejudge_dspy.consistency._run import ConsistencyRun, judge_consistency
from cejudge_dspy.consistency._stage import llm_stage
from cejudge_dspy.errors import InputError
from cejudge_dspy.evaluate import (
    EvaluateOptions,
    check_backbone_spec,
    check_options,
    data_fingerprint,
    run_identity,
    select_items,
)
from cejudge_dspy.judges import JudgeOptions
from cejudge_dspy.tasks import TaskSpec, load_task

TRANSLATORS = ("llm", "google", "none")


@dataclass(frozen=True)
class ConsistencyOptions:
    """One consistency run: `task`'s items judged as given and rendered in each of `languages` (by
    `translator`, or from the items' own versions: `fields` keys `FIELD@LANG`), by each of `methods` (the
    first tested against each other). The rest is as `EvaluateOptions` has it; `out` defaults to
    runs/consistency-<task>."""

    task: str
    languages: Sequence[str]
    methods: Sequence[str] = ("cejudge", "direct")
    translator: str = "llm"
    program: str = "auto"  # CE-Judge's program: auto (tuned if shipped), base, or a saved path
    data: str | Path | None = None
    backbone: BackboneOptions | str = field(default_factory=BackboneOptions)  # or a spec: default settings
    out: str | Path | None = None
    concurrency: int = 1
    limit: int | None = None
    first: int | None = None
    seed: int | None = None  # None: the backbone's
    subsets: Sequence[str] | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    constants: Mapping[str, str] = field(default_factory=dict)
    bootstrap: int = 1000
    force_new: bool = False


class ConsistencyProgress:
    """What `consistency` tells as it goes; every method does nothing here (the CLI shows a live bar)."""

    def note(self, line: str) -> None:
        """A line for the person running it."""

    def status(self, message: str) -> None:
        """The backbone's state while it starts."""

    def judging(self) -> AbstractContextManager[Any]:
        """The block in which the renderings and the child runs are judged."""
        return nullcontext()

    def phase(self, what: str, n: int) -> None:
        """A step starts ("renderings", then each child run; "" at the end) with `n` to do."""

    def rendering(self, rendering: Any) -> None:
        """An item rendered in a language."""

    def record(self, record: Any) -> None:
        """An item of a child run judged."""


def consistency(options: ConsistencyOptions, progress: ConsistencyProgress | None = None) -> dict[str, Any]:
    """Judge a consistency run (see the module docstring); returns the summary written to summary.json."""
    from cejudge_dspy.backbones import use_backbone
    from cejudge_dspy.data import field_mapping
    from cejudge_dspy.judges import run_program
    from cejudge_dspy.runs import item_ids

    progress = progress or ConsistencyProgress()
    run, spec, languages, judges = _checked(options)
    plain, columns = parallel_fields(dict(options.fields), spec.dataset.parallel)
    run = replace(run, fields=plain, constants=dict(options.constants))
    items = select_items(run, spec)
    subsets = list(run.subsets) if run.subsets else None
    parallel = parallel_versions(
        run.data, subsets, run.first, spec, plain, dict(run.constants), items, columns, languages
    )
    if options.translator == "none":
        check_covered(items, languages, parallel)

    programs = {m: run_program(spec.name, options=o) for m, o in judges.items()}
    data_sha = data_fingerprint(run, spec)
    mapping = field_mapping(spec, dict(run.fields), dict(run.constants))
    out = Path(options.out or f"runs/consistency-{spec.name}")
    identity = _identity(options, run, spec, languages, data_sha, mapping, columns)
    consistency_run = ConsistencyRun(
        out,
        spec,
        items,
        languages,
        list(judges),
        identity | {"items": item_ids([i.id for i in items])},
        _child_identity(options.translator, run, spec, judges, programs, data_sha, mapping),
        concurrency=run.concurrency,
        n_resamples=run.bootstrap,
        seed=run.run_seed,
        force_new=run.force_new,
        parallel=parallel,
    )
    progress.note(f"{len(items)} items × {len(languages)} languages × {len(judges)} methods → {out}")
    with progress.judging(), use_backbone(run.lm, on_status=progress.status, **run.run_backbone.kwargs()):
        summary = asyncio.run(
            judge_consistency(
                consistency_run,
                programs,
                functools.partial(translator_for, options.translator),
                on_phase=progress.phase,
                on_rendering=progress.rendering,
                on_record=progress.record,
            )
        )
        progress.phase("", 0)
    return summary


def _checked(
    options: ConsistencyOptions,
) -> tuple[EvaluateOptions, TaskSpec, list[str], dict[str, JudgeOptions]]:
    """The run's options as an evaluate run's, the task, the languages and each method's judge, all
    checked: the run's numbers, the languages the translator must write, each method on the backbone and
    the task."""
    from cejudge_dspy.data import normalize_language
    from cejudge_dspy.judges import method_names

    run = EvaluateOptions(
        task=options.task,
        data=options.data,
        backbone=options.backbone,
        out=options.out,
        concurrency=options.concurrency,
        limit=options.limit,
        first=options.first,
        seed=options.seed,
        subsets=options.subsets,
        bootstrap=options.bootstrap,
        force_new=options.force_new,
    )
    check_options(run)
    spec = load_task(options.task)
    languages = [normalize_language(x, field="--languages") for x in options.languages]
    if options.translator not in TRANSLATORS:
        choices = ", ".join(TRANSLATORS)
        raise InputError(f"must be one of {choices}, got {options.translator!r}", option="translator")
    for language in languages:  # a language the translator cannot write is refused before anything runs
        translator_for(options.translator, language)
    judges = {}
    for method in options.methods:
        if method not in method_names():
            raise InputError(
                f"unknown method {method!r}; choose from {', '.join(method_names())}", field="--methods"
            )
        check_backbone_spec(run.run_backbone, method)
        # The judge's other options at their defaults: `translator` here renders items and is not
        # CE-Judge's translator into English.
        program = options.program if method == "cejudge" else "auto"
        judges[method] = JudgeOptions(method=method, program=program)
        judges[method].check(spec)
    return run, spec, languages, judges


def translator_for(name: str, language: str) -> Any:
    """The translator `name` names, into `language` (``llm``: the backbone's own stage)."""
    from cejudge_dspy.translate import make_translator

    if name == "llm":
        return make_translator("llm", stage=llm_stage(language), target=language)
    return make_translator(name, target=language)


def _child_identity(
    translator: str,
    run: EvaluateOptions,
    spec: TaskSpec,
    judges: dict[str, JudgeOptions],
    programs: dict[str, Any],
    data_sha: str,
    mapping: tuple[dict[str, str], dict[str, str]],
) -> Any:
    """The identity each (method, rendering) child run records: an evaluate run's, plus its rendering."""
    from cejudge_dspy.judges import prompt_fingerprint, run_program_identity

    def child_identity(method: str, rendering: str) -> dict[str, Any]:
        judge = judges[method]
        config = run_identity(
            spec,
            judge,
            program=run_program_identity(spec.name, judge.method, judge.program),
            backbone=run.run_backbone,
            data=run.data,
            data_sha256=data_sha,
            fields=mapping[0],
            constants=mapping[1],
            prompts=prompt_fingerprint(programs[method]),
            subsets=run.subsets,
            limit=run.limit,
            first=run.first,
            seed=run.run_seed,
        )
        config["rendering"] = rendering
        config["render_translator"] = None if rendering == ORIGINAL_RUN else translator
        return config

    return child_identity


def _identity(
    options: ConsistencyOptions,
    run: EvaluateOptions,
    spec: TaskSpec,
    languages: list[str],
    data_sha: str,
    mapping: tuple[dict[str, str], dict[str, str]],
    columns: dict[str, dict[str, str]],
) -> dict[str, Any]:
    """consistency.json: what changes the renderings or any child run (see COMPARED)."""
    return {
        "task": spec.name,
        "task_version": spec.version,
        "methods": list(options.methods),
        "languages": languages,
        "translator": options.translator,
        "program": options.program,
        "lm": run.lm,
        "api_base": run.run_backbone.api_base,
        "temperature": run.run_backbone.temperature,
        "max_tokens": run.run_backbone.max_tokens,
        "adapter": run.run_backbone.adapter,
        "data": str(Path(run.data).expanduser().resolve()) if run.data else None,
        "data_sha256": data_sha,
        "fields": mapping[0],
        "constants": mapping[1],
        "parallel_fields": {lang: cols for lang, cols in columns.items() if lang in languages},
        "subsets": sorted(run.subsets) if run.subsets else None,
        "limit": run.limit,
        "first": run.first,
        "seed": run.run_seed,
    }
