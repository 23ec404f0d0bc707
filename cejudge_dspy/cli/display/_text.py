"""The console every command prints through, and small text helpers the panels and tables share.

Text on its way to a terminal is made safe here, once, for everything the CLI prints:

- control characters are shown, not obeyed: a clear-screen, a window title (OSC 0) or a hyperlink (OSC 8)
  in an item, a model's answer, a server's error or a task's name is printed as `\\x1b]0;...` and cannot
  act on the terminal. Only the console's own control segments (a live display moving the cursor) pass;
- rich markup is off: a server error holding `[/bold]` or an `--out` path holding `[red]` prints as it
  is (with markup on, the first raised MarkupError and the second vanished, as did `[redacted]`). Text the
  package styles is built as `Text` with styles (`styled`), never as markup around data;
- a lone surrogate (half an emoji, from a model or a server) is shown as `\\udXXX` instead of failing
  the terminal's encoder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

# C0 controls but newline and tab (layout), DEL, the C1 controls, and lone surrogates.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control character and lone surrogate written out visibly (`\\x1b`)."""
    return _UNSAFE.sub(_shown, text)


class SafeConsole(Console):
    """A rich Console whose output holds no control character it was not asked to write (see above)."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or not _UNSAFE.search(segment.text):
                yield segment
            else:
                yield Segment(terminal_safe(segment.text), segment.style)


def console(stderr: bool = False) -> Console:
    return SafeConsole(stderr=stderr, highlight=False, markup=False)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text the package styles around data: `styled(("language", "bold"), " ", item.language)`; data
    stays literal (markup is off, and this never parses it)."""
    return Text.assemble(*parts)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _bullets(items: Sequence[str]) -> Text:
    return Text("\n".join(f"• {q}" for q in items) or "(none)")
