"""A declaration's `TEXT@LANG = COLUMN` entries in [dataset.fields]: the items' own versions of their texts
in other languages, kept apart from the ordinary mapping."""

from __future__ import annotations

import pytest

from cejudge_dspy.errors import TaskError
from cejudge_dspy.tasks._parsing import parse_task

BASE = {"name": "t", "mode": "pairwise", "metric": "accuracy", "task": "Judge."}


def test_versions_in_other_languages_are_kept_apart_from_the_mapping() -> None:
    fields = {"instruction": "prompt", "instruction@ko": "prompt_ko", "response_a@ko": "a_ko"}
    spec = parse_task({**BASE, "dataset": {"fields": fields}})
    assert spec.dataset.fields == {"instruction": "prompt"}
    assert spec.dataset.parallel == {"ko": {"instruction": "prompt_ko", "response_a": "a_ko"}}


@pytest.mark.parametrize("key", ["label@ko", "instruction@", "nonsense@de"])
def test_a_version_of_anything_but_a_text_is_one_line(key: str) -> None:
    with pytest.raises(TaskError, match="TEXT@LANG"):
        parse_task({**BASE, "dataset": {"fields": {key: "col"}}})
