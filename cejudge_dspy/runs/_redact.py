"""Secrets out of stored and printed text: a server's error message may echo the API key or an Authorization
header, an `--api-base` may carry credentials (`http://user:KEY@host/v1`), and records, run.json, summaries
and error lines are text people share. Every string in a record passes through `redact` before it is
written, every recorded server address through `public_url`, and every error line the CLI prints through
`redact_text` with the command's secrets (`secrets_of`).
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Iterable, Sequence
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

# The credentials of a URL: `scheme://user:password@` (or `scheme://token@`), up to the host.
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")


ERROR_KEYS = frozenset({"error", "errors", "raw", "reason", "failures"})


def redact_text(text: str, secrets: Sequence[str] = (), *, labelled: bool = True) -> str:
    """`text` with each of `secrets` (4+ characters), and with `labelled` every labelled credential
    value (`Authorization: Bearer X`, `api_key=X`) and a URL's credentials, replaced by [redacted]."""
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    if not labelled:
        return text
    return public_url(_LABELLED.sub(lambda m: m.group(1) + REDACTED, text))


def public_url(url: str | None) -> str | None:
    """`url` without the credentials in it: `http://user:KEY@host/v1` -> `http://[redacted]@host/v1` (every
    URL in a text); what a run records and prints of an `--api-base`."""
    if not isinstance(url, str):
        return url
    return _URL_CREDENTIALS.sub(lambda m: m.group(1) + REDACTED + "@", url)


def public_urls(value: Any) -> Any:
    """A copy of a JSON-like value (a run identity, a summary) with every server address (a key ending in
    `api_base`, a panel member's included) through `public_url`: what run.json, summary.json and a view
    page keep of an `--api-base`."""
    if isinstance(value, dict):
        return {
            k: public_url(v) if isinstance(k, str) and k.endswith("api_base") else public_urls(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [public_urls(v) for v in value]
    return value


def url_secrets(url: str | None) -> list[str]:
    """The credentials in a URL as secrets to redact wherever they appear: the password, and the user
    information whole (raw, percent-decoded, and base64 as a Basic Authorization header carries it)."""
    if not isinstance(url, str) or "@" not in url:
        return []
    try:
        parts = urllib.parse.urlsplit(url.strip())
    except ValueError:
        return []
    info = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    plain = urllib.parse.unquote(info)
    # A client sends them as `Authorization: Basic base64(user:password)`, which a server may echo.
    basic = base64.b64encode(plain.encode("utf-8")).decode("ascii") if plain else ""
    found = [info, plain, basic, parts.password or "", urllib.parse.unquote(parts.password or "")]
    return list(dict.fromkeys(s for s in found if s))


def secrets_of(api_keys: Iterable[str | None] = (), api_bases: Iterable[str | None] = ()) -> list[str]:
    """The secrets of a command's backbones: their API keys, and the credentials in their server URLs."""
    found = [k for k in api_keys if isinstance(k, str) and k]
    for base in api_bases:
        found += url_secrets(base)
    return list(dict.fromkeys(found))


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
