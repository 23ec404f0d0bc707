"""Notices said once per backbone: the judges warn when an LM cannot do something a task asks of it
(give token probabilities, score a given text), and a run of thousands of items must say it once."""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

import dspy

from cejudge_dspy.judges._likelihood import Scorer, scorer_of

logger = logging.getLogger("cejudge_dspy")


class FirstTime:
    """Which LMs a notice was already given for. Weak references: a notice never keeps an LM (and the
    model it loaded) alive, and a new LM object gets its own notice."""

    def __init__(self) -> None:
        self._seen: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()  # items of one run judge in several threads

    def __call__(self, lm: Any) -> bool:
        """True the first time `lm` is seen, False afterwards."""
        with self._lock:
            if lm in self._seen:
                return False
            self._seen.add(lm)
            return True


def current_scorer(seen: FirstTime, consequence: str) -> Scorer | None:
    """The current backbone's way to score a given text (_likelihood.scorer_of), or None; when it has
    none, say once per backbone (per `seen`: one per feature) what that means: `consequence`, a clause."""
    score = scorer_of(lm := dspy.settings.lm)
    if score is None and lm is not None and seen(lm):
        logger.warning(
            "backbone %s cannot score a given text, so %s",
            getattr(lm, "model", type(lm).__name__),
            consequence,
        )
    return score
