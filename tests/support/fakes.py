"""A scripted fake backbone: a DSPy 3.4 engine that answers each CE-Judge stage by a Python rule.

It reads the stage from the output fields named in the system message, parses the input fields from
the last user message, records every call (so tests can check which text reached which stage) and
answers in whichever format the adapter asked for (ChatAdapter markers or a JSON object).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.lm15 import Message, Response, TextPart, Usage

FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with|\Z)", re.S)
OUTPUTS = re.compile(r"Your output fields are:\n(.*?)\nAll interactions", re.S)


@dataclass
class Call:
    stage: str
    inputs: dict[str, str]
    json_mode: bool


Rule = Callable[[dict[str, str]], dict[str, Any] | str]
# CheckEval stages by output field; checked after the CE-Judge stages, whose judgments also output `answers`.
CHECKEVAL_STAGES = {
    "diversified": "diversify",
    "elaborated": "elaborate",
    "decisions": "filter",
    "answers": "answer",
}


def _stage_of(system: str) -> str:
    outputs = re.findall(r"`(\w+)`", OUTPUTS.search(system).group(1)) if OUTPUTS.search(system) else []
    if "concepts" in outputs:
        return "concepts"
    if "english" in outputs:
        return "translate"
    if "checklist" in outputs:
        return "checklist_r2i" if "`instruction_concepts`" in system else "checklist_i2r"
    if "score" in outputs:
        return "score"
    if "verdict" in outputs:
        return "verdict"
    if "fulfils" in outputs:
        return "grade"
    if "reference" in outputs:
        return "reference"
    if "translation" in outputs:
        return "reference_translation"
    for output, stage in CHECKEVAL_STAGES.items():
        if output in outputs:
            return stage
    return "other:" + ",".join(outputs)


def default_rules() -> dict[str, Rule]:
    """Well-formed answers that echo part of their input, so data flow is visible in outputs."""
    return {
        "concepts": lambda i: {"concepts": [f"concept of {i['text'][:20]}"]},
        "translate": lambda i: {"english": f"EN[{i['text']}]"},
        "checklist_r2i": lambda i: {"checklist": [f"r2i about {i['response'][:30]}?"]},
        "checklist_i2r": lambda i: {"checklist": [f"i2r about {i['instruction'][:30]}?"]},
        "score": lambda i: {"answers": ["q -> fine"], "feedback": "fb", "score": 5},
        "verdict": lambda i: {"answers": ["q -> a"], "feedback": "fb", "verdict": "A"},
        # Equal grades leave every pair to the pairwise judgment, as before grades existed.
        "grade": lambda i: {"fulfils": "yes", "feedback": "fb"},
        "reference": lambda i: {"reference": f"REF[{i['instruction'][:20]}]"},
        "reference_translation": lambda i: {"translation": f"REF[{i['target_language']}: {i['text'][:20]}]"},
    }


@dataclass
class FakeEngine:
    """Engine for `dspy.LM("fake/judge", engine=FakeEngine(...))`; `rules` override the defaults."""

    rules: dict[str, Rule] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    delay: float = 0.0
    supports_response_schema: bool = False
    # (stage, inputs, text) -> OpenAI `logprobs.content` for the answer, or None for no logprobs; used
    # only when the request asks for logprobs (see `scripted_logprobs`).
    logprobs: Callable[[str, dict[str, str], str], list[dict[str, Any]] | None] | None = None
    refuse_logprobs: bool = False  # raise UnsupportedFeatureError when asked for logprobs
    asked_logprobs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    def stage_calls(self, stage: str) -> list[Call]:
        return [c for c in self.calls if c.stage == stage]

    def complete(self, request: Any) -> Response:
        system = (
            request.system
            if isinstance(request.system, str)
            else "".join(p.text for p in request.system or [])
        )
        last = request.messages[-1].text or ""
        json_mode = "Respond with a JSON object" in last
        stage = _stage_of(system)
        inputs = {k: v.strip() for k, v in FIELD.findall(last)}
        with self._lock:
            self.calls.append(Call(stage, inputs, json_mode))
        rule = {**default_rules(), **self.rules}.get(stage)
        answer = rule(inputs) if rule else "no rule"
        text = answer if isinstance(answer, str) else _format(answer, json_mode)
        if request.config.logprobs is not None:
            with self._lock:
                self.asked_logprobs.append(stage)
            if self.refuse_logprobs:
                raise dspy.lm15.UnsupportedFeatureError(
                    "this fake does not support logprobs", feature="logprobs"
                )
            content = self.logprobs(stage, inputs, text) if self.logprobs else None
            if content is not None:
                raw = {
                    "id": "fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": request.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                            "logprobs": {"content": content},
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                return dspy.lm15.response_from_openai_chat(raw, model=request.model)
        return Response(
            id=None,
            model=request.model,
            message=Message.assistant([TextPart(text)]),
            finish_reason="stop",
            usage=Usage(
                input_tokens=len(system + last) // 4,
                output_tokens=len(text) // 4,
                total_tokens=(len(system + last) + len(text)) // 4,
            ),
        )

    def stream(self, request: Any) -> Any:  # pragma: no cover - not used by the judges
        raise NotImplementedError

    def close(self) -> None:
        pass


class AsyncFakeEngine:
    def __init__(self, sync: FakeEngine) -> None:
        self.sync = sync

    async def complete(self, request: Any) -> Response:
        engine = self.sync
        with engine._lock:
            engine.in_flight += 1
            engine.max_in_flight = max(engine.max_in_flight, engine.in_flight)
        try:
            if engine.delay:
                await asyncio.sleep(engine.delay)
            return engine.complete(request)
        finally:
            with engine._lock:
                engine.in_flight -= 1

    def stream(self, request: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def _format(answer: dict[str, Any], json_mode: bool) -> str:
    if json_mode:
        return json.dumps(answer)
    parts = [f"[[ ## {k} ## ]]\n{json.dumps(v) if isinstance(v, list) else v}" for k, v in answer.items()]
    return "\n\n".join(parts) + "\n\n[[ ## completed ## ]]"


def fake_lm(rules: dict[str, Rule] | None = None, **kwargs: Any) -> tuple[dspy.LM, FakeEngine]:
    engine = FakeEngine(rules=rules or {}, **kwargs)
    lm = dspy.LM("fake/judge", engine=engine, async_engine=AsyncFakeEngine(engine), cache=False)
    return lm, engine


TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")


def scripted_logprobs(text: str, at: dict[str, dict[str, float]] | None = None) -> list[dict[str, Any]]:
    """OpenAI logprobs content for `text` split into word / punctuation tokens (a space joins the token
    after it). A token whose preceding text ends with a key of `at` gets that key's alternatives
    ({token text: probability}); every other token has probability 1 and no rival."""
    import math

    out, pos = [], 0
    for token in TOKEN.findall(text):
        before = text[:pos]
        alts = next((a for key, a in (at or {}).items() if before.endswith(key)), None) or {token: 1.0}
        top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in alts.items()]
        out.append(
            {"token": token, "logprob": math.log(alts.get(token, 1e-6)), "bytes": None, "top_logprobs": top}
        )
        pos += len(token)
    return out


class StopAfterReading(Exception):
    """Raised by `spy_on_adapter`'s program once it has read the adapter: ends the command (exit 2)."""


def spy_on_adapter(monkeypatch: Any, seen: dict[str, Any], key: str = "judge") -> None:
    """Put a fake LM in place of every backbone and, in place of `cejudge judge`'s program, one that keeps
    the DSPy adapter current while it judges in `seen[key]` and stops the command there: what the CLI made
    current without judging anything."""
    from cejudge_dspy.backbones import _spec as backbones
    from cejudge_dspy.errors import CEJudgeError

    lm, _ = fake_lm()
    monkeypatch.setattr(backbones, "make_lm", lambda spec, **kw: lm)

    class Stop(StopAfterReading, CEJudgeError):
        pass

    def judging_program(task: Any, *args: Any, **kwargs: Any) -> Any:
        def run(**_: Any) -> Any:
            seen[key] = dspy.settings.adapter
            raise Stop("stop after reading the adapter")

        return run

    monkeypatch.setattr("cejudge_dspy.judges.run_program", judging_program)
