"""The optimizers `cejudge optimize --optimizer` chooses from: pure data, so that its flags are built without
importing DSPy (tests/cli/test_startup.py)."""

from __future__ import annotations

OPTIMIZERS = ("gepa", "mipro", "simba")
