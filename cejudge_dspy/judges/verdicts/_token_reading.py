"""Reading the judge's token probabilities at its answer: pure text and arithmetic, no LM and no DSPy.
Split from _probabilities.py, which keeps the decisions built on a reading; `judges.verdicts` exports both.

The judge already computed a distribution at the token that carries its answer; the argmax throws it
away. This module finds that token in a judgment's output and reads the distribution there over the
allowed values only (`A`/`B`, a scale's levels, `yes`/`no`):

1. `tokens_from_logprobs` turns the provider's per-token logprobs (OpenAI shape, as DSPy hands them
   over: `{"content": [{"token", "logprob", "top_logprobs": [...]}]}`) into `TokenChoice`s.
2. `value_starts` finds where a field's value begins in the text the tokens spell: after
   `[[ ## field ## ]]` (ChatAdapter) or after `"field":` (JSONAdapter), skipping spaces, `=`/`:` and an
   opening quote; for a list field, where each element begins.
3. `read_value` walks the tokens from that character: every alternative at the value's first token
   that spells (the start of) an allowed value gets its probability; an alternative that could still
   become more than one value (`1` on a 1-10 scale) is followed only along the generated path, whose
   next token says whether the value ended (`"`, `,`, a newline) or went on (`0`). Matching ignores
   case, leading spaces and quotes. The result is normalised over the allowed values; `mass` is how
   much probability they held before that.

Where the value cannot be found the reading says why; callers then keep the argmax answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

TOP_LOGPROBS = 10  # alternatives asked for per generated token

_LEADING = " \t\r\n\"'`*"


@dataclass(frozen=True)
class TokenChoice:
    """One generated token, its log probability and the top alternatives at its position."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()

    def alternatives(self) -> dict[str, float]:
        """Alternative text -> probability, the generated token always included. Two token ids that
        spell the same text (llama.cpp reports text) are summed."""
        out: dict[str, float] = {}
        for text, lp in self.top:
            out[text] = out.get(text, 0.0) + math.exp(lp)
        if self.token not in out:
            out[self.token] = math.exp(self.logprob)
        return out


@dataclass(frozen=True)
class Reading:
    """The distribution over allowed values at one answer, or why there is none."""

    distribution: dict[str, float] | None
    mass: float = 0.0  # probability the allowed values held before normalising
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.distribution is not None


def tokens_from_logprobs(logprobs: Any) -> list[TokenChoice]:
    """DSPy's `prediction.logprobs` (OpenAI chat shape, dicts or attribute dicts) -> TokenChoices; ValueError
    with the reason when a value is no log probability (NaN, infinite, above 0: `backbones.logprobs_problem`),
    so that no reading is ever computed from one."""
    from cejudge_dspy.backbones import logprobs_problem

    if why := logprobs_problem(logprobs):
        raise ValueError(why)
    content = _get(logprobs, "content")
    out: list[TokenChoice] = []
    for entry in content or ():
        token, lp = _get(entry, "token"), _get(entry, "logprob")
        if not isinstance(token, str) or lp is None:
            continue
        top = tuple(
            (t, float(tl))
            for alt in (_get(entry, "top_logprobs") or ())
            if isinstance(t := _get(alt, "token"), str) and (tl := _get(alt, "logprob")) is not None
        )
        out.append(TokenChoice(token, float(lp), top))
    return out


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def value_starts(text: str, name: str, *, is_list: bool = False) -> list[int] | str:
    """Character offsets where the value of output field `name` begins (one per element for a list),
    or the reason it cannot be found. The last marker wins: an earlier mention of the field name
    inside another field's text is not the field."""
    chat = list(re.finditer(rf"\[\[\s*##\s*{re.escape(name)}\s*##\s*\]\]", text))
    json_key = list(re.finditer(rf'(?<!\\)"{re.escape(name)}"\s*:', text))
    marks = chat or json_key
    if not marks:
        return f"no '{name}' field in the output"
    pos = marks[-1].end()
    if chat:  # `[[ ## verdict ## ]]\nB`, `[[ ## verdict ## ]] = B`
        pos = _skip(text, pos, " \t\r\n")
        if pos < len(text) and text[pos] in "=:":
            pos += 1
    pos = _skip(text, pos, " \t\r\n")
    if is_list:
        return _list_element_starts(text, pos, name)
    pos = _skip(text, pos, _LEADING)
    if pos >= len(text):
        return f"the '{name}' field has no value"
    return [pos]


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _list_element_starts(text: str, pos: int, name: str) -> list[int] | str:
    """The first character inside each quoted element of the JSON list starting at `pos`."""
    if pos >= len(text) or text[pos] != "[":
        return f"the '{name}' field is not a list"
    starts, depth, in_string, escaped = [], 0, False, False
    for i in range(pos, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
            if depth == 1:
                starts.append(_skip(text, i + 1, " \t"))
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return starts
    return starts or f"the '{name}' list is not closed"


def read_value(tokens: Sequence[TokenChoice], start: int, allowed: Sequence[str]) -> Reading:
    """The distribution over `allowed` at the value that begins at character `start` of the text
    the tokens spell (see the module docstring)."""
    offset = 0
    for i, tok in enumerate(tokens):
        if offset <= start < offset + len(tok.token):
            lead = tok.token[: start - offset]
            masses = _walk(tokens, i, "", lead, list(allowed))
            total = sum(masses.values())
            if total <= 0.0:
                got = tokens[i].token.strip()
                return Reading(None, 0.0, f"no allowed value ({'/'.join(allowed)}) at the token {got!r}")
            dist = {v: masses.get(v, 0.0) / total for v in allowed}
            return Reading(dist, total)
        offset += len(tok.token)
    return Reading(None, 0.0, "the value lies beyond the tokens with probabilities")


def _walk(
    tokens: Sequence[TokenChoice], i: int, consumed: str, lead: str, allowed: list[str]
) -> dict[str, float]:
    """Unnormalised probability per allowed value, given the generated text up to token `i`."""
    out: dict[str, float] = {}
    chosen = tokens[i].token
    for text, p in tokens[i].alternatives().items():
        if not consumed:
            core = text[len(lead) :] if lead and text.startswith(lead) else text.lstrip(_LEADING)
        else:
            core = text
        kind, value = _classify(consumed + core, allowed)
        if kind == "value":
            out[value] = out.get(value, 0.0) + p
        elif kind == "open" and text == chosen and i + 1 < len(tokens):
            # Could still become several values: only the generated path says how it went on.
            for v, q in _walk(tokens, i + 1, consumed + core, "", allowed).items():
                out[v] = out.get(v, 0.0) + p * q
    return out


def _classify(candidate: str, allowed: list[str]) -> tuple[Literal["value", "open", "none"], str]:
    """`value`: the candidate spells one allowed value (ended by a non-alphanumeric character, or the
    only value it can still become); `open`: it can still become more than one; `none`: no value."""
    if not candidate:
        return "none", ""
    cand = candidate.casefold()
    for v in sorted(allowed, key=len, reverse=True):
        vf = v.casefold()
        if cand.startswith(vf) and len(cand) > len(vf) and not cand[len(vf)].isalnum():
            return "value", v
    extensions = [v for v in allowed if v.casefold().startswith(cand)]
    if len(extensions) == 1:
        return "value", extensions[0]
    if len(extensions) > 1:
        return "open", ""
    return "none", ""


def read_field(tokens: Sequence[TokenChoice], text: str | None, name: str, allowed: Sequence[str]) -> Reading:
    """The distribution over `allowed` at output field `name` (a scalar value)."""
    text = "".join(t.token for t in tokens) if text is None else text
    starts = value_starts(text, name)
    if isinstance(starts, str):
        return Reading(None, 0.0, starts)
    return read_value(tokens, starts[0], allowed)


def read_list_field(tokens: Sequence[TokenChoice], name: str, allowed: Sequence[str]) -> list[Reading] | str:
    """One reading per element of list field `name`, or why the list cannot be found."""
    text = "".join(t.token for t in tokens)
    starts = value_starts(text, name, is_list=True)
    if isinstance(starts, str):
        return starts
    return [read_value(tokens, s, allowed) for s in starts]
