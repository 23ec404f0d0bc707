"""Judging items into a run directory: the local runner (concurrent, resumable), merging shards, joining
single judges' runs into a panel run, and judging on a Ray cluster."""

from cejudge_dspy.evaluate._cluster import check_ray_address, ray_cluster
from cejudge_dspy.evaluate._distributed import RayOptions, judge_on_ray
from cejudge_dspy.evaluate._groups import group_key
from cejudge_dspy.evaluate._members_merge import merge_members
from cejudge_dspy.evaluate._merge import merge_runs
from cejudge_dspy.evaluate._ray_progress import RayProgress
from cejudge_dspy.evaluate._runner import RunProgress, judge_items, pending_items
from cejudge_dspy.evaluate._worker import RunRecipe

__all__ = [
    "RayOptions",
    "RayProgress",
    "RunProgress",
    "RunRecipe",
    "group_key",
    "judge_items",
    "judge_on_ray",
    "merge_members",
    "merge_runs",
    "pending_items",
    "ray_cluster",
    "check_ray_address",
]
