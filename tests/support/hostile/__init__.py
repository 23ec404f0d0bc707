"""The hostile-input corpus of issues #41 and #49, beside bad_inputs.py: files, options and run directories an
outside probe used to get tracebacks, hangs or silent wrong numbers from. Each area keeps its cases in its
own module (`CASES() -> list[Case]`, the `Case` of bad_inputs.py); every case must end as one clear
`error:` line that writes no run directory (`run_case` says "one line"). The broken-server cases of issue
#49 (serving.py, `SERVER_CASES`) each run against a fake server and check their own outcome. Cases whose
right outcome is a correct result rather than a refusal are tests in the package's own test files.
"""

from __future__ import annotations

from tests.support.bad_inputs import Case
from tests.support.hostile import data, files, options, readers, security, serving, text


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    return [
        *data.CASES(),
        *options.CASES(),
        *readers.CASES(),
        *security.CASES(),
        *serving.CASES(),
        *files.CASES(),
        *text.CASES(),
    ]
