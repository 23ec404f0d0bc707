"""Debian's headless Chromium, driven by Playwright without downloading a browser: the one launch that the
viewer's and the docs site's browser tests share."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM = os.environ.get("CEJUDGE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
TIMEOUT_MS = 20_000
MISSING = f"no chromium at {CHROMIUM}: apt-get install -y chromium chromium-driver (or set CEJUDGE_CHROMIUM)"


@contextmanager
def chromium(sync_api: Any) -> Iterator[Any]:
    """A headless Chromium browser from `playwright.sync_api`, closed on exit."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu"],
            timeout=TIMEOUT_MS,
        )
        try:
            yield browser
        finally:
            browser.close()
