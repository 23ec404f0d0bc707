"""What the simulated backbone answers: the stage a request is for, and a well-formed, deterministic answer
for it, sized like a real model's, in the format the adapter asked for.

Every stage of the shipped judges has its answer: CE-Judge's (concepts, translate, checklists, grade,
score, verdict, reference), the direct judge's and G-Eval's (score, verdict), and CheckEval's checklist
build (diversify, elaborate, filter) and its yes/no answering stage, so the CheckEval tutorial's commands
write ok records on `--lm simulated:0`."""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from typing import Any

# The reference parse of an input section (tests check `fields_of` against it).
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with|\Z)", re.S)
_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)\nAll interactions", re.S)
_WORDS = (
    "narrative voice register argument structure tone imagery instruction format accuracy reasoning context "
    "audience detail coherence style evidence request"
).split()


def fields_of(message: str) -> dict[str, str]:
    """The input fields of a ChatAdapter/JSONAdapter user message, `[[ ## name ## ]]` sections, each up to
    the next section or the closing "Respond with" reminder. The same as `_FIELD` on every message an
    adapter writes (tests/backbones/test_backbones.py), split instead of matched: a fifth of the fake
    server's cost."""
    out: dict[str, str] = {}
    for chunk in ("\n\n" + message).split("\n\n[[ ## ")[1:]:
        name, marker, value = chunk.partition(" ## ]]\n")
        if marker and name.isidentifier():
            out[name] = value.split("\n\nRespond with", 1)[0].strip()
    return out


@lru_cache(maxsize=256)  # a run repeats a handful of system messages, one per stage and adapter
def stage_of(system: str) -> str:
    """The stage a request is for, read from the output fields the adapter lists in the system message."""
    match = _OUTPUTS.search(system)
    outputs = re.findall(r"`(\w+)`", match.group(1)) if match else []
    for output, stage in (
        ("concepts", "concepts"),
        ("english", "translate"),
        ("score", "score"),
        ("verdict", "verdict"),
        ("fulfils", "grade"),
        ("reference", "reference"),
        ("translation", "reference_translation"),
        ("diversified", "diversify"),
        ("elaborated", "elaborate"),
        ("decisions", "filter"),
    ):
        if output in outputs:
            return stage
    if "answers" in outputs:  # CheckEval's yes/no answers (CE-Judge's `answers` come with a score or verdict)
        return "yes_no"
    if "checklist" in outputs:
        return "checklist_r2i" if "`instruction_concepts`" in system else "checklist_i2r"
    return "other:" + ",".join(outputs)


def _h(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12], 16)


def _quote(text: str, start: int, n: int = 6) -> str:
    words = text.split() or ["(empty)"]
    return " ".join(words[start % len(words) :][:n])


def answer(stage: str, inputs: dict[str, str]) -> dict[str, Any]:
    """A well-formed, deterministic answer for one stage, sized like a real model's."""
    if stage == "concepts":
        seed = _h(inputs.get("text", ""))
        return {
            "concepts": [
                f"{_WORDS[(seed >> (4 * k)) % len(_WORDS)]} of the {inputs.get('kind', 'text')}"
                for k in range(2 + seed % 3)
            ]
        }
    if stage == "translate":
        text = inputs.get("text", "")
        english = inputs.get("source_language", "").strip().lower() in ("english", "en")
        return {"english": text if english else f"[English] {text}"}
    if stage.startswith("checklist"):
        text = inputs.get("response") or inputs.get("instruction") or ""
        seed = _h(stage, text)
        return {
            "checklist": [
                f"Does the passage '{_quote(text, seed + 7 * k)}' serve the "
                f"{_WORDS[(seed + k) % len(_WORDS)]} the instruction calls for?"
                for k in range(3 + seed % 4)
            ]
        }
    if stage == "score":
        levels = sorted(int(v) for v in re.findall(r'"(\d+)"\s*:', inputs.get("scale", ""))) or [1]
        seed = _h(inputs.get("instruction", ""), inputs.get("response", ""))
        return {
            "answers": _answers(inputs.get("checklist", ""), seed),
            "feedback": _feedback(inputs.get("response", ""), seed),
            "score": levels[seed % len(levels)],
        }
    if stage == "grade":
        seed = _h(inputs.get("instruction", ""), inputs.get("response", ""))
        # Two responses of one item get equal labels about 3 times in 8, and then the pairwise judgment
        # runs as tie-breaker, as on real data.
        return {
            "fulfils": ("yes", "yes", "partly", "no")[seed % 4],
            "feedback": _feedback(inputs.get("response", ""), seed),
        }
    if stage == "reference":
        instruction = inputs.get("instruction", "")
        return {"reference": f"A short answer to '{_quote(instruction, _h(instruction))}'."}
    if stage == "reference_translation":
        return {"translation": f"[{inputs.get('target_language', '')}] {inputs.get('text', '')}"}
    if stage in CHECKEVAL:
        return CHECKEVAL[stage](inputs)
    if stage == "verdict":
        a, b = inputs.get("response_a", ""), inputs.get("response_b", "")
        # Prefer the response with the smaller digest: the same pick in both orders (position-consistent).
        verdict = "A" if _h(a) <= _h(b) else "B"
        return {
            "answers": _answers(inputs.get("checklist_a", ""), _h(a, b)),
            "feedback": _feedback(a, _h(b)),
            "verdict": verdict,
        }
    return {}


def _list(value: str) -> list[str]:
    """A `list[str]` input as the adapters write it (a JSON array); the quoted strings if it is not one."""
    try:
        items = json.loads(value)
    except ValueError:
        items = None
    return [str(v) for v in items] if isinstance(items, list) else re.findall(r'"([^"]+)"', value)


def _diversify(inputs: dict[str, str]) -> dict[str, Any]:
    """2 to 5 new questions on the sub-dimension, phrased so that Yes means better."""
    sub = inputs.get("subdimension", "the sub-dimension")
    seed = _h("diversify", inputs.get("task", ""), inputs.get("dimension", ""), sub)
    return {
        "diversified": [
            f"Does the response handle the {_WORDS[(seed + 5 * k) % len(_WORDS)]} well with respect to {sub}?"
            for k in range(2 + seed % 4)
        ]
    }


def _elaborate(inputs: dict[str, str]) -> dict[str, Any]:
    """2 to 6 finer questions, each a seed asked of one part of the response."""
    seeds = _list(inputs.get("seeds", "")) or ["the sub-dimension"]
    seed = _h("elaborate", inputs.get("subdimension", ""), *seeds)
    return {
        "elaborated": [
            f"Looking only at its {_WORDS[(seed + k) % len(_WORDS)]}: "
            f"{seeds[k % len(seeds)][:1].lower()}{seeds[k % len(seeds)][1:]}"
            for k in range(2 + seed % 5)
        ]
    }


def _filter(inputs: dict[str, str]) -> dict[str, Any]:
    """One decision per candidate, in order: mostly keep, about one in five dropped as off the dimension."""
    candidates = _list(inputs.get("candidates", ""))
    return {"decisions": ["off_dimension" if _h("filter", c) % 5 == 0 else "keep" for c in candidates]}


def _yes_no(inputs: dict[str, str]) -> dict[str, Any]:
    """One yes or no per question, a function of the question and the response (so scores vary by item)."""
    response = inputs.get("response", "")
    return {"answers": ["yes" if _h(q, response) % 3 else "no" for q in _list(inputs.get("questions", ""))]}


CHECKEVAL = {"diversify": _diversify, "elaborate": _elaborate, "filter": _filter, "yes_no": _yes_no}


def _answers(checklist: str, seed: int) -> list[str]:
    questions = re.findall(r'"([^"]+)"', checklist) or ["the checklist"]
    return [
        f"{questions[(seed + k) % len(questions)][:80]} -> partly; the text addresses it but leaves "
        f"the {_WORDS[(seed + k) % len(_WORDS)]} underdeveloped."
        for k in range(3)
    ]


def _feedback(text: str, seed: int) -> str:
    return (
        f"The response handles the {_WORDS[seed % len(_WORDS)]} adequately, as in '{_quote(text, seed)}', "
        f"but its {_WORDS[(seed >> 3) % len(_WORDS)]} is uneven and some requirements are only implied."
    )


def render(values: dict[str, Any], json_mode: bool) -> str:
    """The answer in the format the adapter asked for: a JSON object, or ChatAdapter field markers."""
    if json_mode:
        return json.dumps(values, ensure_ascii=False)
    parts = [
        f"[[ ## {k} ## ]]\n{json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v}"
        for k, v in values.items()
    ]
    return "\n\n".join(parts) + "\n\n[[ ## completed ## ]]"
