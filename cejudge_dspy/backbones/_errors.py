"""A backbone failure that DSPy or the network raised, turned into one line that says what to do."""

from __future__ import annotations

import re
import socket

import dspy

from cejudge_dspy.errors import BackboneError, CEJudgeError

# What a client library puts into its exception's text beside the reason: a whole traceback (litellm's
# "Traceback (most recent call last): ..."), or its frames and source lines.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):.*", re.S)
_FRAME = re.compile(r'^\s*(File ".*", line \d+|\^+\s*$|~+\^*~*\s*$)')
MAX_REASON = 500


def error_line(error: BaseException | str, limit: int | None = MAX_REASON) -> str:
    """An error's reason as one line: its text with any traceback a client library wrapped into it dropped,
    whitespace collapsed, at most `limit` characters; the type's name when nothing is left. Every error
    line printed and every error record written says its reason this way."""
    text = str(error)
    text = _TRACEBACK.sub("", text)
    lines = [line for line in text.splitlines() if not _FRAME.match(line)]
    line = " ".join(" ".join(lines).split())
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    return line or (type(error).__name__ if isinstance(error, BaseException) else "")


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def backbone_failure(exc: BaseException, spec: str, *, api_base: str | None = None) -> BackboneError | None:
    """The one-line BackboneError a command stops with for a backbone failure: what `explain_backbone_error`
    recognises, else any other failure of the LM layer (a refused request, a body that is no answer) with
    its reason (`error_line`); None for anything else (a bug keeps its traceback). A run's items record
    such failures instead (evaluate's `judge_one`); a single judgment or a check stops with the line."""
    explained = explain_backbone_error(exc, spec, api_base=api_base)
    if explained is not None:
        return explained
    from dspy.utils import exceptions as dx

    chain = _chain(exc)
    if any(isinstance(e, CEJudgeError) for e in chain):
        return None
    if not any(isinstance(e, (dx.LMError, dspy.lm15.LM15Error)) for e in chain):
        return None
    where = f"backbone '{spec}'" + (f" at {api_base}" if api_base else "")
    return BackboneError(f"{where} failed: {error_line(exc, limit=300)}")


def explain_backbone_error(
    exc: BaseException, spec: str, *, api_base: str | None = None
) -> BackboneError | None:
    """A one-line BackboneError for a backbone failure DSPy raised, or None if it is something else.

    Recognises: a BackboneError wrapped by DSPy (model load failure), connection refused, unknown host,
    timeouts, rejected or missing API keys, and a model the server does not serve.
    """
    from dspy.utils import exceptions as dx

    chain = _chain(exc)
    for item in chain:
        if isinstance(item, BackboneError):
            return item
        if isinstance(item, CEJudgeError):
            return None  # a translator, data or task error explains itself; the backbone is not at fault
    if not any(isinstance(e, (dx.LMError, dspy.lm15.LM15Error, OSError)) for e in chain):
        return None  # text matching below is only trusted on errors from the LM layer or the network
    where = f"backbone '{spec}'" + (f" at {api_base}" if api_base else "")
    text = " ".join(" ".join(str(e).split()) for e in chain).lower()
    status = next((s for e in chain if isinstance(s := getattr(e, "status", None), int)), None)

    def has(*types: type[BaseException]) -> bool:
        return any(isinstance(e, types) for e in chain)

    if has(ConnectionRefusedError) or "connection refused" in text:
        return BackboneError(
            f"{where} cannot be reached: connection refused; start the server or pass --api-base"
        )
    if has(socket.gaierror) or "name or service not known" in text or "nodename nor servname" in text:
        return BackboneError(f"{where} cannot be reached: unknown host; check the host name in --api-base")
    if has(dx.LMTimeoutError, dspy.lm15.TimeoutError, TimeoutError) or "timed out" in text:
        limit = next((f" within {t:g} s" for e in chain if (t := getattr(e, "seconds", None))), "")
        return BackboneError(
            f"{where} did not answer{limit or ' in time'}; check that the server is up and not overloaded "
            "(--timeout sets how long a call may take)"
        )
    if has(dx.LMNotConfiguredError):
        env_keys = next((list(k) for e in chain if (k := getattr(e, "env_keys", None))), [])
        variable = " or ".join(env_keys) or "the provider's key variable"
        return BackboneError(f"{where} has no API key; pass --api-key or set {variable}")
    if has(dx.LMAuthError, dspy.lm15.AuthError) or status in (401, 403):
        return BackboneError(f"{where} rejected the API key (HTTP {status or 401}); pass a valid --api-key")
    model = spec.split("/", 1)[-1]
    if has(dx.LMUnsupportedModelError, dspy.lm15.UnsupportedModelError) or status == 404:
        return BackboneError(
            f"{where} does not serve model '{model}' (or the URL is wrong; include /v1); "
            "check the model name against the server's /v1/models"
        )
    if has(dx.LMTransportError, dspy.lm15.TransportError, ConnectionError):
        reason = next(
            str(e) for e in chain if isinstance(e, (dx.LMTransportError, dspy.lm15.TransportError, OSError))
        )
        return BackboneError(f"{where} cannot be reached: {error_line(reason)}")
    return None
