"""A backbone failure that DSPy or the network raised, turned into one line that says what to do."""

from __future__ import annotations

import socket

import dspy

from cejudge_dspy.errors import BackboneError, CEJudgeError


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


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
        return BackboneError(
            f"{where} did not answer in time; check that the server is up and not overloaded"
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
        return BackboneError(f"{where} cannot be reached: {' '.join(reason.split())}")
    return None
