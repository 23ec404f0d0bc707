"""The `dspy.LM` of an HTTP backbone: each answer checked for being whole before any adapter reads it, and
each call bounded in time.

DSPy hands the adapters an answer's text and drops how it ended: an answer cut at the token budget
(`finish_reason: "length"`) parsed as a complete one (concepts `['fo']`, feedback "The response handl").
`ServerLM` makes the call as `dspy.LM` does (`prepare`, `execute`, `finalize` of `dspy.clients.execution`,
the same three steps `BaseLM.__call__` and `acall` take) and reads the finish reason of the responses in
between: a cut answer raises `AnswerCutShort` where whole answers are required (`whole_answers()`, around
every call of the judges' stages, `judges._machinery`), which the stages turn into an unparsed outcome with
that reason; elsewhere (a reflection model's proposal) a cut answer is returned as DSPy returns it. A
cached answer keeps its finish reason, so it is caught again. An answer with no choices at all raises
`EmptyAnswer`, a server error (an error record, or one line), where DSPy returned an empty list that the
adapters turned into a prediction without fields.

A server that accepts a request and never answers held a call for the client's read timeout (600 s) and
then again for each retry. `timeout` (seconds, `make_lm(timeout=...)`, `--timeout`) is the client's timeout
for each attempt, and in an async call (every judgment) the bound on the whole call, retries included: past
it the call raises `CallTimedOut`, which `explain_backbone_error` says in one line. A call to a server the
package started waits for one of its slots before its clock starts (`_slots.py`), and once sent it ends
when that server did no work for `timeout` seconds, not when the time passed (`_progress.py`): a busy
machine slows such a server without stopping it. The client's own timeout is then only a backstop. The
timeout is no part of DSPy's cache key: how long one waited for an answer does not change the answer, and
runs that differ only in `--timeout` share their cache. Around each call to a one-slot server the package
started, holding the slot, the call's stage prefix is restored from disk or saved to it (`_prompt_states.py`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import dspy
from dspy.clients._deprecation import warn_openai_messages
from dspy.clients.execution import PreparedCall, aexecute, execute, finalize, prepare
from dspy.clients.legacy_outputs import value
from dspy.utils.callback import with_callbacks
from dspy.utils.exceptions import LMServerError, LMTimeoutError

from cejudge_dspy.backbones import _prompt_states
from cejudge_dspy.backbones._capabilities import carry
from cejudge_dspy.backbones._options import DEFAULT_TIMEOUT_S
from cejudge_dspy.backbones._progress import NoProgress, watched, within
from cejudge_dspy.backbones._slots import aslot, slot

# The client's timeout for one attempt at a server whose progress bounds the call (`_progress.py`): only
# for a server that works forever without answering, which its progress cannot tell from a slow answer.
BACKSTOP_S = 3600.0

_TRUNCATED = "LM response was truncated"  # DSPy's warning, said on every cut answer; here it is an outcome


# Whether the calls in this context need whole answers: the judges' stages do (`whole_answers`); a reflection
# model's proposal or a probe takes a cut answer as DSPy gives it. Set and restored by value, never by token:
# a stage's coroutine that is closed in another context must not raise on its way out.
_whole: ContextVar[bool] = ContextVar("cejudge_whole_answers", default=False)


@contextmanager
def whole_answers() -> Iterator[None]:
    """In this block a ServerLM's answer cut at the token budget raises AnswerCutShort."""
    before = _whole.get()
    _whole.set(True)
    try:
        yield
    finally:
        _whole.set(before)


def _not_truncation(record: logging.LogRecord) -> bool:
    return not (_whole.get() and str(record.msg).startswith(_TRUNCATED))


# DSPy warns on stderr at every cut answer (both its routes log it as "dspy.clients.lm"); where a ServerLM
# raises AnswerCutShort instead, which the judges record with its reason, the warning would only repeat it.
logging.getLogger("dspy.clients.lm").addFilter(_not_truncation)


class AnswerCutShort(Exception):  # noqa: N818 - it names the outcome, as DSPy's AdapterParseError does
    """The backbone stopped at the token budget (finish_reason "length"): the answer is not whole.

    Not a BackboneError (the run goes on) and not a parse error (no adapter retries it at the same budget);
    `text` is the cut answer, `outputs` what the LM call returned (a probe may still read them)."""

    def __init__(self, model: str, max_tokens: Any, text: str | None, outputs: list[Any]) -> None:
        budget = f"max_tokens={max_tokens}" if max_tokens else "the token budget"
        super().__init__(
            f"the answer was cut at {budget} (finish_reason: length) after {len(text or '')} characters; "
            "raise --max-tokens"
        )
        self.model = model
        self.text = text
        self.outputs = outputs


class EmptyAnswer(LMServerError):
    """The server answered without an answer (an empty `choices`): a server fault, like an HTTP 500."""


class CallTimedOut(TimeoutError):
    """A call to the backbone got no answer within its timeout (`seconds`, retries included)."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


def finish_reasons(result: Any) -> list[str | None]:
    """How each answer of a DSPy call result ended: the native responses', else the provider response's
    choices' (a call through LiteLLM keeps the raw response)."""
    responses = getattr(result, "responses", None) or ()
    if responses:
        return [getattr(r, "finish_reason", None) for r in responses]
    raw = getattr(result, "raw", None)
    return [value(c, "finish_reason") for c in (value(raw, "choices", None) or [])] if raw is not None else []


def _text(outputs: list[Any]) -> str | None:
    first = outputs[0] if outputs else None
    return first.get("text") if isinstance(first, dict) else first


@dataclasses.dataclass
class _Call(PreparedCall):
    """DSPy's prepared call, keyed in the cache without the client's timeout (see the module docstring)."""

    def key(self, lm: Any, asynchronous: bool) -> Any:
        key = super().key(lm, asynchronous)
        if isinstance(key, dict):
            key.pop("timeout", None)
        return key


def _prepare(lm: ServerLM, prompt: Any, messages: Any, kwargs: dict[str, Any], asynchronous: bool) -> _Call:
    call = prepare(lm, prompt, messages, kwargs, asynchronous=asynchronous)
    return _Call(**{f.name: getattr(call, f.name) for f in dataclasses.fields(call)})


def _load_client(lm: ServerLM, call: Any) -> None:
    """Import LiteLLM before the first call that goes through it (once a process: seconds, 19 s on a busy
    machine), so that the time a call may take counts waiting on the server, not loading the client. DSPy
    picks the route (its native engine or LiteLLM) without I/O; asked once per LM."""
    if lm._client_ready:
        return
    try:
        from dspy.clients._litellm import get_litellm
        from dspy.clients.engines.litellm_engine import AsyncLiteLLMEngine
        from dspy.clients.execution import _engine

        if isinstance(_engine(lm, call, True)[0], AsyncLiteLLMEngine):
            get_litellm(feature="dspy.LM")
    except Exception:  # noqa: BLE001 - only a head start; the call reports its own errors
        return
    lm._client_ready = True


class ServerLM(dspy.LM):
    """`dspy.LM` with whole answers and bounded calls (see the module docstring); built by `make_lm` for
    every HTTP backbone. `timeout_s` is also in `kwargs["timeout"]`, where DSPy's client reads it."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    _client_ready: bool = False  # its client library is loaded (_load_client)
    # Whether DSPy's JSON adapter sends the server a JSON schema: None, as DSPy reads the model string; for
    # llama.cpp's server (which takes one) only when asked (`constrained`), as the former in-process engine
    # constrained only when asked: a schema becomes a grammar, and where the model strays from it llama.cpp
    # filters the whole vocabulary at that token (4-5x slower per token in-process,
    # docs/measurements/speed-and-cost.md; no slower for the direct judge on the server,
    # docs/measurements/local-server.md).
    send_schema: bool | None = None

    @property
    def supports_response_schema(self) -> bool:
        declared = bool(super().supports_response_schema)
        return declared if self.send_schema is None else declared and self.send_schema

    @property
    def takes_response_schema(self) -> bool:
        """Whether the server takes a JSON schema at all, sent or not (`backbones check`)."""
        return bool(super().supports_response_schema)

    def copy(self, **kwargs: Any) -> ServerLM:
        """`dspy.LM.copy`, with what `make_lm` declared of this LM (`backbones.capabilities`) carried over."""
        copied = super().copy(**kwargs)
        carry(self, copied)
        return copied

    def _checked(self, call: Any, result: Any) -> Any:
        outputs = finalize(self, call, result)
        if isinstance(outputs, list) and not outputs:
            raise EmptyAnswer("the server answered with no choices (no answer at all)", model=self.model)
        if "length" in finish_reasons(result) and _whole.get():
            budget = (call.legacy or {}).get("max_tokens") or self.kwargs.get("max_tokens")
            raise AnswerCutShort(
                self.model, budget, _text(outputs if isinstance(outputs, list) else []), outputs
            )
        return outputs

    def _timed_out(self, idle: bool = False) -> CallTimedOut:
        if idle:
            return CallTimedOut(
                f"the server did no work for {self.timeout_s:g} s (--timeout) while a call waited on it; "
                "it accepted the request but stopped answering",
                self.timeout_s,
            )
        return CallTimedOut(
            f"no answer within the timeout of {self.timeout_s:g} s (--timeout); "
            "the server accepted the request but did not answer",
            self.timeout_s,
        )

    @with_callbacks
    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        call = _prepare(self, prompt, messages, kwargs, False)
        warn_openai_messages(self, messages)
        try:  # the client's timeout ends each attempt (a sync call cannot be cut from outside)
            api_base = self.kwargs.get("api_base")
            with slot(api_base):  # waiting for a slot is not waiting on the server
                _prompt_states.before(api_base, call.messages)
                result = execute(self, call)
                if not getattr(result, "cache_hit", False):
                    _prompt_states.after(api_base, call.messages)
        except LMTimeoutError:
            raise self._timed_out() from None
        return self._checked(call, result)

    @with_callbacks
    async def acall(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        api_base = self.kwargs.get("api_base")
        if watched(api_base) is not None:  # its progress bounds the call; the client's clock is a backstop
            kwargs = {**kwargs, "timeout": max(self.timeout_s, BACKSTOP_S)}
        call = await asyncio.to_thread(_prepare, self, prompt, messages, kwargs, True)
        warn_openai_messages(self, messages)
        if not self._client_ready:  # outside the deadline: loading the client is no waiting on a server
            await asyncio.to_thread(_load_client, self, call)
        try:
            async with aslot(api_base):
                kept = _prompt_states.kept(api_base)  # stage prefixes saved and restored, holding the slot
                if kept:
                    await asyncio.to_thread(_prompt_states.before, api_base, call.messages)
                result = await within(api_base, self.timeout_s, aexecute(self, call))
                if kept and not getattr(result, "cache_hit", False):
                    await asyncio.to_thread(_prompt_states.after, api_base, call.messages)
        except NoProgress:
            raise self._timed_out(idle=True) from None
        except (TimeoutError, LMTimeoutError):
            if watched(api_base) is not None:  # the backstop: working all along, never answering
                raise CallTimedOut(
                    f"no answer within {BACKSTOP_S:g} s, although the server kept working", BACKSTOP_S
                ) from None
            raise self._timed_out() from None
        return self._checked(call, result)
