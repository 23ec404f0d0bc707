"""The names of the tuning face, one list: lazy_loader.attach_stub imports each on first use
(__init__.py), and type checkers and the API docs read them here."""

from ._budget import (
    Budget as Budget,
)
from ._budget import (
    CallEstimate as CallEstimate,
)
from ._budget import (
    estimate_calls as estimate_calls,
)
from ._budget import (
    gepa_metric_calls as gepa_metric_calls,
)
from ._budget import (
    parse_budget as parse_budget,
)
from ._budget import (
    split_items as split_items,
)
from ._checkpoint import (
    Checkpoint as Checkpoint,
)
from ._checkpoint import (
    checkpoints_root as checkpoints_root,
)
from ._choices import (
    OPTIMIZERS as OPTIMIZERS,
)
from ._dev import (
    DevScore as DevScore,
)
from ._dev import (
    evaluate_dev as evaluate_dev,
)
from ._metrics import (
    metric_for as metric_for,
)
from ._metrics import (
    pairwise_concordance as pairwise_concordance,
)
from ._metrics import (
    pairwise_metric as pairwise_metric,
)
from ._metrics import (
    pointwise_metric as pointwise_metric,
)
from ._optimize import (
    optimize as optimize,
)
from ._pairwise_scoring import (
    pairwise_feedback as pairwise_feedback,
)
from ._pointwise_scoring import (
    pointwise_feedback as pointwise_feedback,
)
from ._report import (
    OptimizeReport as OptimizeReport,
)
from ._task import (
    Optimization as Optimization,
)
from ._task import (
    OptimizePlan as OptimizePlan,
)
from ._task import (
    optimize_task as optimize_task,
)
from ._task import (
    reflection_backbone as reflection_backbone,
)
