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

from cejudge_dspy.backbones import BackboneOptions
from cejudge_dspy.cli._program_args import add_flag, as_flag, config_options, given_options
from cejudge_dspy.errors import CEJudgeError, InputError, Option

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


def add_backbone_args(p: argparse.ArgumentParser) -> None:
    """The backbone flags, one per field of `BackboneOptions` (its flag, help, kind and range)."""
    p.set_defaults(lm_all=None)  # every --lm given (Repeatable): several name a panel's members
    g = p.add_argument_group("backbone")
    for _, opt in BackboneOptions.options():
        add_flag(g, opt)


def has_backbone(args: argparse.Namespace) -> bool:
    """Whether the command takes the backbone flags."""
    return "lm_all" in vars(args)


def backbone_flags(args: argparse.Namespace) -> BackboneOptions:
    """The command's backbone: the flags given over a --config file's backbone keys over the defaults,
    checked (a value out of its bounds is one line naming its flag)."""
    config = vars(args).get("config")
    given = {**(config_options(config)[1] if config else {}), **given_options(args, BackboneOptions)}
    try:
        return BackboneOptions(**given)
    except InputError as exc:
        raise as_flag(exc) from None


@contextmanager
def backbone(options: BackboneOptions, status: Any = None) -> Iterator[dspy.LM]:
    """Build the LM and make it current for the block (dspy.context, not configure)."""

    def on_status(message: str) -> None:
        if status is not None:
            status.update(message)

    from cejudge_dspy.backbones import use_backbone

    with use_backbone(options.lm, on_status=on_status, **options.kwargs()) as lm:
        yield lm


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
    runs (a backbone's refusal, quoted) say no secret of the command either (`_RedactingFilter`). A
    command with backbone flags has them checked before anything runs."""
    quiet = _RedactingFilter(args)
    logging.getLogger("cejudge_dspy").addFilter(quiet)
    lm: BackboneOptions | None = None
    try:
        try:
            lm = backbone_flags(args) if has_backbone(args) else None
            return handler(args)
        except InputError as exc:
            raise as_flag(exc) from None
        except CEJudgeError:
            raise
        except Exception as exc:
            # DSPy wraps backbone failures (refused connection, bad key, model load, a body that is no
            # answer) in its own errors: one line for each, never a traceback.
            from cejudge_dspy.backbones import backbone_failure

            explained = backbone_failure(exc, lm.lm, api_base=lm.api_base) if lm else None
            if explained is None:
                raise
            raise explained from exc
    except CEJudgeError as exc:
        from rich.text import Text

        from cejudge_dspy.cli.display import console

        line = error_message(exc, command_secrets(args))
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
    one), the credentials in --api-base and --reflection-api-base (as given, before any check)."""
    from cejudge_dspy.runs import secrets_of

    flags = vars(args)
    keys = [flags.get("api_key"), os.environ.get("OPENAI_API_KEY")]
    return secrets_of(keys, [flags.get("api_base"), flags.get("reflection_api_base")])


def error_message(exc: BaseException, secrets: list[str]) -> str:
    """An error as the one line the CLI prints: its reason without a wrapped traceback
    (`backbones.error_line`), and no secret of the command in it, nor any labelled credential or URL
    credentials a server echoed (`runs.redact_text`, the redaction every record gets)."""
    from cejudge_dspy.backbones import error_line
    from cejudge_dspy.runs import redact_text

    return redact_text(error_line(exc, limit=None), secrets)
