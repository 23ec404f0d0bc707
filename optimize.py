#!/usr/bin/env python
"""Tune a task's CE-Judge instructions and save them under optimized/: the same command as `cejudge optimize`
(same flags, backbone construction, errors and exit codes; see `python optimize.py --help`).

Example: python optimize.py --task chat --optimizer gepa --budget light --train 20 --dev 20 --yes
"""

from __future__ import annotations

import sys

from cejudge_dspy.cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(["optimize", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
