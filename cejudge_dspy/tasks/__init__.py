"""Tasks are data: the typed declarations in `programs/*.toml`, their parsing into a `TaskSpec`, and the
shipped resource folders (task declarations, tuned programs, CheckEval checklists)."""

from cejudge_dspy.tasks._catalog import available_tasks, broken_declarations, load_task, preset_task
from cejudge_dspy.tasks._resources import folder
from cejudge_dspy.tasks._spec import ITEM_FIELDS, Dimension, SubDimension, TaskSpec

__all__ = [
    "Dimension",
    "ITEM_FIELDS",
    "SubDimension",
    "TaskSpec",
    "available_tasks",
    "broken_declarations",
    "folder",
    "load_task",
    "preset_task",
]
