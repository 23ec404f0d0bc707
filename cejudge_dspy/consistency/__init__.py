"""Whether a verdict survives the language: each item judged as given and again rendered in other
languages (by a translator, or from the item's own parallel versions), by CE-Judge and a plain judge alike,
with one ordinary run directory per rendering and method under one parent, and a summary of how often each
judge changed its output (`cejudge consistency`)."""

from cejudge_dspy.consistency._consistency import (
    TRANSLATORS,
    ConsistencyOptions,
    ConsistencyProgress,
    consistency,
    translator_for,
)
from cejudge_dspy.consistency._layout import (
    COMPARED,
    CONSISTENCY,
    ORIGINAL_RUN,
    RENDERINGS,
    child_name,
    is_consistency_run,
    read_consistency_identity,
)
from cejudge_dspy.consistency._parallel import check_covered, parallel_fields, parallel_versions, split_list
from cejudge_dspy.consistency._renderings import (
    TEXT_FIELDS,
    Rendering,
    field_language,
    read_renderings,
    render_items,
    rendered_item,
)
from cejudge_dspy.consistency._run import ConsistencyRun, judge_consistency
from cejudge_dspy.consistency._stage import RenderStage, TranslateInto, llm_stage
from cejudge_dspy.consistency._summary import read_outputs, summarize_consistency
from cejudge_dspy.consistency._table import (
    ANY_LANGUAGE,
    LanguageTable,
    language_table,
    metric_cell,
    paired_cell,
)

__all__ = [
    "TRANSLATORS",
    "ConsistencyOptions",
    "ConsistencyProgress",
    "check_covered",
    "consistency",
    "parallel_fields",
    "parallel_versions",
    "split_list",
    "translator_for",
    "ANY_LANGUAGE",
    "COMPARED",
    "CONSISTENCY",
    "ConsistencyRun",
    "LanguageTable",
    "ORIGINAL_RUN",
    "TEXT_FIELDS",
    "RENDERINGS",
    "Rendering",
    "RenderStage",
    "TranslateInto",
    "child_name",
    "field_language",
    "is_consistency_run",
    "judge_consistency",
    "language_table",
    "llm_stage",
    "metric_cell",
    "paired_cell",
    "read_consistency_identity",
    "read_outputs",
    "read_renderings",
    "render_items",
    "rendered_item",
    "summarize_consistency",
]
