"""DSPy's chat and JSON adapters with the prompt parts that depend only on the signature formatted once.

`ChatAdapter.format` rebuilds the system message on every call: the field list, and the field structure, for
which it builds a pydantic `TypeAdapter` per field and one more per placeholder string, and a JSON schema per
typed output. It is a pure function of the signature and about a quarter of the CPU of a call on the simulated
backbone (docs/measurements/speed-and-cost.md). The user message formats each input value through another
fresh `TypeAdapter`, which for a plain string returns the string and for a list of strings its JSON. A judging
run (`_judging_run.py`) therefore uses `memo_adapter(current)`: the same adapter (class and settings), whose
system message and output reminder are kept per signature and whose plain string and string-list inputs skip
the `TypeAdapter`. Every message is the one DSPy would build, byte for byte
(tests/judges/_machinery/test_memo_adapters.py); other value types and adapter classes go through DSPy's
code unchanged.

A memo adapter also counts the LM calls of the stage call in progress (`usage.count_lm_call`, once per
formatted request, its JSON fallback included), so `usage.record_call` needs no DSPy callback on the LM.

A signature is treated as DSPy treats it, as a value: `with_instructions`, `with_updated_fields` and
`load_state` make new classes. A memo entry also keeps the signature's instructions and field settings and
is rebuilt if they change in place.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import dspy
from dspy.adapters.utils import format_field_value
from pydantic.fields import FieldInfo

from cejudge_dspy.usage import count_lm_call


def _fingerprint(signature: type[dspy.Signature], *, keep: bool = False) -> tuple[Any, ...]:
    """What the memoised texts depend on: the instructions and each field's name, type and settings;
    compared, never hashed. `keep`: copy the settings, so a later change in place compares unequal."""
    fields = signature.model_fields
    return (
        signature.__doc__,
        [
            (n, f.annotation, dict(f.json_schema_extra or {}) if keep else f.json_schema_extra or {})
            for n, f in fields.items()
        ],
    )


def _input_text(info: FieldInfo, value: Any) -> str:
    """`format_field_value(info, value)` without a `TypeAdapter` for the two kinds of value a judge passes."""
    if type(value) is str:
        return value  # DSPy: str(TypeAdapter(str).dump_python(value, mode="json")), the string itself
    if type(value) is list and info.annotation is not str and all(type(v) is str for v in value):
        return json.dumps(value, ensure_ascii=False)  # DSPy: the same dump of the same JSON list
    return str(format_field_value(field_info=info, value=value))


class _Memo:
    """Mixin over ChatAdapter / JSONAdapter; see the module docstring."""

    _memo: dict[tuple[str, type], tuple[tuple[Any, ...], str]]
    counts_lm_calls = True  # `usage.record_call` then counts through `format`, without a DSPy callback

    def format(
        self, signature: type[dspy.Signature], demos: list[dict[str, Any]], inputs: dict[str, Any]
    ) -> Any:
        messages = super().format(signature, demos, inputs)  # type: ignore[misc]
        count_lm_call()  # an adapter formats once for each request it sends
        return messages

    def _remember(self, part: str, signature: type[dspy.Signature], build: Any) -> str:
        memo = self.__dict__.setdefault("_memo", {})
        hit = memo.get((part, signature))
        if hit is not None and hit[0] == _fingerprint(signature):
            return hit[1]
        text = build(signature)
        memo[part, signature] = (_fingerprint(signature, keep=True), text)
        return text

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        return self._remember("system", signature, super().format_system_message)  # type: ignore[misc]

    def user_message_output_requirements(self, signature: type[dspy.Signature]) -> str:
        return self._remember("reminder", signature, super().user_message_output_requirements)  # type: ignore[misc]

    def format_user_message_content(
        self,
        signature: type[dspy.Signature],
        inputs: dict[str, Any],
        prefix: str = "",
        suffix: str = "",
        main_request: bool = False,
    ) -> str:
        # ChatAdapter.format_user_message_content (JSONAdapter inherits it), with _input_text.
        messages = [prefix]
        for k, info in signature.input_fields.items():
            if k in inputs:
                messages.append(f"[[ ## {k} ## ]]\n{_input_text(info, inputs.get(k))}")
        if main_request:
            requirements = self.user_message_output_requirements(signature)
            if requirements is not None:
                messages.append(requirements)
        messages.append(suffix)
        return "\n\n".join(messages).strip()


class MemoChatAdapter(_Memo, dspy.ChatAdapter):
    def _make_json_adapter_fallback(self) -> dspy.JSONAdapter:
        # The fallback after a parse error formats (and is counted) like the adapter it stands in for.
        return memo_adapter(super()._make_json_adapter_fallback())  # type: ignore[return-value]


class MemoJSONAdapter(_Memo, dspy.JSONAdapter):
    pass


_MEMO: dict[type, type] = {dspy.ChatAdapter: MemoChatAdapter, dspy.JSONAdapter: MemoJSONAdapter}
MEMO_ADAPTERS = (MemoChatAdapter, MemoJSONAdapter)


def memo_adapter(adapter: dspy.Adapter | None) -> dspy.Adapter:
    """`adapter` (None: DSPy's default ChatAdapter) with its signature-only prompt parts memoised, keeping
    its settings; any other adapter class, whose formatting this module does not know, as it is."""
    current = adapter if adapter is not None else dspy.ChatAdapter()
    memo_class = _MEMO.get(type(current))
    if memo_class is None:
        return current
    fast = copy.copy(current)
    fast.__class__ = memo_class
    fast.__dict__.pop("_memo", None)
    return fast
