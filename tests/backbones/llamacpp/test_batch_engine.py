"""The batched engine and its scheduler on a toy model (tests/support/toy_runtime.py): every answer must be
the one a serial decoder gives, however the calls were interleaved, shared prefixes or were pushed out."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy import lm15

from cejudge_dspy.backbones.llamacpp import (
    BATCH_PARALLEL,
    DEFAULT_PARALLEL,
    AsyncLlamaCppEngine,
    BatchedLlamaEngine,
    LlamaCppEngine,
)
from cejudge_dspy.backbones.llamacpp._batch_engine import SequenceStates
from cejudge_dspy.backbones.llamacpp._batch_jobs import Job, NoRoom
from cejudge_dspy.backbones.llamacpp._batch_scheduler import BatchScheduler
from cejudge_dspy.backbones.llamacpp._top_logprobs import TopLogprobs
from tests.support.toy_runtime import GreedySampler, ToyRuntime, reference


def job(
    prompt: list[int], max_tokens: int = 30, stop: list[str] | None = None, logprobs: bool = False
) -> Job:
    return Job(
        prompt=prompt,
        max_tokens=max_tokens,
        stop=stop or [],
        make_sampler=GreedySampler,
        make_recorder=(lambda: TopLogprobs(2)) if logprobs else None,
    )


def run_all(scheduler: BatchScheduler, jobs: list[Job]) -> None:
    scheduler.submit(*jobs)
    for j in jobs:
        assert j.done.wait(30), "a job never finished"


def prompts(n: int, shared: int = 0, seed: int = 1) -> list[list[int]]:
    rng = random.Random(seed)
    head = [rng.randrange(1, 40) for _ in range(shared)]
    return [head + [rng.randrange(1, 40) for _ in range(rng.randrange(3, 25))] for _ in range(n)]


def assert_right(j: Job) -> None:
    text, finish, tokens = reference(j.prompt, j.max_tokens, j.stop)
    assert j.error is None, j.error
    assert (j.text, j.finish, j.generated) == (text, finish, tokens)


@pytest.mark.parametrize("draft", [False, True])
def test_concurrent_jobs_answer_as_a_serial_decoder_does(draft: bool) -> None:
    runtime = ToyRuntime(n_seq=6, n_batch=16)
    scheduler = BatchScheduler(runtime, max_active=4, draft=draft)
    jobs = [
        job(p, max_tokens=5 + i * 3, stop=["zz"] if i % 3 == 0 else None) for i, p in enumerate(prompts(12))
    ]
    run_all(scheduler, jobs)
    for j in jobs:
        assert_right(j)
    assert {j.finish for j in jobs} >= {"length"}
    assert max(runtime.batches) > 1, "jobs in flight together must share decode calls"
    scheduler.close()


def test_a_shared_prefix_is_read_once_and_kept_for_later_calls() -> None:
    runtime = ToyRuntime(n_seq=8, n_batch=8)
    scheduler = BatchScheduler(runtime, max_active=4)
    together = [job(p) for p in prompts(3, shared=80)]
    run_all(scheduler, together)
    # The later two waited for the first one's prompt and copied its 80 shared tokens.
    assert sorted(j.reused for j in together)[1:] == [80, 80]
    later = job(together[0].prompt[:80] + [5, 6, 7])
    run_all(scheduler, [later])
    assert later.reused == 80  # a finished sequence kept its prefix
    for j in [*together, later]:
        assert_right(j)
    assert runtime.decoded < sum(len(j.prompt) + len(j.generated) for j in [*together, later])
    scheduler.close()


@pytest.mark.parametrize("draft", [False, True])
def test_a_full_cache_drops_kept_prefixes_then_restarts_the_newest_job(draft: bool) -> None:
    runtime = ToyRuntime(n_seq=6, n_batch=8, capacity=90)
    scheduler = BatchScheduler(runtime, max_active=3, draft=draft)
    jobs = [job(p, max_tokens=20) for p in prompts(8, seed=3)]
    run_all(scheduler, jobs)
    for j in jobs:
        assert_right(j)  # a restarted job starts over with a fresh sampler: same answer
    scheduler.close()


def test_a_call_larger_than_the_cache_fails_alone() -> None:
    runtime = ToyRuntime(n_seq=4, n_batch=8, capacity=30)
    scheduler = BatchScheduler(runtime, max_active=2)
    big, small = job(list(range(1, 40))), job([3, 4, 5], max_tokens=4)
    run_all(scheduler, [big, small])
    assert isinstance(big.error, NoRoom)
    assert_right(small)
    again = job([3, 4, 6], max_tokens=4)
    run_all(scheduler, [again])
    assert_right(again)
    scheduler.close()


def test_a_decode_error_fails_the_jobs_in_flight_and_the_engine_goes_on() -> None:
    runtime = ToyRuntime()
    scheduler = BatchScheduler(runtime)
    runtime.fail_next = -3
    broken = job([1, 2, 3])
    run_all(scheduler, [broken])
    assert "llama_decode failed (-3)" in str(broken.error)
    after = job([1, 2, 3])
    run_all(scheduler, [after])
    assert_right(after)
    scheduler.close()


def test_closing_fails_waiting_jobs_and_refuses_new_ones() -> None:
    runtime = ToyRuntime(n_seq=4)
    scheduler = BatchScheduler(runtime, max_active=1)
    jobs = [job(p, max_tokens=10_000) for p in prompts(5)]  # one runs, four wait
    scheduler.submit(*jobs)
    scheduler.close()
    for j in jobs:
        assert j.done.is_set() and (j.finish is not None or "closed" in str(j.error))
    assert sum("closed" in str(j.error) for j in jobs) >= 3
    with pytest.raises(RuntimeError, match="closed"):
        scheduler.submit(job([1, 2]))


def test_top_logprobs_are_recorded_per_generated_token() -> None:
    scheduler = BatchScheduler(ToyRuntime(), draft=True)  # drafts too: one record per sampled token
    j = job([7, 8, 9], max_tokens=40, logprobs=True)
    run_all(scheduler, [j])
    content = j.recorder.content(lambda ids, prev: bytes(97 + t % 26 for t in ids), j.prompt)
    assert [c["token"] for c in content] == [chr(97 + t % 26) for t in j.generated[: len(content)]]
    assert len(content) >= len(j.generated) - 1
    assert all(c["top_logprobs"][0]["logprob"] == c["logprob"] for c in content)  # greedy: the top token
    assert scheduler.accepted > 0  # some of those tokens came from drafts
    scheduler.close()


# -- the engine, through dspy.LM -----------------------------------------------------------------------


def engine(tmp_path: Path, states: Path | None = None, **options: Any) -> BatchedLlamaEngine:
    runtime = ToyRuntime(n_seq=8, n_batch=32)
    eng = BatchedLlamaEngine(
        tmp_path / "toy.gguf", runtime_factory=lambda: runtime, prompt_state_dir=states, **options
    )
    eng.runtime_for_test = runtime  # type: ignore[attr-defined]
    return eng


def lm_of(eng: BatchedLlamaEngine, **config: Any) -> dspy.LM:
    return dspy.LM("llamacpp/toy", engine=eng, async_engine=AsyncLlamaCppEngine(eng), cache=False, **config)


def request(text: str, **config: Any) -> lm15.Request:
    return lm15.Request(
        model="llamacpp/toy",
        messages=(lm15.Message.user(text),),
        config=lm15.Config(**config),
    )


def test_the_engine_answers_threads_in_parallel_with_usage_and_call_log(tmp_path: Path) -> None:
    eng = engine(tmp_path)
    eng.call_log = []
    texts = [f"judge item {i} please" for i in range(6)]
    out: dict[int, lm15.Response] = {}

    def ask(i: int) -> None:
        out[i] = eng.complete(request(texts[i], max_tokens=12))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runtime = eng.runtime_for_test  # type: ignore[attr-defined]
    for i, text in enumerate(texts):
        prompt, _ = runtime.prompt([{"role": "user", "content": text}])
        want, finish, tokens = reference(prompt, 12, [])
        assert out[i].text == want.decode()
        assert out[i].usage.output_tokens == len(tokens)
        assert out[i].usage.input_tokens == len(prompt)
    assert len(eng.call_log) == 6
    assert sum(c["evaluated"] for c in eng.call_log) < sum(
        c["prompt"] for c in eng.call_log
    )  # "<user>judge item "
    eng.close()
    assert runtime.closed


def test_the_engine_refuses_a_prompt_longer_than_its_context(tmp_path: Path) -> None:
    eng = engine(tmp_path, n_ctx=20)
    with pytest.raises(lm15.ContextLengthError, match="exceed context window of 20"):
        eng.complete(request("x" * 40, max_tokens=4))
    eng.close()


def test_logprobs_reach_dspy(tmp_path: Path) -> None:
    lm = lm_of(engine(tmp_path), max_tokens=5, temperature=0.0)
    outputs = lm("hello there", logprobs=True, top_logprobs=2)
    assert outputs[0]["logprobs"]["content"], "DSPy passes the engine's logprobs into its output"


def test_stage_prefixes_stored_on_disk_serve_a_fresh_engine(tmp_path: Path) -> None:
    states = tmp_path / "states"
    text = "a stage instruction long enough to be its own prefix family " * 4
    first = engine(tmp_path, states=states)
    first.call_log = []
    first.complete(request(text + "item one", max_tokens=3))
    first.close()
    assert len(SequenceStates(ToyRuntime(), states).store) == 1
    second = engine(tmp_path, states=states)
    second.call_log = []
    second.complete(request(text + "item two", max_tokens=3))
    call = second.call_log[0]
    assert call["evaluated"] < call["prompt"] - 200, call  # the stored prefix was restored, not re-read
    second.close()


def test_a_variant_of_a_stage_prompt_is_stored_as_its_own_family(tmp_path: Path) -> None:
    """Two variants of one stage (an ablation's instruction) share the adapter's long opening but part
    inside the system turn: each is stored and each serves its own next call; another item of the same
    variant, which differs only after the system turn, is not stored again."""
    states = tmp_path / "states"
    opening = "Your input fields are: a long list of fields that every stage variant shares. " * 4
    variants = [opening + "Answer the checklist.", opening + "Read the checklist for yourself."]

    def ask(eng: BatchedLlamaEngine, system: str, item: str) -> dict[str, Any]:
        eng.call_log = []
        eng.complete(
            lm15.Request(
                model="llamacpp/toy",
                system=system,
                messages=(lm15.Message.user(item),),
                config=lm15.Config(max_tokens=3),
            )
        )
        return eng.call_log[0]

    first = engine(tmp_path, states=states)
    for system in variants:
        ask(first, system, "item one")
    ask(first, variants[0], "item two")
    first.close()
    assert len(opening) > 128 and len(SequenceStates(ToyRuntime(), states).store) == 2
    second = engine(tmp_path, states=states)
    for system in variants:
        call = ask(second, system, "item three")
        assert call["evaluated"] < 20, call  # its own variant restored: only the item's words re-read
    second.close()


# -- choosing the engine, and the benchmark's agreement line ---------------------------------------------


def test_parallel_picks_the_engine_and_a_bad_value_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cejudge_dspy.backbones import _spec as backbones
    from cejudge_dspy.errors import BackboneError

    monkeypatch.setattr(backbones, "_llama_cpp_installed", lambda: True)
    monkeypatch.setenv("CEJUDGE_PROMPT_STATES", str(tmp_path / "states"))
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 64)
    batched = backbones.make_lm(f"gguf:{model}", parallel=BATCH_PARALLEL)
    assert type(batched.engine) is BatchedLlamaEngine and batched.engine.parallel == BATCH_PARALLEL
    # Per-sequence states have their own directory: the serial engine's whole-context ones do not fit.
    assert f"-seq-ctx{batched.engine.n_ctx}-llama" in batched.engine.prompt_state_dir.name
    default = backbones.make_lm(f"gguf:{model}")  # the default: the batched engine
    assert DEFAULT_PARALLEL == BATCH_PARALLEL and type(default.engine) is BatchedLlamaEngine
    # The measured default (docs/measurements/bench-embedded.md): prompt-lookup drafts only for a call
    # decoding alone.
    assert default.engine.draft and default.engine.draft_jobs == 1
    assert not backbones.make_lm(f"gguf:{model}", draft=False).engine.draft
    serial = backbones.make_lm(f"gguf:{model}", parallel=1)
    assert type(serial.engine) is LlamaCppEngine
    # Not the same answers to the last bit (README: verdicts of close pairs changed), so DSPy's cache,
    # which keys on the model name, keeps each engine's answers apart.
    assert batched.model == serial.model + "-batched"
    for value, message in [(0, "from 1 to"), (99, "from 1 to"), (True, "from 1 to")]:
        with pytest.raises(BackboneError, match=message):
            backbones.check_backbone("embedded", parallel=value)
    with pytest.raises(BackboneError, match="--parallel applies to local GGUF models only"):
        backbones.check_backbone("hosted_vllm/m", api_base="http://127.0.0.1:9/v1", parallel=2)
    for fine in (None, 1):  # the backbone's default, or one call at a time: what an HTTP backbone does
        backbones.check_backbone("hosted_vllm/m", api_base="http://127.0.0.1:9/v1", parallel=fine)


def test_the_parallel_flag_reaches_the_backbone_only_when_set() -> None:
    import argparse

    from cejudge_dspy.cli._common import add_backbone_args, backbone_options

    parser = argparse.ArgumentParser()
    add_backbone_args(parser)
    assert "parallel" not in backbone_options(parser.parse_args([]))  # HTTP backbones refuse the option
    assert backbone_options(parser.parse_args(["--parallel", "4"]))["parallel"] == 4
    assert backbone_options(parser.parse_args(["--parallel", "1"]))["parallel"] == 1  # the serial engine


def test_the_benchmark_says_how_many_verdicts_and_scores_a_configuration_changed() -> None:
    from benchmarks.bench_embedded import agreement

    old = [{"verdict": "A"}, {"verdict": "B"}, {"verdict": "A"}]
    assert agreement(old, [{"verdict": "A"}, {"verdict": "A"}, {"verdict": "A"}], "verdict") == (
        "verdicts unchanged 2/3"
    )
    scores = agreement([{"score": 3.0}, {"score": 5.5}], [{"score": 3.0}, {"score": 4.75}], "score")
    assert scores == "scores unchanged 1/2, largest score change 0.75"


def test_without_reuse_every_prompt_is_read_whole_and_nothing_is_kept() -> None:
    runtime = ToyRuntime(n_seq=8, n_batch=8)
    scheduler = BatchScheduler(runtime, max_active=4, reuse=False)
    jobs = [job(p) for p in prompts(3, shared=30)]
    run_all(scheduler, jobs)
    for j in jobs:
        assert_right(j)
        assert j.reused == 0
    assert scheduler.kept() == {} and runtime.seqs == {}
    scheduler.close()


def test_prompt_lookup_drafts_change_no_answer_and_save_decode_calls() -> None:
    answers, calls = {}, {}
    for draft in (False, True):
        runtime = ToyRuntime(n_seq=6, n_batch=32)
        scheduler = BatchScheduler(runtime, max_active=2, draft=draft)
        jobs = [job(p, max_tokens=60) for p in prompts(6, seed=5)]
        run_all(scheduler, jobs)
        for j in jobs:
            assert_right(j)  # kept drafts are exactly the greedy tokens; the rest left no trace
        answers[draft], calls[draft] = [j.generated for j in jobs], len(runtime.batches)
        if draft:
            assert scheduler.drafted > scheduler.accepted > 0  # some guesses right, some wrong
        scheduler.close()
    assert answers[True] == answers[False]
    assert calls[True] < calls[False]


def test_lookup_drafts_follow_the_latest_earlier_occurrence() -> None:
    from cejudge_dspy.backbones.llamacpp._batch_jobs import lookup_drafts

    history = [4, 5, 6, 7, 8, 9, 1, 6, 7, 2, 3, 4, 5, 6, 7]
    assert lookup_drafts(history, 3) == [8, 9, 1]  # "4 5 6 7" seen at the start: what followed it
    history = [1, 6, 7, 8, 2, 9, 5, 6, 7, 8]
    assert lookup_drafts(history, 2) == [2, 9]  # no 4-token match; "6 7 8" was followed by 2 9
    assert lookup_drafts([1, 6, 7, 2, 9, 6, 7], 2) == []  # two tokens are too few to guess from
    assert lookup_drafts([4, 4, 4, 4], 5) == [4]  # the overlapping occurrence just before the tail


def test_drafts_only_while_at_most_draft_jobs_jobs_decode() -> None:
    """`draft_jobs` bounds when drafts are tried (make_lm's `draft_jobs`): 0 never, 1 only for a job that
    decodes alone; the answers are the same whatever the bound."""
    drafted, answers = {}, {}
    for bound in (0, 1, 2):
        runtime = ToyRuntime(n_seq=6, n_batch=32)
        scheduler = BatchScheduler(runtime, max_active=2, draft=True, draft_jobs=bound)
        jobs = [job(p, max_tokens=60) for p in prompts(6, seed=5)]
        run_all(scheduler, jobs)
        for j in jobs:
            assert_right(j)
        drafted[bound], answers[bound] = scheduler.drafted, [j.generated for j in jobs]
        scheduler.close()
    assert drafted[0] == 0
    assert 0 < drafted[1] < drafted[2]
    assert answers[0] == answers[1] == answers[2]
