"""`cejudge consistency`: does the verdict survive the language? Each item is judged as given and again with
its instruction and responses rendered in each of `--languages` (by `--translator`, or from the item's own
parallel columns, `--field instruction@ko=COLUMN`), by CE-Judge and the direct judge alike.

The run is a parent directory (`cejudge_dspy.consistency`): one ordinary run per (rendering, method), the
renderings file and a summary of how often each judge changed its output, with bootstrap CIs and McNemar's
test between the judges. Everything is checked before anything is written; a rerun resumes. The items are
read as `cejudge evaluate` reads them (_run_args.py: `--limit` or `--first`); the command's list flags and
the items' own versions in other languages are _consistency_data.py's.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._common import add_backbone_args, backbone_options, parse_fields
from cejudge_dspy.cli._consistency_data import check_covered, parallel_fields, parallel_versions, split_list
from cejudge_dspy.cli._run_args import add_data_args, add_run_args
from cejudge_dspy.errors import InputError

if TYPE_CHECKING:  # the parser is built without DSPy (data imports it)
    from cejudge_dspy.data import Item
    from cejudge_dspy.tasks import TaskSpec

TRANSLATORS = ("llm", "google", "none")
DEFAULT_METHODS = "cejudge,direct"


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "consistency",
        help="judge items as given and rendered in other languages: how often does each judge change its "
        "verdict (CE-Judge against the direct judge)?",
    )
    p.add_argument("--task", required=True, help="declared task (see `cejudge tasks`)")
    p.add_argument(
        "--languages",
        required=True,
        action="append",
        help="languages to render every item in, comma-separated (e.g. ko,de,ja; repeatable)",
    )
    p.add_argument(
        "--translator",
        dest="render_translator",
        default="llm",
        choices=TRANSLATORS,
        help="who renders the items: llm (the backbone itself, offline; default), google (Google Translate, "
        "needs the network) or none (only the items' own parallel versions, --field FIELD@LANG=COLUMN)",
    )
    p.add_argument(
        "--methods",
        default=DEFAULT_METHODS,
        help="judges to compare, comma-separated; the first is tested against each other "
        f"(default {DEFAULT_METHODS})",
    )
    p.add_argument(
        "--program", default="auto", help="CE-Judge's program: auto (tuned if shipped), base, or a saved path"
    )
    add_backbone_args(p)
    add_data_args(
        p,
        field="FIELD@LANG=COLUMN names an item's own version of a text in LANG (used instead of "
        "translating it)",
    )
    p.add_argument("--out", help="consistency run directory (default runs/consistency-<task>)")
    add_run_args(p)
    p.set_defaults(handler=run_consistency)


def run_consistency(args: argparse.Namespace) -> int:
    from cejudge_dspy.data import normalize_language
    from cejudge_dspy.evaluate import EvaluateOptions, check_backbone_spec, check_options, select_items
    from cejudge_dspy.judges import JudgeOptions, method_names
    from cejudge_dspy.tasks import load_task

    lm_options = backbone_options(args)
    run = EvaluateOptions(
        task=args.task,
        data=args.data,
        lm=args.lm,
        lm_options=lm_options,
        out=args.out,
        concurrency=args.concurrency,
        limit=args.limit,
        first=args.first,
        seed=args.seed,
        subsets=args.subset,
        bootstrap=args.bootstrap,
        force_new=args.force_new,
    )
    check_options(run)
    spec = load_task(args.task)
    languages = [
        normalize_language(x, field="--languages") for x in split_list(args.languages, "--languages")
    ]
    methods = split_list([args.methods], "--methods")
    for language in languages:  # a language the translator cannot write is refused before anything runs
        _translator_for(args.render_translator, language)
    judges = {}
    for method in methods:
        if method not in method_names():
            raise InputError(
                f"unknown method {method!r}; choose from {', '.join(method_names())}", field="--methods"
            )
        check_backbone_spec(args.lm, run.backbone_kwargs, method)
        # The judge's other options at their defaults: `--translator` here renders items and is not
        # CE-Judge's translator into English.
        judges[method] = JudgeOptions(method=method, program=args.program if method == "cejudge" else "auto")
        judges[method].check(spec)
    fields, parallel_columns = parallel_fields(parse_fields(args.field), spec.dataset.parallel)
    constants = parse_fields(args.const, "--const")
    run = replace(run, fields=fields, constants=constants)
    items = select_items(run, spec)
    parallel = parallel_versions(args, spec, fields, constants, items, parallel_columns, languages)
    if args.render_translator == "none":
        check_covered(items, languages, parallel)
    return _judge(args, run, spec, items, languages, judges, parallel, parallel_columns)


def _judge(
    args: argparse.Namespace,
    run: Any,
    spec: TaskSpec,
    items: list[Item],
    languages: list[str],
    judges: dict[str, Any],
    parallel: dict[tuple[str, str], dict[str, str]],
    parallel_columns: dict[str, dict[str, str]],
) -> int:
    import asyncio
    import functools

    from cejudge_dspy.cli._common import backbone
    from cejudge_dspy.cli._progress import live
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.consistency import ConsistencyRun, judge_consistency
    from cejudge_dspy.data import field_mapping
    from cejudge_dspy.evaluate import data_fingerprint
    from cejudge_dspy.judges import run_program
    from cejudge_dspy.runs import item_ids

    err = console(stderr=True)
    programs = {m: run_program(spec.name, options=o) for m, o in judges.items()}
    data_sha = data_fingerprint(run, spec)
    mapping = field_mapping(spec, dict(run.fields), dict(run.constants))
    out = Path(args.out or f"runs/consistency-{spec.name}")

    child_identity = _child_identity(args, run, spec, judges, programs, data_sha, mapping)
    identity = _identity(args, run, spec, list(judges), languages, data_sha, mapping, parallel_columns) | {
        "items": item_ids([i.id for i in items])
    }
    consistency_run = ConsistencyRun(
        out,
        spec,
        items,
        languages,
        list(judges),
        identity,
        child_identity,
        concurrency=run.concurrency,
        n_resamples=run.bootstrap,
        seed=run.seed,
        force_new=run.force_new,
        parallel=parallel,
    )

    err.print(f"{len(items)} items × {len(languages)} languages × {len(judges)} methods → {out}")
    progress = _Progress(err)
    with live(err, progress.display, transient=True), backbone(args, progress.display):
        summary = asyncio.run(
            judge_consistency(
                consistency_run,
                programs,
                functools.partial(_translator_for, args.render_translator),
                on_phase=progress.phase,
                on_rendering=lambda r: progress.display.on_record(f"{r.id}@{r.language}", r.status),
                on_record=lambda r: progress.display.on_record(r.id, r.status),
            )
        )
        progress.phase("", 0)
    _print(summary, out)
    return 0


def _child_identity(
    args: argparse.Namespace,
    run: Any,
    spec: TaskSpec,
    judges: dict[str, Any],
    programs: dict[str, Any],
    data_sha: str,
    mapping: tuple[dict[str, str], dict[str, str]],
) -> Any:
    """The identity each (method, rendering) child run records: an evaluate run's, plus its rendering."""
    from cejudge_dspy.consistency import ORIGINAL_RUN
    from cejudge_dspy.evaluate import run_identity
    from cejudge_dspy.judges import prompt_fingerprint, run_program_identity

    def child_identity(method: str, rendering: str) -> dict[str, Any]:
        judge = judges[method]
        config = run_identity(
            spec,
            judge,
            program=run_program_identity(spec.name, judge.method, judge.program),
            lm=run.lm,
            lm_options=run.backbone_kwargs,
            data=run.data,
            data_sha256=data_sha,
            fields=mapping[0],
            constants=mapping[1],
            prompts=prompt_fingerprint(programs[method]),
            subsets=run.subsets,
            limit=run.limit,
            first=run.first,
            seed=run.seed,
        )
        config["rendering"] = rendering
        config["render_translator"] = None if rendering == ORIGINAL_RUN else args.render_translator
        return config

    return child_identity


def _translator_for(name: str, language: str) -> Any:
    """The translator `--translator NAME` names, into `language` (``llm``: the backbone's own stage)."""
    from cejudge_dspy.consistency import llm_stage
    from cejudge_dspy.translate import make_translator

    if name == "llm":
        return make_translator("llm", stage=llm_stage(language), target=language)
    return make_translator(name, target=language)


class _Progress:
    """One live bar for the step in progress (the renderings, then each child run), and a line on stderr
    as each step ends: `ko-direct: 60/60 items · 4:02 · ...`."""

    def __init__(self, err: Any) -> None:
        from cejudge_dspy.cli._progress import RunDisplay

        self.err = err
        self.display = RunDisplay("renderings", 0)
        self.started = False

    def phase(self, what: str, n: int) -> None:
        from cejudge_dspy.cli._progress import RunCounts

        if self.started:
            self.err.print(f"{self.display.title}: {self.display.summary()}", soft_wrap=True, markup=False)
        self.started = True
        self.display.title = what
        self.display.counts = RunCounts(n)
        self.display.items.clear()


def _identity(
    args: argparse.Namespace,
    run: Any,
    spec: TaskSpec,
    methods: list[str],
    languages: list[str],
    data_sha: str,
    mapping: tuple[dict[str, str], dict[str, str]],
    parallel_columns: dict[str, dict[str, str]],
) -> dict[str, Any]:
    """consistency.json: what changes the renderings or any child run (see consistency.COMPARED)."""
    from cejudge_dspy.evaluate import backbone_setting

    return {
        "task": spec.name,
        "task_version": spec.version,
        "methods": methods,
        "languages": languages,
        "translator": args.render_translator,
        "program": args.program,
        "lm": run.lm,
        "api_base": run.lm_options["api_base"],
        "temperature": backbone_setting(run.lm_options, "temperature"),
        "max_tokens": backbone_setting(run.lm_options, "max_tokens"),
        "adapter": backbone_setting(run.lm_options, "adapter"),
        "data": str(Path(run.data).expanduser().resolve()) if run.data else None,
        "data_sha256": data_sha,
        "fields": mapping[0],
        "constants": mapping[1],
        "parallel_fields": {lang: cols for lang, cols in parallel_columns.items() if lang in languages},
        "subsets": sorted(run.subsets) if run.subsets else None,
        "limit": run.limit,
        "first": run.first,
        "seed": run.seed,
    }


def _print(summary: dict[str, Any], out: Path) -> None:
    from cejudge_dspy.cli.display import consistency_table, console

    stdout = console()
    stdout.print(consistency_table(summary))
    stdout.print(f"summary: {out / 'summary.json'} · `cejudge view {out}` shows the renderings and the flips")
