"""A program's prompts as one hash, so a run never mixes records judged with two versions of them.

A run's identity names its program ("base" or a tuned file with its hash), but "base" is whatever the
installed package builds: an upgrade that edits a stage's instruction, a field description or an allowed
value would otherwise resume an old run with new prompts and mix the two in one summary. The hash covers
what the adapter turns into the prompt, per predictor (by its stable attribute path): the signature's
instructions, every field's name, role, description, prefix and type, and the demos; and the texts a
program passes in as inputs on every call: its task declaration (task, criteria, rubric) and, for
CheckEval, its checklist. It leaves out what the run identity records elsewhere (the backbone, and
through it the adapter) and what never reaches a prompt (call history).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import dspy


def _field(name: str, role: str, info: Any) -> dict[str, Any]:
    extra = info.json_schema_extra or {}
    return {
        "name": name,
        "role": role,
        "desc": extra.get("desc"),
        "prefix": extra.get("prefix"),
        # repr of the annotation: Literal["A", "B"] and a pydantic model's path both show in it.
        "type": repr(info.annotation),
    }


def _demo(demo: Any) -> Any:
    data = demo.toDict() if hasattr(demo, "toDict") else demo
    return json.loads(json.dumps(data, sort_keys=True, default=str))


# Program attributes whose content is passed into prompts on every call (not through a signature).
PROMPT_CONSTANTS = ("spec", "checklist")
# Task declaration entries that never reach a prompt: where the file lies differs between clones (and Ray
# nodes), and the dataset only says where items come from (the run identity fingerprints the data). The
# likelihood check decides without a prompt and the run identity records it as `likelihood_check`; it
# is left out so that adding it kept every earlier run's hash (check_response_language, older, stays in).
_NOT_IN_PROMPTS = ("path", "dataset", "check_translation_likelihood")


def _constant(name: str, value: Any) -> Any:
    if name == "checklist":  # only the kept questions are asked; review notes never reach a prompt
        return [[q.dimension, q.subdimension, q.text] for q in value.questions if q.kept]
    data = dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in _NOT_IN_PROMPTS}
    return json.loads(json.dumps(data, sort_keys=True, default=str))


def prompt_description(program: dspy.Module) -> list[dict[str, Any]]:
    """Per predictor, in attribute-path order, what its prompts are made of, then the program's constant
    inputs (see the module docstring)."""
    out: list[dict[str, Any]] = [
        {"constant": name, "value": _constant(name, getattr(program, name))}
        for name in PROMPT_CONSTANTS
        if getattr(program, name, None) is not None
    ]
    for path, predictor in sorted(program.named_predictors(), key=lambda item: item[0]):
        signature = predictor.signature
        fields = [_field(n, "input", f) for n, f in signature.input_fields.items()]
        fields += [_field(n, "output", f) for n, f in signature.output_fields.items()]
        out.append(
            {
                "predictor": path,
                "instructions": signature.instructions,
                "fields": fields,
                "demos": [_demo(d) for d in getattr(predictor, "demos", None) or []],
            }
        )
    return out


def prompt_fingerprint(program: dspy.Module) -> str:
    """16 hex digits of the sha256 of `prompt_description(program)`: equal exactly when the prompts are."""
    text = json.dumps(prompt_description(program), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
