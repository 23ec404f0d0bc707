"""`cejudge`: the command line. The only layer that builds backbones from flags and prints with rich."""

from cejudge_dspy.cli._app import main

__all__ = [
    "main",
]
