"""LM accounting for one judgment: calls issued, cache hits, reused stage results and tokens, and the
`StageProgress` events a caller receives as each stage call starts and finishes.

A lazy face (lazy_loader, its names in __init__.pyi): `Usage`, which every record carries, is read without
importing DSPy, which the accounting itself needs."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
