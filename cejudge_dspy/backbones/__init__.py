"""Backbones: one `--lm` string becomes a `dspy.LM` (an HTTP server, or a local GGUF file, the embedded one
included, served by llama.cpp's own server; or the latency-simulating fake), made current with `use_backbone`.
Programs never hold an LM."""

import lazy_loader

# The face is lazy (lazy_loader.attach_stub): a name is imported on first use, so that the CLI builds its
# backbone flags from `BackboneOptions` without importing DSPy, and dir() lists every name. The one list of
# names is __init__.pyi, which type checkers and the API docs read too.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
