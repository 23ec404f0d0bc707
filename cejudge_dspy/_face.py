"""The one way a package face is lazy: `lazy_face(__name__, {"_module": ["name", ...]})`.

A face lists its public names by the private module that holds each; a name is imported on its first use
(so `import cejudge_dspy` and `cejudge --help` do not import DSPy), and `dir()`, tab completion and
`help()` list every name (lazy_loader's `__dir__`). Type checkers read the same names from the face's
`if TYPE_CHECKING:` imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import lazy_loader


def lazy_face(
    package: str, names: Mapping[str, Sequence[str]], submodules: Sequence[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """`__getattr__`, `__dir__` and `__all__` for the face of `package`: `names` maps a module (relative
    to the package, dotted for a subpackage's) to the names it gives the face; `submodules` are
    subpackages the face names as attributes."""
    return lazy_loader.attach(
        package, submodules=list(submodules), submod_attrs={k: list(v) for k, v in names.items()}
    )
