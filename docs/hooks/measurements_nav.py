"""MkDocs hook: the Measurements section of the nav lists every page in docs/measurements/.

mkdocs.yml names only `measurements/index.md` under "Measurements"; `on_config` appends the folder's other
pages (sorted by file name), so a measurement page added later is in the nav without an edit to mkdocs.yml
and `mkdocs build --strict` does not fail on a page left out of the nav.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SECTION, FOLDER, INDEX = "Measurements", "measurements", "measurements/index.md"


def measurement_pages(docs_dir: Path) -> list[str]:
    """The measurement pages other than the index, as nav entries (paths relative to docs/)."""
    return sorted(
        p.relative_to(docs_dir).as_posix()
        for p in (docs_dir / FOLDER).glob("*.md")
        if p.relative_to(docs_dir).as_posix() != INDEX
    )


def on_config(config: Any) -> Any:
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and SECTION in entry:
            entry[SECTION] = [INDEX, *measurement_pages(Path(config["docs_dir"]))]
            return config
    raise ValueError(f"mkdocs.yml's nav has no '{SECTION}' section for the measurement pages")
