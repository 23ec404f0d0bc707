"""The names of the backbones face, one list: lazy_loader.attach_stub imports each on first use
(__init__.py), and type checkers and the API docs read them here."""

from ._builders import (
    cache_scope as cache_scope,
)
from ._builders import (
    gguf_model_name as gguf_model_name,
)
from ._capabilities import (
    Capabilities as Capabilities,
)
from ._capabilities import (
    capabilities as capabilities,
)
from ._capabilities import (
    learn_logprobs as learn_logprobs,
)
from ._capabilities import (
    text_scorer as text_scorer,
)
from ._errors import (
    backbone_failure as backbone_failure,
)
from ._errors import (
    error_line as error_line,
)
from ._errors import (
    explain_backbone_error as explain_backbone_error,
)
from ._features import (
    FeatureCheck as FeatureCheck,
)
from ._features import (
    check_features as check_features,
)
from ._http_scoring import (
    ServerScorer as ServerScorer,
)
from ._local_server import (
    DEFAULT_SLOTS as DEFAULT_SLOTS,
)
from ._local_server import (
    running_servers as running_servers,
)
from ._local_server import (
    stop_all as stop_all,
)
from ._logprobs import (
    checked_logprob as checked_logprob,
)
from ._logprobs import (
    logprob_problem as logprob_problem,
)
from ._logprobs import (
    logprobs_problem as logprobs_problem,
)
from ._model_file import (
    resolve_gguf as resolve_gguf,
)
from ._options import (
    ADAPTERS as ADAPTERS,
)
from ._options import (
    DEFAULT_REPEAT_PENALTY as DEFAULT_REPEAT_PENALTY,
)
from ._options import (
    DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S,
)
from ._options import (
    MAX_PARALLEL as MAX_PARALLEL,
)
from ._options import (
    SEED_RANGE as SEED_RANGE,
)
from ._options import (
    TEMPERATURE_RANGE as TEMPERATURE_RANGE,
)
from ._options import (
    TIMEOUT_RANGE as TIMEOUT_RANGE,
)
from ._options import (
    BackboneOptions as BackboneOptions,
)
from ._options import (
    backbone_options as backbone_options,
)
from ._options import (
    is_local as is_local,
)
from ._provider import (
    LLAMA_SERVER as LLAMA_SERVER,
)
from ._server_lm import (
    AnswerCutShort as AnswerCutShort,
)
from ._server_lm import (
    CallTimedOut as CallTimedOut,
)
from ._server_lm import (
    EmptyAnswer as EmptyAnswer,
)
from ._server_lm import (
    ServerLM as ServerLM,
)
from ._server_lm import (
    whole_answers as whole_answers,
)
from ._simulated import (
    SimulatedEngine as SimulatedEngine,
)
from ._simulated import (
    simulated_backbone as simulated_backbone,
)
from ._spec import (
    adapter_name as adapter_name,
)
from ._spec import (
    check_backbone as check_backbone,
)
from ._spec import (
    make_lm as make_lm,
)
from ._spec import (
    preferred_adapter as preferred_adapter,
)
from ._spec import (
    use_backbone as use_backbone,
)
from ._spec_checks import (
    EXAMPLES as EXAMPLES,
)
from ._spec_checks import (
    resolved_adapter as resolved_adapter,
)
