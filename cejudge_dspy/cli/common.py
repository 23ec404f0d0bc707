"""What every `cejudge` command (and `optimize.py`) shares: flags, backbone construction, the program a
run uses, field parsing, and one error handler with one exit-code convention.

Exit codes: 0 success; 1 judged, but some item was not ok (unparsed or error); 2 bad input or usage
(CEJudgeError); 3 the backbone cannot be built or reached (BackboneError); 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dspy

from cejudge_dspy.backbones import (
    BATCH_PARALLEL,
    DEFAULT_PARALLEL,
    DEFAULT_REPEAT_PENALTY,
    explain_backbone_error,
    use_backbone,
)
from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.methods import auto_choice, run_program, run_program_identity
from cejudge_dspy.probabilities import DEFAULT_GRADE_MARGIN, DEFAULT_TIE_BAND

Handler = Callable[[argparse.Namespace], int]


def add_backbone_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("backbone")
    g.add_argument(
        "--lm",
        default="embedded",
        help="embedded (default), gguf:PATH, or a dspy model string such as hosted_vllm/MODEL",
    )
    g.add_argument("--api-base", default=None, help="server URL for HTTP backbones, including /v1")
    g.add_argument("--api-key", default=None, help="API key for HTTP backbones")
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--seed", type=int, default=42)
    g.add_argument("--max-tokens", type=int, default=1024)
    g.add_argument("--no-cache", action="store_true", help="do not read or write DSPy's response cache")
    g.add_argument(
        "--constrained",
        action="store_true",
        help="local GGUF models: decode under the JSON schema as a grammar (always parses, slower)",
    )
    g.add_argument(
        "--repeat-penalty",
        type=float,
        default=DEFAULT_REPEAT_PENALTY,
        help=f"local GGUF models: llama.cpp's repeat penalty (default {DEFAULT_REPEAT_PENALTY:g}; 1: off)",
    )
    g.add_argument(
        "--parallel",
        type=int,
        default=DEFAULT_PARALLEL,
        help=f"local GGUF models: calls decoded together (default {DEFAULT_PARALLEL}: one at a time, the "
        f"serial engine; {BATCH_PARALLEL}: the batched engine, 1.65x faster per pairwise judgment on 2 "
        "cores; README 'Speed and cost')",
    )


def add_program_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("program")
    g.add_argument("--task", default=None, help="declared task (see `cejudge tasks`)")
    g.add_argument("--method", default="cejudge", help="cejudge (default), direct, checkeval, geval")
    g.add_argument("--translator", default="llm", help="llm (offline default), google, none")
    g.add_argument(
        "--orders",
        default="both",
        choices=("both", "single"),
        help="pairwise: judge A/B and B/A (default) or only A/B as the paper did",
    )
    g.add_argument(
        "--decision",
        default="probability",
        choices=("probability", "argmax"),
        help="what decides a verdict or score: the judge's token probabilities (default; the argmax where a "
        "backbone gives none, said once) or its argmax answer; records keep both",
    )
    g.add_argument(
        "--tie-band",
        type=float,
        default=DEFAULT_TIE_BAND,
        help=f"pairwise, --decision probability: a tie when p(A) is within half this of 0.5 "
        f"(default {DEFAULT_TIE_BAND}; `cejudge calibrate DEV_RUN` picks one)",
    )
    g.add_argument(
        "--judgment",
        default="graded",
        choices=("graded", "pairwise"),
        help="CE-Judge pairwise: grade each response on its own and let the pairwise judgment (both "
        "orders) decide only pairs whose grades tie (graded, default), or the paper's pairwise judgment "
        "for every pair",
    )
    g.add_argument(
        "--grade-margin",
        type=float,
        default=DEFAULT_GRADE_MARGIN,
        help=f"--judgment graded, --decision probability: the gap between the two expected grades that the "
        f"grades must exceed to decide a pair without the pairwise judgment (default {DEFAULT_GRADE_MARGIN}: "
        "any difference)",
    )
    g.add_argument(
        "--reference",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="CE-Judge: the judge first writes its own short answer to the instruction (pairwise, --judgment "
        "graded: both grades read it) or its own translation of the source (pointwise translation items: the "
        "judgment reads it); one more LM call per item. Default: on for pointwise, off for pairwise (README, "
        '"The embedded judge on obvious items")',
    )
    g.add_argument(
        "--program",
        default="auto",
        help="auto (tuned program from optimized/ when present), base, or a saved program path",
    )
    add_ablation_args(p)


def add_ablation_args(p: argparse.ArgumentParser) -> None:
    """CE-Judge's design choices as switches (defaults: the method as designed; see README "Ablations")."""
    g = p.add_argument_group("ablations (CE-Judge)")
    g.add_argument(
        "--no-concepts",
        action="store_true",
        help="no concepts stage: both checklist directions are written without concepts",
    )
    g.add_argument(
        "--directions",
        default="both",
        choices=("both", "r2i", "i2r"),
        help="checklist directions: both (default), only response->instruction (r2i) or only "
        "instruction->response (i2r)",
    )
    g.add_argument(
        "--judge-on",
        default="original",
        choices=("original", "translated"),
        help="the texts the judgment reads: the originals (default) or their English translations",
    )
    g.add_argument(
        "--language-check",
        default=None,
        choices=("on", "off"),
        help="pointwise tasks that declare it: give a response surely in the wrong language the lowest "
        "level without an LLM call (default on)",
    )
    g.add_argument(
        "--likelihood-check",
        default=None,
        choices=("on", "off"),
        help="pointwise translation tasks that declare it, on local GGUF backbones: give a translation the "
        "backbone finds implausible for its source (word salad) the lowest level without an LLM judgment "
        "(default on)",
    )


@contextmanager
def backbone(args: argparse.Namespace, status: Any = None) -> Iterator[dspy.LM]:
    """Build the LM from flags and make it current for the block (dspy.context, not configure)."""

    def on_status(message: str) -> None:
        if status is not None:
            status.update(message)

    with use_backbone(args.lm, on_status=on_status, **backbone_options(args)) as lm:
        yield lm


def backbone_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backbone flags as `use_backbone` / `check_backbone` / `make_lm` keyword arguments (a Ray worker
    builds its LM from these)."""
    return {
        "api_base": args.api_base,
        "api_key": args.api_key,
        "temperature": args.temperature,
        "seed": args.seed,
        "max_tokens": args.max_tokens,
        "cache": not args.no_cache,
        **({"constrained": True} if args.constrained else {}),
        # Passed only when set: HTTP backbones refuse a sampler setting they do not have.
        **({"repeat_penalty": rp} if (rp := repeat_penalty(args)) != DEFAULT_REPEAT_PENALTY else {}),
        **({"parallel": n} if (n := getattr(args, "parallel", DEFAULT_PARALLEL)) != DEFAULT_PARALLEL else {}),
    }


def repeat_penalty(args: argparse.Namespace) -> float:
    """The --repeat-penalty of a run (parsers without the flag: the default)."""
    return float(getattr(args, "repeat_penalty", DEFAULT_REPEAT_PENALTY))


def program_label(args: argparse.Namespace, task: str) -> str:
    """What --program resolves to for this run: "base" or a tuned state file with its hash (only CE-Judge
    has tuned programs). Run records keep this, so a resume never mixes two programs."""
    return run_program_identity(task, args.method, args.program)


def announce_program(err: Any, label: str, task: str | None = None, program: str = "auto") -> None:
    """Say on stderr that a tuned program judges, or why `--program auto` passed over a tuned file."""
    if label != "base":
        err.print(f"program: {label} (tuned; --program base for the hand-written one)")
    elif task is not None and program == "auto" and (why := auto_choice(task)[1]):
        err.print(f"program: base ({why})")


def build(args: argparse.Namespace, task: str) -> dspy.Module:
    return run_program(task, args.method, args.program, **program_options(args))


def program_options(args: argparse.Namespace) -> dict[str, Any]:
    """The method options a run's program is built with (the same on the driver and on every worker)."""
    return {
        "translator": args.translator,
        "orders": args.orders,
        "decision": getattr(args, "decision", "probability"),
        "tie_band": getattr(args, "tie_band", DEFAULT_TIE_BAND),
        "judgment": getattr(args, "judgment", "graded"),
        "grade_margin": getattr(args, "grade_margin", DEFAULT_GRADE_MARGIN),
        "reference": getattr(args, "reference", None),
        "concepts": not getattr(args, "no_concepts", False),
        "directions": getattr(args, "directions", "both"),
        "judge_on": getattr(args, "judge_on", "original"),
        "language_check": getattr(args, "language_check", None) != "off",
        "likelihood_check": getattr(args, "likelihood_check", None) != "off",
    }


def parse_fields(pairs: Sequence[str] | None, flag: str = "--field") -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise InputError(f"expected KEY=VALUE, got {pair!r}", field=flag)
        out[key.strip()] = value.strip()
    return out


def run_command(handler: Handler, args: argparse.Namespace) -> int:
    """Run a command: every CEJudgeError (and a backbone failure DSPy wrapped) is one red line on stderr
    and its exit code; anything else is a bug and keeps its traceback."""
    try:
        try:
            return handler(args)
        except CEJudgeError:
            raise
        except Exception as exc:
            # DSPy wraps backbone failures (refused connection, bad key, model load) in its own errors.
            lm = getattr(args, "lm", None)
            explained = (
                explain_backbone_error(exc, lm, api_base=getattr(args, "api_base", None)) if lm else None
            )
            if explained is None:
                raise
            raise explained from exc
    except CEJudgeError as exc:
        from rich.text import Text

        from cejudge_dspy.cli.display import console

        console(stderr=True).print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted; results written so far are kept (rerun to resume)", file=sys.stderr)
        return 130
