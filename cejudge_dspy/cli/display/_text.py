"""Small text helpers the panels and tables share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _bullets(items: Sequence[str]) -> Text:
    return Text("\n".join(f"• {q}" for q in items) or "(none)")
