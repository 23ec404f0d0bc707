"""The names of the cejudge_dspy face, one list: lazy_loader.attach_stub imports each on first use
(__init__.py), and type checkers and the API docs read them here."""

from . import evaluate as evaluate
from .backbones import (
    BackboneOptions as BackboneOptions,
)
from .backbones import (
    make_lm as make_lm,
)
from .backbones import (
    use_backbone as use_backbone,
)
from .bridges import (
    JudgeMetric as JudgeMetric,
)
from .bridges import (
    inspect_scorer as inspect_scorer,
)
from .consistency import (
    ConsistencyOptions as ConsistencyOptions,
)
from .data import (
    Item as Item,
)
from .data import (
    load_items as load_items,
)
from .errors import (
    CEJudgeError as CEJudgeError,
)
from .evaluate import (
    EvaluateOptions as EvaluateOptions,
)
from .evaluate import (
    EvaluateProgress as EvaluateProgress,
)
from .evaluate import (
    Evaluation as Evaluation,
)
from .evaluate import (
    merge_members as merge_members,
)
from .evaluate import (
    merge_runs as merge_runs,
)
from .judges import (
    JudgeOptions as JudgeOptions,
)
from .judges import (
    build_program as build_program,
)
from .judges import (
    program_for_task as program_for_task,
)
from .judges.cejudge import (
    PairwiseJudge as PairwiseJudge,
)
from .judges.cejudge import (
    PointwiseJudge as PointwiseJudge,
)
from .judges.verdicts import (
    JudgeResult as JudgeResult,
)
from .metrics import (
    calibrate as calibrate,
)
from .metrics import (
    compare_runs as compare_runs,
)
from .tasks import (
    available_tasks as available_tasks,
)
from .tasks import (
    load_task as load_task,
)
from .tuning._task import (
    Optimization as Optimization,
)
from .tuning._task import (
    optimize as optimize,
)
from .usage import (
    StageProgress as StageProgress,
)
from .usage import (
    on_progress as on_progress,
)
from .view import (
    write_page as write_page,
)
