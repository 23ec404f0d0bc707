"""What a backbone can do for the judges, as one typed object: `capabilities(lm) -> Capabilities`.

Part of it is declared when `make_lm` builds the LM (`declare`): whether missing token probabilities are
an error (`--require-logprobs`) and, for a server at an `api_base`, the `ServerScorer` that may score a
given text through it. Part is learnt while judging (`learn_logprobs`): whether the backbone answered a
judgment call with token probabilities, or refused the option. Both live here, per LM, in one weak mapping
(an LM that is gone takes its entry with it, and a new LM object starts from nothing); nothing is set on the
`dspy.LM` itself. An LM that `make_lm` did not build (a caller's own `dspy.LM`, a test's fake) has the
defaults.

`Capabilities` is a snapshot: the judges ask again after a call when they need what it taught.
"""

from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from cejudge_dspy.backbones._http_scoring import TIMEOUT_S, ServerScorer

# `(messages, answer) -> log probabilities` of the answer's tokens and the end of its turn.
Scorer = Callable[[list[dict[str, str]], str], list[float]]


@dataclass(frozen=True)
class Capabilities:
    """What one backbone can do for the judges, as known when asked.

    * `logprobs`: it answered a judgment call with token log probabilities and their alternatives (False
      until it has, and for one that refused the option or gave none);
    * `refuses_logprobs`: it refused the logprobs option itself, so the judges stop asking for them;
    * `require_logprobs`: `--require-logprobs` (`make_lm(require_logprobs=True)`): a backbone without them is
      an error, not an argmax fallback;
    * `scorer`: how it would score a given text as its own answer: a custom DSPy engine's `answer_logprobs`,
      or its server's `ServerScorer` (a server at an `api_base`), probed or not (`text_scorer` gives it only
      once the probe passed); None where it has no way;
    * `scoring`: whether it scores a given text: True, False, or None for a server not yet probed;
    * `schema`: DSPy sends it a JSON schema for structured output (`lm.supports_response_schema`).
    """

    logprobs: bool = False
    refuses_logprobs: bool = False
    require_logprobs: bool = False
    scorer: Scorer | None = None
    scoring: bool | None = False
    schema: bool = False


@dataclass
class _Known:
    """What is known of one LM: declared by `make_lm`, then learnt while judging."""

    require_logprobs: bool = False
    server_scorer: ServerScorer | None = None
    gave_logprobs: bool = False
    refused_logprobs: bool = False


_known: weakref.WeakKeyDictionary[Any, _Known] = weakref.WeakKeyDictionary()
_lock = threading.Lock()  # items of one run judge in several threads


def _entry(lm: Any) -> _Known:
    """`lm`'s entry, made on first use; call with `_lock` held."""
    known = _known.get(lm)
    if known is None:
        known = _known[lm] = _Known()
    return known


def declare(lm: Any, *, require_logprobs: bool = False) -> Any:
    """What `make_lm` knows of the LM it built, the one place capabilities are made: `require_logprobs`, and
    for an HTTP backbone at an `api_base` (a local model's server included) its `ServerScorer`, asked on
    first use whether it can score a given text (`ServerScorer.probe`); a hosted API without an `api_base`
    is never probed. Returns `lm`."""
    kwargs = getattr(lm, "kwargs", None) or {}  # an HTTP backbone's client settings (`_builders.build_http`)
    scorer = None
    if api_base := kwargs.get("api_base"):
        key = str(kwargs.get("api_key") or "")
        scorer = ServerScorer(api_base, lm.model.split("/", 1)[1], key, kwargs.get("timeout", TIMEOUT_S))
    if not require_logprobs and scorer is None:
        return lm  # the defaults: nothing to keep
    with _lock:
        known = _entry(lm)
        known.require_logprobs = require_logprobs
        known.server_scorer = scorer
    return lm


def carry(lm: Any, copied: Any) -> None:
    """Give `copied` (`lm.copy(...)`) what `make_lm` declared of `lm`; what judging taught is not carried."""
    with _lock:
        known = _known.get(lm)
        if known is None:
            return
        into = _entry(copied)
        into.require_logprobs = known.require_logprobs
        into.server_scorer = copy.deepcopy(known.server_scorer)


def learn_logprobs(lm: Any, outcome: Literal["gave", "refused"]) -> None:
    """What a judgment call taught of `lm`: it answered with token probabilities (`gave`), or refused the
    logprobs option (`refused`)."""
    if lm is None:
        return
    with _lock:
        known = _entry(lm)
        if outcome == "gave":
            known.gave_logprobs = True
        else:
            known.refused_logprobs = True


def capabilities(lm: Any) -> Capabilities:
    """What `lm` can do for the judges, as known now (see `Capabilities`); never asks the backbone anything.
    None (no backbone) can do nothing."""
    if lm is None:
        return Capabilities()
    with _lock:
        try:
            known = _known.get(lm) or _Known()
        except TypeError:  # an object no weak reference can reach (a test's stand-in) has the defaults
            known = _Known()
        gave, refused = known.gave_logprobs, known.refused_logprobs
        required, server = known.require_logprobs, known.server_scorer
    engine = getattr(getattr(lm, "engine", None), "answer_logprobs", None)
    scorer: Scorer | None = engine if callable(engine) else server
    return Capabilities(
        logprobs=gave,
        refuses_logprobs=refused,
        require_logprobs=required,
        scorer=scorer,
        scoring=True if callable(engine) else (server.known() if server is not None else False),
        schema=bool(getattr(lm, "supports_response_schema", False)),
    )


def text_scorer(lm: Any) -> Scorer | None:
    """How `lm` scores a given answer (`(messages, answer) -> log probabilities`), or None where it cannot:
    its server's `ServerScorer` once the probe passed (asked here, on first need; local models are served the
    same way), or a custom DSPy engine's own `answer_logprobs` (the test fakes have one)."""
    scorer = capabilities(lm).scorer
    if isinstance(scorer, ServerScorer):
        return scorer if scorer.probe() is None else None
    return scorer
