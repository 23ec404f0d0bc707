"""Instruction tuning of a task's CE-Judge program (GEPA, zero-shot MIPROv2, SIMBA) against human labels."""

import lazy_loader

# The face is lazy (lazy_loader.attach_stub): a name is imported on first use, so that the CLI builds its
# flags without importing DSPy (`cejudge --help` answers at once; tests/cli/test_startup.py), and dir()
# lists every name. The one list of names is __init__.pyi, which type checkers and the API docs read too.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
