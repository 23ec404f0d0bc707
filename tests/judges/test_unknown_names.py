"""A keyword no factory or constructor has is refused with the nearest name it has: a typo never builds a
judge with the default in its place (`tie_bnad=0.3` once built a judge whose tie band was 0)."""

from __future__ import annotations

import pytest

from cejudge_dspy.errors import InputError
from cejudge_dspy.judges import build_program, method_names
from cejudge_dspy.judges.cejudge import PairwiseJudge, PointwiseJudge


@pytest.mark.parametrize("method", method_names())
def test_build_program_refuses_an_unknown_option_naming_the_nearest(method: str) -> None:
    with pytest.raises(InputError, match="unknown judge option 'tie_bnad': did you mean 'tie_band'"):
        build_program("chat", method, tie_bnad=0.3)


def test_an_option_one_method_lacks_is_still_accepted_and_the_one_it_has_reaches_it() -> None:
    assert build_program("chat", "direct", translator="none", tie_band=0.3).tie_band == 0.3
    assert build_program("chat", "cejudge", tie_band=0.3).tie_band == 0.3


def test_the_judges_constructors_refuse_an_unknown_keyword() -> None:
    with pytest.raises(InputError, match="unknown PairwiseJudge option 'tie_bnad': did you mean 'tie_band'"):
        PairwiseJudge("chat", tie_bnad=0.3)
    with pytest.raises(InputError, match="unknown PointwiseJudge option 'answer': did you mean 'answers'"):
        PointwiseJudge("literary", answer=True)
    assert PairwiseJudge("chat", tie_band=0.3, concepts=False).use_concepts is False
