"""The names of the package's lazy face (__init__.py), for lazy_loader and type checkers."""

from ._accounting import collecting as collecting
from ._accounting import note_reused as note_reused
from ._accounting import record_call as record_call
from ._calls import count_lm_call as count_lm_call
from ._progress import StageProgress as StageProgress
from ._progress import about as about
from ._progress import clock as clock
from ._progress import current_subject as current_subject
from ._progress import expect_more_calls as expect_more_calls
from ._progress import on_progress as on_progress
from ._usage import Usage as Usage
