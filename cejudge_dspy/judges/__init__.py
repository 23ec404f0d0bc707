"""The judging methods as DSPy programs: CE-Judge, the direct baseline, CheckEval and its G-Eval baseline,
the likelihood judge, their shared stage machinery, and saved (tuned) programs. No files are written here
except by `save_program`, nothing is printed, and no LM is chosen: the caller makes one current with
`dspy.context`."""

import lazy_loader

# The face is lazy (lazy_loader.attach_stub): a name is imported on first use, so that the CLI builds its
# flags without importing DSPy (`cejudge --help` answers at once; tests/cli/test_startup.py), and dir()
# lists every name. The one list of names is __init__.pyi, which type checkers and the API docs read too.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
