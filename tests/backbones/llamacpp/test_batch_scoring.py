"""A given answer scored by the batched engine's own scheduler (a scoring job, batch_jobs.Job.score_from):
the log probabilities must be those of a plain forward pass over the whole text, whatever ran beside it or
whatever prefix another sequence lent it (tests/support/toy_runtime.py: a toy model with one right next
token)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cejudge_dspy.backbones.llamacpp import BatchedLlamaEngine
from cejudge_dspy.backbones.llamacpp._answer_scorer import token_logprob
from cejudge_dspy.backbones.llamacpp._batch_jobs import Job
from cejudge_dspy.backbones.llamacpp._batch_scheduler import BatchScheduler
from tests.support.toy_runtime import VOCAB, GreedySampler, ToyRuntime, next_token, reference


def expected(prompt: list[int], answer: list[int]) -> list[float]:
    """By hand: the toy model puts logit 3 on its next token and -1 on the other VOCAB - 1."""
    right = 3 - math.log(math.exp(3) + (VOCAB - 1) * math.exp(-1))
    wrong = -1 - math.log(math.exp(3) + (VOCAB - 1) * math.exp(-1))
    text = prompt + answer
    return [right if next_token(text[:i]) == text[i] else wrong for i in range(len(prompt), len(text))]


def scoring(prompt: list[int], answer: list[int]) -> Job:
    return Job(
        prompt=prompt + answer, max_tokens=0, stop=[], make_sampler=lambda: None, score_from=len(prompt)
    )


def test_token_logprob_is_the_log_softmax() -> None:
    row = np.array([1.0, 2.0, 0.5], dtype=np.float32)
    assert token_logprob(row, 1) == pytest.approx(2.0 - math.log(math.e + math.e**2 + math.e**0.5), rel=1e-12)


def test_scoring_jobs_beside_completions_and_over_a_shared_prefix() -> None:
    runtime = ToyRuntime(n_seq=8, n_batch=16)  # 16-token chunks: long texts are read in several steps
    scheduler = BatchScheduler(runtime, max_active=4)
    head = [5, 9, 14, 2, 30, 7, 11, 3, 8, 21, 6, 17, 4, 25, 1, 19, 12, 33]  # 18 tokens, two chunks
    completion = Job(prompt=head + [7, 7], max_tokens=12, stop=[], make_sampler=GreedySampler)
    scheduler.submit(completion)
    assert completion.done.wait(30)
    # The right continuation, a wrong one, and one that shares the whole head with the finished job.
    right = [next_token(head)]
    for _ in range(6):
        right.append(next_token(head + right))
    jobs = [scoring(head, right), scoring(head, [1, 2, 3, 4, 5]), scoring(head + [7], [7, 9, 9, 9])]
    others = [Job(prompt=[3, 1, 4, 1, 5, 9, 2, 6], max_tokens=10, stop=[], make_sampler=GreedySampler)]
    scheduler.submit(*jobs, *others)
    for j in jobs + others:
        assert j.done.wait(30) and j.error is None, j.error
    assert jobs[0].logprobs == pytest.approx(expected(head, right), rel=1e-12)
    # Every token the model's own choice: 3 - log(e^3 + 39 e^-1) = -0.539; a wrong token -4.539.
    assert all(lp == pytest.approx(-0.539011, abs=1e-6) for lp in jobs[0].logprobs)
    assert min(jobs[1].logprobs) == pytest.approx(-4.539011, abs=1e-6)
    assert jobs[1].logprobs == pytest.approx(expected(head, [1, 2, 3, 4, 5]), rel=1e-12)
    assert jobs[2].logprobs == pytest.approx(expected(head + [7], [7, 9, 9, 9]), rel=1e-12)
    assert jobs[2].reused == len(head) + 1 - 1  # the kept prefix served all but the token it needs read
    assert [j.finish for j in jobs] == ["scored"] * 3 and all(not j.generated for j in jobs)
    text, finish, tokens = reference(others[0].prompt, 10, [])
    assert (others[0].text, others[0].finish, others[0].generated) == (text, finish, tokens)
    scheduler.close()


def test_the_engine_scores_without_a_second_model(tmp_path: Path) -> None:
    runtime = ToyRuntime(n_seq=8, n_batch=32)
    eng = BatchedLlamaEngine(tmp_path / "toy.gguf", runtime_factory=lambda: runtime, n_ctx=64)
    messages = [{"role": "user", "content": "Translate: Hund"}]
    prompt, answer = runtime.answer_tokens(messages, "dog")
    try:
        assert eng.answer_logprobs(messages, "dog") == pytest.approx(expected(prompt, answer), rel=1e-12)
        assert eng._scorer is None  # the serial engine's logits_all instance was never built
        assert eng._scheduler is not None and set(eng._scheduler.rows) == {0}  # no token was generated
        with pytest.raises(ValueError, match="do not fit the context of 64"):
            eng.answer_logprobs(messages, "x" * 80)
    finally:
        eng.close()
