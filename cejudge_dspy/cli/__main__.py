"""`python -m cejudge_dspy.cli`: the same as the `cejudge` command."""

import sys

from cejudge_dspy.cli._app import main

sys.exit(main())
