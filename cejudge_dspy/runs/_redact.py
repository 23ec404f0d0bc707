"""Secrets out of stored text: a server's error message may echo the API key or an Authorization header,
and records are files people share. Every string in a record passes through `redact` before it is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

REDACTED = "[redacted]"
# `Authorization: Bearer X`, `"authorization": "X"`, `api_key=X`, `x-api-key: X` (quoted or not).
_LABELLED = re.compile(
    r"""(?ix)
    ( (?:authorization|proxy-authorization|x-api-key|api[_-]?key)
      ["']? \s* [:=] \s* ["']?
      (?:(?:bearer|basic|token)\s+)? )
    [^\s"',;}]+
    """
)


ERROR_KEYS = frozenset({"error", "errors", "raw", "reason", "failures"})


def redact_text(text: str, secrets: Sequence[str] = (), *, labelled: bool = True) -> str:
    """`text` with each of `secrets` (4+ characters), and with `labelled` every labelled credential
    value (`Authorization: Bearer X`, `api_key=X`), replaced by [redacted]."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return _LABELLED.sub(lambda m: m.group(1) + REDACTED, text) if labelled else text


def redact(value: Any, secrets: Sequence[str] = (), *, labelled: bool = False) -> Any:
    """A copy of a record-like value: the secrets removed from every string, and labelled credentials
    removed from error texts (values under ERROR_KEYS); the judged texts themselves are kept as they are."""
    if isinstance(value, str):
        return redact_text(value, secrets, labelled=labelled)
    if isinstance(value, dict):
        return {k: redact(v, secrets, labelled=labelled or k in ERROR_KEYS) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets, labelled=labelled) for v in value]
    return value
