#!/usr/bin/env python
"""Tune a task's CE-Judge instructions and save them under optimized/ (see `python optimize.py --help`).

Example: python optimize.py --task chat --optimizer gepa --budget light --train 20 --dev 20 --yes
"""

from __future__ import annotations

import argparse
import os
import sys

if not {"-v", "--verbose"} & set(sys.argv[1:]):
    # DSPy and GEPA draw their own tqdm bars under ours; tqdm reads this once, at import.
    os.environ.setdefault("TQDM_DISABLE", "1")

from cejudge_dspy.tuning_cli import add_optimize_args, run_optimize  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="optimize.py", description=__doc__.splitlines()[0])
    add_optimize_args(parser)
    return run_optimize(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
