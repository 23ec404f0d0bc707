"""Items from data: local files or the hub, mapped onto item fields by the task's declaration."""

from cejudge_dspy.data.loader import load_items, task_summary
from cejudge_dspy.data.mapping import field_mapping
from cejudge_dspy.data.rows import parse_label
from cejudge_dspy.data.sampling import stratified_sample
from cejudge_dspy.data.sources import FORMATS, fingerprint

__all__ = [
    "FORMATS",
    "field_mapping",
    "fingerprint",
    "load_items",
    "parse_label",
    "stratified_sample",
    "task_summary",
]
