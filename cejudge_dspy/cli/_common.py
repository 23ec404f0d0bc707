"""What every `cejudge` command (and `optimize.py`) shares: flags, backbone construction, field parsing, and
one error handler with one exit-code convention.

Exit codes: 0 success; 1 judged, but some item was not ok (unparsed or error); 2 bad input or usage
(CEJudgeError); 3 the backbone cannot be built or reached (BackboneError); 130 interrupted.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cejudge_dspy.cli._program_args import Repeatable, as_flag
from cejudge_dspy.errors import CEJudgeError, InputError
from cejudge_dspy.judges import ADAPTER_CHOICES, Option

if TYPE_CHECKING:  # the flags are built without DSPy; commands import it when they run
    import dspy

Handler = Callable[[argparse.Namespace], int]


def bound(flag: str, what: str, low: float | None = None, high: float | None = None) -> Option:
    """A numeric flag's range, [low, high] (None: open on that side), declared as the judge's options
    declare theirs: `Option.problem` is the one check (NaN and the infinities are never in range)."""
    return Option(flag=flag, help="", kind="number", low=low, high=high, what=what)


def check_flag(option: Option, value: Any) -> None:
    """One line naming the flag when `value` is out of its range (None: not given, the option is off)."""
    if value is not None and (problem := option.problem(value)) is not None:
        raise InputError(problem, field=option.flag)


# The backbone's numeric flags. Temperatures above 2 are outside what the HTTP providers accept; llama.cpp's
# seed is a 32-bit unsigned number.
TEMPERATURE = bound("--temperature", "a sampling temperature", 0.0, 2.0)
SEED = bound("--seed", "a random seed", 0, 2**32 - 1)
MAX_TOKENS = bound("--max-tokens", "tokens", 1)
# Its range is the backbone's own (backbones.check_backbone: above 0); here only a finite number.
REPEAT_PENALTY = bound("--repeat-penalty", "a repeat penalty")
# Seconds one call to an HTTP backbone may take, retries included (backbones.TIMEOUT_RANGE says the same):
# a server that accepts a request and never answers ends the run in this time, not in the client's 600 s.
TIMEOUT = bound("--timeout", "seconds", 1, 3600)
DEFAULT_TIMEOUT = 300  # backbones.DEFAULT_TIMEOUT_S (why 300: there)


def add_backbone_args(p: argparse.ArgumentParser) -> None:
    p.set_defaults(lm_all=None)  # every --lm given (Repeatable): several name a panel's members
    g = p.add_argument_group("backbone")
    g.add_argument(
        "--lm",
        default="embedded",
        action=Repeatable,
        help="embedded (default), gguf:PATH, llama-server/NAME with --api-base, or a dspy model string such "
        "as hosted_vllm/MODEL; repeated "
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
        "(default): json for llama.cpp's server (local GGUF models, llama-server/NAME), chat for other "
        "backbones. json suits a small model behind "
        "a server that does not follow the chat markers",
    )
    g.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"HTTP backbones: seconds one call may take, retries included, {TIMEOUT.describe()} (default "
        f"{DEFAULT_TIMEOUT}); a server that stops answering ends the run with one line, its records kept",
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
        help="llama.cpp's server (local GGUF models, llama-server/NAME): send the JSON schema, decoded as a "
        "grammar (always parses; slower where the model strays from it)",
    )
    # No numbers here: the defaults are the local server's own (backbones), which import DSPy,
    # and the flags are built without it.
    g.add_argument(
        "--repeat-penalty",
        type=float,
        default=None,
        help="local GGUF models: their llama.cpp server's repeat penalty (default: a mild one; 1: off)",
    )
    g.add_argument(
        "--parallel",
        type=int,
        default=None,
        help="local GGUF models: their llama.cpp server's slots, the calls it decodes together "
        "(default 1; docs/measurements/local-server.md)",
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
    """The backbone flags, checked, as `use_backbone` / `check_backbone` / `make_lm` keyword arguments (a
    Ray worker builds its LM from these): the one place they are read."""
    flags = vars(args)
    for option in (TEMPERATURE, SEED, MAX_TOKENS, REPEAT_PENALTY, TIMEOUT):
        check_flag(option, flags.get(option.dest))
    from cejudge_dspy.backbones import DEFAULT_REPEAT_PENALTY

    rp, parallel = flags.get("repeat_penalty"), flags.get("parallel")
    return {
        "api_base": args.api_base,
        "api_key": args.api_key,
        "temperature": args.temperature,
        "seed": args.seed,
        "max_tokens": args.max_tokens,
        "cache": not args.no_cache,
        "adapter": flags.get("adapter") or "auto",
        "timeout": float(flags.get("timeout") or DEFAULT_TIMEOUT),
        **({"require_logprobs": True} if flags.get("require_logprobs") else {}),
        **({"constrained": True} if flags.get("constrained") else {}),
        # Passed only when set: HTTP backbones refuse a sampler setting they do not have.
        **({"repeat_penalty": float(rp)} if rp is not None and float(rp) != DEFAULT_REPEAT_PENALTY else {}),
        # Passed only when given: HTTP backbones refuse a setting they do not have.
        **({"parallel": parallel} if parallel is not None else {}),
    }


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
    if local := sys.modules.get("cejudge_dspy.backbones._local_server"):  # os._exit runs no atexit hook
        local.stop_all()  # the local llama.cpp servers this process started (they would follow in 1 s)
    os._exit(code)


def run_command(handler: Handler, args: argparse.Namespace) -> int:
    """Run a command: every CEJudgeError (and a backbone failure DSPy wrapped) is one red line on stderr
    and its exit code; anything else is a bug and keeps its traceback. An option the library names as
    Python spells it (`tie_band`) is named by its flag here (`--tie-band`). The package's warnings while it
    runs (a backbone's refusal, quoted) say no secret of the command either (`_RedactingFilter`)."""
    quiet = _RedactingFilter(args)
    logging.getLogger("cejudge_dspy").addFilter(quiet)
    try:
        try:
            return handler(args)
        except InputError as exc:
            raise as_flag(exc) from None
        except CEJudgeError:
            raise
        except Exception as exc:
            # DSPy wraps backbone failures (refused connection, bad key, model load, a body that is no
            # answer) in its own errors: one line for each, never a traceback.
            from cejudge_dspy.backbones import backbone_failure

            lm = getattr(args, "lm", None)
            explained = backbone_failure(exc, lm, api_base=getattr(args, "api_base", None)) if lm else None
            if explained is None:
                raise
            raise explained from exc
    except CEJudgeError as exc:
        from rich.text import Text

        from cejudge_dspy.cli.display import console

        line = error_message(exc, args)
        console(stderr=True).print(Text.assemble(("error: ", "bold red"), line), soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted; results written so far are kept (rerun to resume)", file=sys.stderr)
        return INTERRUPTED
    finally:
        logging.getLogger("cejudge_dspy").removeFilter(quiet)


class _RedactingFilter(logging.Filter):
    """Rewrites each warning of the `cejudge_dspy` logger without the command's secrets (`error_message`'s
    redaction): a backbone's refusal is quoted in them, and a server may echo the key there too."""

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__()
        self.args = args

    def filter(self, record: logging.LogRecord) -> bool:
        from cejudge_dspy.runs import redact_text

        record.msg, record.args = redact_text(record.getMessage(), command_secrets(self.args)), None
        return True


def command_secrets(args: argparse.Namespace) -> list[str]:
    """The secrets a command was given: --api-key, OPENAI_API_KEY (what an `openai/` backbone sends without
    one), the credentials in --api-base and --reflection-api-base."""
    from cejudge_dspy.runs import secrets_of

    keys = [getattr(args, "api_key", None), os.environ.get("OPENAI_API_KEY")]
    bases = [getattr(args, "api_base", None), getattr(args, "reflection_api_base", None)]
    return secrets_of(keys, bases)


def error_message(exc: BaseException, args: argparse.Namespace) -> str:
    """An error as the one line the CLI prints: its reason without a wrapped traceback
    (`backbones.error_line`), and no secret of the command in it, nor any labelled credential or URL
    credentials a server echoed (`runs.redact_text`, the redaction every record gets)."""
    from cejudge_dspy.backbones import error_line
    from cejudge_dspy.runs import redact_text

    return redact_text(error_line(exc, limit=None), command_secrets(args))
