"""What every `cejudge` command (and `optimize.py`) shares: flags, backbone construction, the program a
run uses, field parsing, and one error handler with one exit-code convention.

Exit codes: 0 success; 1 judged, but some item was not ok (unparsed or error); 2 bad input or usage
(CEJudgeError); 3 the backbone cannot be built or reached (BackboneError); 130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._program_args import Repeatable, judge_options
from cejudge_dspy.errors import BackboneError, CEJudgeError, InputError
from cejudge_dspy.judges import ADAPTER_CHOICES

if TYPE_CHECKING:  # the flags are built without DSPy; commands import it when they run
    import dspy

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Bound:
    """A numeric flag's range, checked before a command does anything: [low, high] (None: open on that
    side); NaN and the infinities are never in it, so they never reach a run.json."""

    flag: str
    what: str
    low: float | None = None
    high: float | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def describe(self) -> str:
        """The range as a help text says it."""
        if self.low is not None and self.high is not None:
            return f"{_num(self.low)} to {_num(self.high)}"
        return f"at least {_num(self.low)}" if self.low is not None else "a finite number"

    def check(self, value: Any) -> None:
        if value is None:  # not given, and no default: the option is off
            return
        if not math.isfinite(value):
            raise InputError(f"must be a finite number ({self.what}), got {value}", field=self.flag)
        if self.low is not None and value < self.low:
            raise InputError(f"must be at least {_num(self.low)} ({self.what}), got {value}", field=self.flag)
        if self.high is not None and value > self.high:
            raise InputError(f"must be at most {_num(self.high)} ({self.what}), got {value}", field=self.flag)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def check_bounds(args: argparse.Namespace, bounds: Sequence[Bound]) -> None:
    """Each bounded flag the command has, one line for the first out of range."""
    for bound in bounds:
        bound.check(getattr(args, bound.dest, None))


# The backbone's numeric flags. Temperatures above 2 are outside what the HTTP providers accept; llama.cpp's
# seed is a 32-bit unsigned number.
TEMPERATURE = Bound("--temperature", "a sampling temperature", 0.0, 2.0)
SEED = Bound("--seed", "a random seed", 0, 2**32 - 1)
MAX_TOKENS = Bound("--max-tokens", "tokens", 1)
# Its range is the backbone's own (backbones.check_backbone: above 0); here only a finite number.
REPEAT_PENALTY = Bound("--repeat-penalty", "a repeat penalty")
BACKBONE_BOUNDS = (TEMPERATURE, SEED, MAX_TOKENS, REPEAT_PENALTY)
# Resamples a bootstrap interval may draw: each draws one index per item, all held at once, so a larger
# count costs memory in proportion and hangs a command asked for 10^8.
MAX_BOOTSTRAP = 10_000


def add_backbone_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("backbone")
    g.add_argument(
        "--lm",
        default="embedded",
        action=Repeatable,
        help="embedded (default), gguf:PATH, or a dspy model string such as hosted_vllm/MODEL; repeated "
        "(evaluate, judge), a panel: one member per backbone (and per --method)",
    )
    g.add_argument("--api-base", default=None, help="server URL for HTTP backbones, including /v1")
    g.add_argument("--api-key", default=None, help="API key for HTTP backbones")
    g.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help=f"sampling temperature, {TEMPERATURE.describe()} (default 0)",
    )
    g.add_argument("--seed", type=int, default=42, help=f"random seed, {SEED.describe()} (default 42)")
    g.add_argument(
        "--max-tokens",
        type=int,
        default=1024,
        help=f"output tokens per call, {MAX_TOKENS.describe()} (default 1024)",
    )
    g.add_argument(
        "--adapter",
        choices=ADAPTER_CHOICES,
        default="auto",
        help="the prompt format: DSPy's chat adapter ([[ ## field ## ]] markers) or its JSON adapter; auto "
        "(default): json for local GGUF models, chat for HTTP backbones. json suits a small model behind "
        "a server that does not follow the chat markers",
    )
    g.add_argument("--no-cache", action="store_true", help="do not read or write DSPy's response cache")
    g.add_argument(
        "--require-logprobs",
        action="store_true",
        help="stop with an error when the backbone gives no token probabilities, instead of falling "
        "back to the argmax answers (`cejudge backbones check` says what a server gives)",
    )
    g.add_argument(
        "--constrained",
        action="store_true",
        help="local GGUF models: decode under the JSON schema as a grammar (always parses, slower)",
    )
    # No numbers here: the defaults are the llama.cpp engines' own (backbones.llamacpp), which import DSPy,
    # and the flags are built without it.
    g.add_argument(
        "--repeat-penalty",
        type=float,
        default=None,
        help="local GGUF models: llama.cpp's repeat penalty (default: the engine's mild one; 1: off)",
    )
    g.add_argument(
        "--parallel",
        type=int,
        default=None,
        help="local GGUF models: calls decoded together (default: the batched engine, faster per judgment "
        "on 2 cores than 1, the serial engine, which decodes one call at a time; "
        "docs/measurements/speed-and-cost.md)",
    )


def check_backbone_args(args: argparse.Namespace) -> None:
    """The backbone flags' bounds, before a command builds anything."""
    check_bounds(args, BACKBONE_BOUNDS)


def check_api_key(args: argparse.Namespace) -> None:
    """An `openai/` model with no key to send: DSPy's native route fails on the first call, which for
    `evaluate` comes after its run directory opened. A local OpenAI-compatible server (--api-base) may
    take no key."""
    check_key(getattr(args, "lm", None), args.api_key, args.api_base)


def check_key(lm: Any, api_key: str | None, api_base: str | None) -> None:
    """`check_api_key` for one backbone (a panel's member has its own key and server)."""
    if not isinstance(lm, str) or not lm.strip().startswith("openai/"):
        return
    if not (api_key or api_base or os.environ.get("OPENAI_API_KEY")):
        raise BackboneError(
            f"backbone '{lm.strip()}' has no API key; pass --api-key or set OPENAI_API_KEY "
            "(or --api-base for a local OpenAI-compatible server)"
        )


@contextmanager
def backbone(args: argparse.Namespace, status: Any = None) -> Iterator[dspy.LM]:
    """Build the LM from flags and make it current for the block (dspy.context, not configure)."""

    def on_status(message: str) -> None:
        if status is not None:
            status.update(message)

    from cejudge_dspy.backbones import use_backbone

    with use_backbone(args.lm, on_status=on_status, **backbone_options(args)) as lm:
        yield lm


def backbone_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backbone flags as `use_backbone` / `check_backbone` / `make_lm` keyword arguments (a Ray worker
    builds its LM from these)."""
    check_backbone_args(args)
    from cejudge_dspy.backbones.llamacpp import DEFAULT_REPEAT_PENALTY

    return {
        "api_base": args.api_base,
        "api_key": args.api_key,
        "temperature": args.temperature,
        "seed": args.seed,
        "max_tokens": args.max_tokens,
        "cache": not args.no_cache,
        "adapter": adapter_choice(args),
        **({"require_logprobs": True} if getattr(args, "require_logprobs", False) else {}),
        **({"constrained": True} if args.constrained else {}),
        # Passed only when set: HTTP backbones refuse a sampler setting they do not have.
        **({"repeat_penalty": rp} if (rp := repeat_penalty(args)) != DEFAULT_REPEAT_PENALTY else {}),
        # Passed only when given: HTTP backbones refuse a setting they do not have.
        **({"parallel": n} if (n := getattr(args, "parallel", None)) is not None else {}),
    }


def adapter_choice(args: argparse.Namespace) -> str:
    """The --adapter of a run (parsers without the flag: auto, the backbone's own)."""
    return str(getattr(args, "adapter", None) or "auto")


def repeat_penalty(args: argparse.Namespace) -> float:
    """The --repeat-penalty of a run (not given, or parsers without the flag: the engine's default)."""
    from cejudge_dspy.backbones.llamacpp import DEFAULT_REPEAT_PENALTY

    given = getattr(args, "repeat_penalty", None)
    return DEFAULT_REPEAT_PENALTY if given is None else float(given)


def program_label(args: argparse.Namespace, task: str) -> str:
    """What --program resolves to for this run: "base" or a tuned state file with its hash (only CE-Judge
    has tuned programs). Run records keep this, so a resume never mixes two programs."""
    from cejudge_dspy.judges import run_program_identity

    return run_program_identity(task, args.method, args.program)


def announce_program(err: Any, label: str, task: str | None = None, program: str = "auto") -> None:
    """Say on stderr that a tuned program judges, or why `--program auto` passed over a tuned file."""
    if label != "base":
        err.print(f"program: {label} (tuned; --program base for the hand-written one)")
        return
    from cejudge_dspy.judges import auto_choice

    if task is not None and program == "auto" and (why := auto_choice(task)[1]):
        err.print(f"program: base ({why})")


def build(args: argparse.Namespace, task: str) -> dspy.Module:
    from cejudge_dspy.judges import run_program

    return run_program(task, options=judge_options(args))


def parse_fields(pairs: Sequence[str] | None, flag: str = "--field") -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise InputError(f"expected KEY=VALUE, got {pair!r}", field=flag)
        out[key.strip()] = value.strip()
    return out


INTERRUPTED = 130  # the exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it


def end_process(code: int) -> None:
    """End this process now with `code`, once a command stopped by Ctrl-C has returned: its records are on
    disk, its files closed and its lock released. The interpreter's own teardown (joining the threads
    litellm and Ray leave, Ray's atexit shutdown, collecting a large heap) would add seconds on a loaded
    machine to a Ctrl-C that must end the run promptly. Only for the process's entry point: a caller of
    `main(argv)` in its own process keeps running."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


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
            from cejudge_dspy.backbones import explain_backbone_error

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
        return INTERRUPTED
