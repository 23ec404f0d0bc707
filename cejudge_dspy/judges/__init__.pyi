"""The names of the judges face, one list: lazy_loader.attach_stub imports each on first use
(__init__.py), and type checkers and the API docs read them here."""

from ._machinery._backbone_features import (
    FEATURES as FEATURES,
)
from ._machinery._backbone_features import (
    backbone_features as backbone_features,
)
from ._machinery._backbone_features import (
    combined_features as combined_features,
)
from ._machinery._backbone_features import (
    missing_features as missing_features,
)
from ._machinery._judging_run import (
    judging_run as judging_run,
)
from ._machinery._judging_run import (
    keep_history as keep_history,
)
from ._machinery._judging_run import (
    quiet_history as quiet_history,
)
from ._machinery._memo_adapters import (
    memo_adapter as memo_adapter,
)
from ._machinery._prompt_fingerprint import (
    prompt_fingerprint as prompt_fingerprint,
)
from ._machinery._saved_programs import (
    auto_choice as auto_choice,
)
from ._machinery._saved_programs import (
    check_save_path as check_save_path,
)
from ._machinery._saved_programs import (
    default_path as default_path,
)
from ._machinery._saved_programs import (
    manifest_path as manifest_path,
)
from ._machinery._saved_programs import (
    program_identity as program_identity,
)
from ._machinery._saved_programs import (
    read_manifest as read_manifest,
)
from ._machinery._saved_programs import (
    save_program as save_program,
)
from ._machinery._stage import (
    Stage as Stage,
)
from ._machinery._stage import (
    StageFailure as StageFailure,
)
from ._machinery._sync_bridge import (
    run_sync as run_sync,
)
from ._option_choices import (
    ADAPTER_CHOICES as ADAPTER_CHOICES,
)
from ._options import (
    JudgeOptions as JudgeOptions,
)
from ._options import (
    Option as Option,
)
from ._registry import (
    METHODS as METHODS,
)
from ._registry import (
    SCORING_METHODS as SCORING_METHODS,
)
from ._registry import (
    build_program as build_program,
)
from ._registry import (
    check_method_backbone as check_method_backbone,
)
from ._registry import (
    load_program as load_program,
)
from ._registry import (
    method_names as method_names,
)
from ._registry import (
    program_for_task as program_for_task,
)
from ._registry import (
    run_program as run_program,
)
from ._registry import (
    run_program_identity as run_program_identity,
)
from .direct import (
    DirectPairwiseJudge as DirectPairwiseJudge,
)
from .direct import (
    DirectPointwiseJudge as DirectPointwiseJudge,
)
from .geval import (
    GEvalJudge as GEvalJudge,
)
from .likelihood import (
    LikelihoodPairwiseJudge as LikelihoodPairwiseJudge,
)
