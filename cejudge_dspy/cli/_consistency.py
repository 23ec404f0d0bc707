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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._common import adapter_choice, add_backbone_args, parse_fields
from cejudge_dspy.cli._consistency_data import check_covered, parallel_fields, parallel_versions, split_list
from cejudge_dspy.cli._run_args import add_data_args, add_run_args, load_data_items
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
    from cejudge_dspy.cli._run_setup import check_lm, check_options
    from cejudge_dspy.data import normalize_language
    from cejudge_dspy.judges import JudgeOptions, method_names
    from cejudge_dspy.tasks import load_task

    check_options(args)
    spec = load_task(args.task)
    languages = [
        normalize_language(x, field="--languages") for x in split_list(args.languages, "--languages")
    ]
    methods = split_list([args.methods], "--methods")
    for language in languages:  # a language the translator cannot write is refused before anything runs
        _translator_for(args.render_translator, language)
    for method in methods:
        if method not in method_names():
            raise InputError(
                f"unknown method {method!r}; choose from {', '.join(method_names())}", field="--methods"
            )
        check_lm(_as_method(args, method))
        JudgeOptions(method=method, program=args.program if method == "cejudge" else "auto").check(spec)
    fields, parallel_columns = parallel_fields(parse_fields(args.field), spec.dataset.parallel)
    constants = parse_fields(args.const, "--const")
    items = load_data_items(args, spec, fields, constants)
    parallel = parallel_versions(args, spec, fields, constants, items, parallel_columns, languages)
    if args.render_translator == "none":
        check_covered(items, languages, parallel)
    args.parallel_columns = parallel_columns  # recorded in consistency.json
    return _judge(args, spec, items, languages, methods, fields, constants, parallel)


def _as_method(args: argparse.Namespace, method: str) -> argparse.Namespace:
    """The flags as `cejudge evaluate --method METHOD` would hold them (the judge's other options at their
    defaults; `--translator` here renders items and is not CE-Judge's translator into English)."""
    ns = argparse.Namespace(**vars(args))
    ns.method = method
    ns.program = args.program if method == "cejudge" else "auto"
    ns.language, ns.shard, ns.preset, ns.headline = None, None, None, None
    return ns


def _judge(
    args: argparse.Namespace,
    spec: TaskSpec,
    items: list[Item],
    languages: list[str],
    methods: list[str],
    fields: dict[str, str],
    constants: dict[str, str],
    parallel: dict[tuple[str, str], dict[str, str]],
) -> int:
    import asyncio
    import functools

    from cejudge_dspy.cli._common import backbone, build, program_label
    from cejudge_dspy.cli._progress import live
    from cejudge_dspy.cli._run_setup import run_identity
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.consistency import ORIGINAL_RUN, ConsistencyRun, judge_consistency
    from cejudge_dspy.data import field_mapping, fingerprint
    from cejudge_dspy.judges import prompt_fingerprint
    from cejudge_dspy.runs import item_ids

    err = console(stderr=True)
    programs = {m: build(_as_method(args, m), spec.name) for m in methods}
    data_sha = fingerprint(spec, args.data)
    mapping = field_mapping(spec, fields, constants)
    out = Path(args.out or f"runs/consistency-{spec.name}")

    def child_identity(method: str, rendering: str) -> dict[str, Any]:
        ns = _as_method(args, method)
        config = run_identity(
            ns,
            spec,
            program_label(ns, spec.name),
            data_sha,
            *mapping,
            prompts=prompt_fingerprint(programs[method]),
        )
        config["rendering"] = rendering
        config["render_translator"] = None if rendering == ORIGINAL_RUN else args.render_translator
        return config

    identity = _identity(args, spec, methods, languages, data_sha, mapping) | {
        "items": item_ids([i.id for i in items])
    }
    run = ConsistencyRun(
        out,
        spec,
        items,
        languages,
        methods,
        identity,
        child_identity,
        concurrency=args.concurrency,
        n_resamples=args.bootstrap,
        seed=args.seed,
        force_new=args.force_new,
        parallel=parallel,
    )

    err.print(f"{len(items)} items × {len(languages)} languages × {len(methods)} methods → {out}")
    progress = _Progress(err)
    with live(err, progress.display, transient=True), backbone(args, progress.display):
        summary = asyncio.run(
            judge_consistency(
                run,
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
    spec: TaskSpec,
    methods: list[str],
    languages: list[str],
    data_sha: str,
    mapping: tuple[dict[str, str], dict[str, str]],
) -> dict[str, Any]:
    """consistency.json: what changes the renderings or any child run (see consistency.COMPARED)."""
    return {
        "task": spec.name,
        "task_version": spec.version,
        "methods": methods,
        "languages": languages,
        "translator": args.render_translator,
        "program": args.program,
        "lm": args.lm,
        "api_base": args.api_base,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "adapter": adapter_choice(args),
        "data": str(Path(args.data).expanduser().resolve()) if args.data else None,
        "data_sha256": data_sha,
        "fields": mapping[0],
        "constants": mapping[1],
        "parallel_fields": {lang: cols for lang, cols in args.parallel_columns.items() if lang in languages},
        "subsets": sorted(args.subset) if args.subset else None,
        "limit": args.limit,
        "first": args.first,
        "seed": args.seed,
    }


def _print(summary: dict[str, Any], out: Path) -> None:
    from cejudge_dspy.cli.display import consistency_table, console

    stdout = console()
    stdout.print(consistency_table(summary))
    stdout.print(f"summary: {out / 'summary.json'} · `cejudge view {out}` shows the renderings and the flips")
