"""A latency-simulating backbone: every CE-Judge stage answered well-formed, after a modelled delay.

Speed work needs a backbone whose cost is known and a GPU is not: `SimulatedEngine` sleeps
`base_latency + prompt_tokens * per_prompt_token + output_tokens * per_output_token` per call (tokens
estimated as characters / `chars_per_token`), optionally behind `max_concurrency` server slots, and
counts calls, tokens and in-flight calls. Answers are deterministic functions of the inputs, so DSPy's
cache and the judges' shared work behave as with a real model at temperature 0, and their lengths
follow the inputs (a translation is as long as its source) so token counts are realistic.

Spec (`--lm`): `simulated` (defaults), `simulated:MS` (a flat MS per call, tokens cost nothing), or
`simulated:base=MS,prompt=MS,output=MS,slots=N` (per call, per prompt token, per output token).
The answers themselves are written by _simulated_answers.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import dspy
from dspy.lm15 import Message, Response, TextPart, Usage

from cejudge_dspy.backbones._simulated_answers import answer, fields_of, render, stage_of
from cejudge_dspy.backbones._spec_checks import http_only, parse_spec
from cejudge_dspy.usage import current_subject

MODEL = "simulated/ce-judge"
# The item a call works for, set by whoever issues it (see `tagged`); the call log keeps it so a
# benchmark can rebuild each item's critical path.
current_tag: ContextVar[str | None] = ContextVar("simulated_call_tag", default=None)


@contextmanager
def tagged(tag: str) -> Iterator[None]:
    token = current_tag.set(tag)
    try:
        yield
    finally:
        current_tag.reset(token)


@dataclass(frozen=True)
class CallLog:
    stage: str
    tag: str | None
    prompt_tokens: int
    output_tokens: int
    latency: float
    source_language: str | None = None  # translate calls only: English ones are avoidable work
    # What the call works on, as the judge labels it (`working_on` in usage/_progress.py).
    which: str | None = None


@dataclass
class SimulatedEngine:
    """DSPy engine (`complete(Request) -> Response`) with a latency model; seconds throughout."""

    base_latency: float = 0.05
    per_prompt_token: float = 0.0001  # prefill, ~10k tokens/s
    per_output_token: float = 0.01  # decoding, ~100 tokens/s per sequence
    max_concurrency: int | None = None  # server batch slots; None: unlimited
    chars_per_token: float = 4.0
    supports_response_schema = False  # JSONAdapter then asks for JSON in the prompt, which we parse

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.max_concurrency) if self.max_concurrency else None
        # asyncio semaphores bind to one event loop; keep one per loop (asyncio.run makes a new loop).
        self._async_slots: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()
        self.reset()

    def __deepcopy__(self, memo: dict[int, Any]) -> SimulatedEngine:
        return self  # copies of a program share the server, as they would a real one

    def reset(self) -> None:
        """Forget calls and peaks (between benchmark runs)."""
        with self._lock:
            self.log: list[CallLog] = []
            self.in_flight = self.peak_in_flight = self.serving = self.peak_serving = 0

    @property
    def calls(self) -> int:
        return len(self.log)

    def tokens(self, text: str) -> int:
        return max(1, round(len(text) / self.chars_per_token))

    def latency(self, prompt_tokens: int, output_tokens: int) -> float:
        return (
            self.base_latency + prompt_tokens * self.per_prompt_token + output_tokens * self.per_output_token
        )

    def prepare(self, request: Any) -> tuple[Response, CallLog]:
        """The answer to `request` and the log entry of its call (recorded once it is served)."""
        system = (
            request.system
            if isinstance(request.system, str)
            else "".join(p.text for p in request.system or [])
        )
        prompt = system + "".join(m.text or "" for m in request.messages)
        last = request.messages[-1].text or ""
        inputs = fields_of(last)
        stage = stage_of(system)
        text = render(answer(stage, inputs), "Respond with a JSON object" in last)
        p, o = self.tokens(prompt), self.tokens(text)
        language = inputs.get("source_language") if stage == "translate" else None
        entry = CallLog(stage, current_tag.get(), p, o, self.latency(p, o), language, current_subject())
        usage = Usage(input_tokens=p, output_tokens=o, total_tokens=p + o)
        message = Message.assistant([TextPart(text)])
        return Response(
            id=None, model=request.model, message=message, finish_reason="stop", usage=usage
        ), entry

    @contextmanager
    def counting(self, counter: Literal["in_flight", "serving"]) -> Iterator[None]:
        """Count a call as submitted (`in_flight`, queued included) or as holding a slot (`serving`)."""
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)
            peak = f"peak_{counter}"
            setattr(self, peak, max(getattr(self, peak), getattr(self, counter)))
        try:
            yield
        finally:
            with self._lock:
                setattr(self, counter, getattr(self, counter) - 1)

    def record(self, entry: CallLog) -> None:
        with self._lock:
            self.log.append(entry)

    def complete(self, request: Any) -> Response:
        response, entry = self.prepare(request)
        with self.counting("in_flight"), self._slots or nullcontext(), self.counting("serving"):
            time.sleep(entry.latency)
        self.record(entry)
        return response

    def stream(self, request: Any) -> Any:  # pragma: no cover - the judges never stream
        raise NotImplementedError

    def close(self) -> None:
        pass


class AsyncSimulatedEngine:
    """The async twin for `dspy.LM(..., async_engine=...)`: sleeps without blocking the event loop."""

    def __init__(self, sync: SimulatedEngine) -> None:
        self.sync = sync

    def __deepcopy__(self, memo: dict[int, Any]) -> AsyncSimulatedEngine:
        return self

    def _slots(self) -> asyncio.Semaphore | None:
        engine = self.sync
        if not engine.max_concurrency:
            return None
        with engine._lock:
            return engine._async_slots.setdefault(
                asyncio.get_running_loop(), asyncio.Semaphore(engine.max_concurrency)
            )

    async def complete(self, request: Any) -> Response:
        engine = self.sync
        response, entry = engine.prepare(request)
        with engine.counting("in_flight"):
            async with self._slots() or nullcontext():
                with engine.counting("serving"):
                    await asyncio.sleep(entry.latency)
        engine.record(entry)
        return response

    def stream(self, request: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def simulated_backbone(cache: bool = False, **model: Any) -> tuple[dspy.LM, SimulatedEngine]:
    """A `dspy.LM` over a fresh `SimulatedEngine(**model)`, and the engine (for its counters)."""
    engine = SimulatedEngine(**model)
    return _lm(engine, cache=cache), engine


def _lm(engine: SimulatedEngine, **lm_kwargs: Any) -> dspy.LM:
    # One LM shape for both entry points; no retries, since a simulated call never fails transiently.
    return dspy.LM(
        MODEL, engine=engine, async_engine=AsyncSimulatedEngine(engine), num_retries=0, **lm_kwargs
    )


def simulated_lm(spec: str, *, api_base: str | None = None, **lm_kwargs: Any) -> dspy.LM:
    """`backbones.make_lm`'s hook: the `dspy.LM` for a `simulated...` spec (`lm_kwargs`: temperature, ...)."""
    if api_base:
        raise http_only("--api-base", spec)
    return _lm(SimulatedEngine(**parse_spec(spec)), **lm_kwargs)
