"""The names of the evaluate face, one list: lazy_loader.attach_stub imports each on first use
(__init__.py), and type checkers and the API docs read them here."""

from ._checks import (
    check_api_key as check_api_key,
)
from ._checks import (
    check_backbone_spec as check_backbone_spec,
)
from ._checks import (
    check_options as check_options,
)
from ._checks import (
    check_out as check_out,
)
from ._cluster import (
    RayOptions as RayOptions,
)
from ._cluster import (
    check_ray_address as check_ray_address,
)
from ._cluster import (
    ray_cluster as ray_cluster,
)
from ._distributed import (
    judge_on_ray as judge_on_ray,
)
from ._evaluate import (
    Evaluation as Evaluation,
)
from ._evaluate import (
    data_fingerprint as data_fingerprint,
)
from ._evaluate import (
    evaluate as evaluate,
)
from ._evaluate import (
    program_notes as program_notes,
)
from ._evaluate import (
    select_items as select_items,
)
from ._evaluate import (
    shard_of as shard_of,
)
from ._groups import (
    group_key as group_key,
)
from ._identity import (
    run_identity as run_identity,
)
from ._members_merge import (
    merge_members as merge_members,
)
from ._merge import (
    merge_runs as merge_runs,
)
from ._options import (
    BOUNDS as BOUNDS,
)
from ._options import (
    CONFIDENCE_CHOICES as CONFIDENCE_CHOICES,
)
from ._options import (
    MAX_BOOTSTRAP as MAX_BOOTSTRAP,
)
from ._options import (
    EvaluateOptions as EvaluateOptions,
)
from ._options import (
    EvaluateProgress as EvaluateProgress,
)
from ._options import (
    check_bound as check_bound,
)
from ._panel import (
    build_panel as build_panel,
)
from ._panel import (
    check_panel as check_panel,
)
from ._panel import (
    panel_backbone as panel_backbone,
)
from ._panel import (
    panel_identity as panel_identity,
)
from ._ray_progress import (
    RayProgress as RayProgress,
)
from ._runner import (
    RunProgress as RunProgress,
)
from ._runner import (
    judge_items as judge_items,
)
from ._worker import (
    RunRecipe as RunRecipe,
)
