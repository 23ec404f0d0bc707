"""Notices said once per backbone: the judges warn when an LM cannot do something a task asks of it
(give token probabilities, score a given text), and a run of thousands of items must say it once.
Which LMs were told is the notices' own memory (one `FirstTime` per notice); what a backbone can do is
`backbones.capabilities`."""

from __future__ import annotations

import threading
import weakref
from typing import Any


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
