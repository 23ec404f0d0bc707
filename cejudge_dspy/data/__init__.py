"""Items and where they come from: the `Item`, language codes and names, and loading local files or hub
datasets mapped onto item fields by the task's declaration."""

from cejudge_dspy.data._files import read_text_lines
from cejudge_dspy.data._items import Item, require_text
from cejudge_dspy.data._languages import LANGUAGES, is_english, language_name, normalize_language
from cejudge_dspy.data._loader import load_items, task_summary
from cejudge_dspy.data._mapping import field_mapping
from cejudge_dspy.data._rows import parse_label
from cejudge_dspy.data._sampling import stratified_sample
from cejudge_dspy.data._sources import FORMATS, fingerprint

__all__ = [
    "FORMATS",
    "LANGUAGES",
    "Item",
    "field_mapping",
    "fingerprint",
    "is_english",
    "language_name",
    "load_items",
    "normalize_language",
    "parse_label",
    "read_text_lines",
    "require_text",
    "stratified_sample",
    "task_summary",
]
