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
    }


@dataclass
class FakeEngine:
    """Engine for `dspy.LM("fake/judge", engine=FakeEngine(...))`; `rules` override the defaults."""

    rules: dict[str, Rule] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    delay: float = 0.0
    supports_response_schema: bool = False

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
