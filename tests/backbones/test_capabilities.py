"""A backbone's capabilities: one typed object, declared by `make_lm`, learnt while judging, read through
`backbones.capabilities`; nothing is set on the `dspy.LM`."""

from __future__ import annotations

import dataclasses
import gc
import weakref

import dspy
import pytest

from cejudge_dspy.backbones import Capabilities, ServerScorer, capabilities, learn_logprobs, make_lm


def test_make_lm_declares_a_servers_scorer_and_require_logprobs_without_touching_the_lm() -> None:
    lm = make_lm("openai/judge", api_base="http://127.0.0.1:9/v1", api_key="k", require_logprobs=True)
    known = capabilities(lm)
    assert isinstance(known.scorer, ServerScorer)
    assert (known.scorer.api_base, known.scorer.model, known.scorer.api_key) == (
        "http://127.0.0.1:9/v1",
        "judge",
        "k",
    )
    assert known.require_logprobs is True
    assert known.scoring is None  # a server is not probed before a judge needs it
    assert not {"server_scorer", "require_logprobs"} & set(vars(lm))
    assert capabilities(lm).scorer is known.scorer  # one scorer per LM: its probe's answer is kept


def test_a_backbone_without_a_server_or_an_engine_scorer_has_none() -> None:
    for lm in (make_lm("openai/gpt-4o-mini", api_key="k"), make_lm("simulated:0")):
        known = capabilities(lm)
        assert known.scorer is None and known.scoring is False and known.require_logprobs is False


def test_what_judging_teaches_is_kept_per_lm_and_the_object_is_frozen() -> None:
    lm, other = make_lm("simulated:0"), make_lm("simulated:0")
    assert capabilities(lm) == Capabilities(logprobs=False, refuses_logprobs=False)
    learn_logprobs(lm, "gave")
    learn_logprobs(other, "refused")
    assert capabilities(lm).logprobs and not capabilities(lm).refuses_logprobs
    assert capabilities(other).refuses_logprobs and not capabilities(other).logprobs
    assert not capabilities(make_lm("simulated:0")).logprobs  # a new LM object starts from nothing
    with pytest.raises(dataclasses.FrozenInstanceError):
        capabilities(lm).logprobs = False  # type: ignore[misc]


def test_an_lm_make_lm_did_not_build_has_the_defaults_and_none_can_do_nothing() -> None:
    assert capabilities(None) == Capabilities()
    learn_logprobs(None, "gave")  # no backbone: nothing to learn
    lm = dspy.LM("openai/own", api_key="k")
    assert capabilities(lm).scorer is None and capabilities(lm).schema is bool(lm.supports_response_schema)


def test_capabilities_never_keep_an_lm_alive() -> None:
    lm = make_lm("simulated:0", require_logprobs=True)
    learn_logprobs(lm, "gave")
    gone = weakref.ref(lm)
    del lm
    gc.collect()
    assert gone() is None


def test_a_copy_keeps_what_make_lm_declared_but_learns_afresh() -> None:
    lm = make_lm("openai/judge", api_base="http://127.0.0.1:9/v1", require_logprobs=True, cache=False)
    learn_logprobs(lm, "refused")
    copied = capabilities(lm.copy(temperature=1.0))
    assert copied.require_logprobs and isinstance(copied.scorer, ServerScorer)
    assert copied.scorer is not capabilities(lm).scorer and copied.scorer.model == "judge"
    assert not copied.refuses_logprobs
