"""The batched llama.cpp engine (`--parallel N`, N > 1): DSPy's engine contract over the batch scheduler, so
the calls a judgment makes together (and those of items judged concurrently) decode together
(_batch_scheduler.py).

It answers like `LlamaCppEngine` (_engine.py), whose loading and lock it inherits (answer scoring is
a job of its own scheduler here):
the same chat template, sampler chain, stop rules, token budget and `logprobs.content`. What differs is
when tokens are computed, not which: a sequence's logits come from a batch of several rows, whose
arithmetic may differ from a single row's in the last bits (benchmarks/bench_embedded.py counts the
verdicts that changed).
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from dspy import lm15
from dspy.clients.engines.base import validate_request

from cejudge_dspy.backbones.llamacpp._batch_jobs import Job, NoRoom
from cejudge_dspy.backbones.llamacpp._batch_scheduler import BatchScheduler
from cejudge_dspy.backbones.llamacpp._batch_steps import DRAFT_JOBS
from cejudge_dspy.backbones.llamacpp._engine import LlamaCppEngine
from cejudge_dspy.backbones.llamacpp._prefix_cache import common_prefix, system_turn
from cejudge_dspy.backbones.llamacpp._requests import chat_kwargs
from cejudge_dspy.backbones.llamacpp._state_store import StateStore
from cejudge_dspy.backbones.llamacpp._top_logprobs import TopLogprobs

# Measured on 2 cores (1.5B model, benchmarks/experiments/bench_batch_decode.py;
# docs/measurements/speed-and-cost.md): decode throughput 14.3 tokens/s for one sequence, 19.6 for 2, 31.3 for
# 4, 32.8 for 8: past 4 the cores are full.
BATCH_PARALLEL = 4
# Local GGUF models run the batched engine unless told (`--parallel 1`: the serial one). Until the graded
# judgment's likelihood tie-breaker, the serial engine was the default: the verdicts of close pairs follow the
# last bits of a decode, and the batched engine's came out 53/60 against 55/60 on the obvious pairs
# (p = 0.69). With close pairs left to the likelihood, the batched engine got 60/60
# (docs/measurements/embedded-obvious-items.md), and it measured 1.65x faster per pairwise judgment than the
# serial engine on 2 December 2026 (docs/measurements/speed-and-cost.md).
DEFAULT_PARALLEL = BATCH_PARALLEL
N_SEQ = 16  # sequence ids: the running calls plus finished ones kept for their prefixes


class SequenceStates:
    """One KV state per prompt prefix family on disk (_state_store.py's rules), per sequence."""

    def __init__(self, runtime: Any, directory: Path) -> None:
        self.runtime = runtime
        self.store = StateStore(directory, state_type=SimpleNamespace)

    def longest(self, prompt: list[int]) -> tuple[int, Any]:
        path, n = self.store.longest(np.asarray(prompt, dtype=np.int64), common_prefix)
        return n, path

    def restore(self, key: Any, seq: int) -> list[int] | None:
        state = self.store.load(key)
        if state is None:
            return None
        if not self.runtime.load_seq(seq, state.llama_state):
            self.runtime.drop(seq)
            return None
        return [int(t) for t in state.input_ids[: state.n_tokens]]

    def offer(self, job: Job) -> None:
        tokens = np.asarray(job.prompt, dtype=np.int64)
        if not self.store.wants(tokens, common_prefix, cover=job.stage_len):
            return
        blob = self.runtime.save_seq(job.seq)
        self.store.save(
            SimpleNamespace(
                input_ids=tokens.astype(np.intc),
                n_tokens=len(tokens),
                llama_state=blob,
                llama_state_size=len(blob),
                seed=0,
                scores=np.empty((0, self.runtime.n_vocab), dtype=np.single),  # only its width is kept
            )
        )


class BatchedLlamaEngine(LlamaCppEngine):
    """`LlamaCppEngine` whose completions run through a `BatchScheduler` (`parallel` at a time)."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        parallel: int = BATCH_PARALLEL,
        reuse_prefixes: bool = True,
        draft: bool = False,
        draft_jobs: int = DRAFT_JOBS,
        runtime_factory: Any = None,
        **options: Any,
    ) -> None:
        super().__init__(model_path, **options)
        self.parallel = parallel
        self.reuse_prefixes = reuse_prefixes  # False: every prompt is read whole (make_lm's cache off)
        self.draft = draft  # prompt-lookup drafts verified in the batch (_batch_steps.py)
        self.draft_jobs = draft_jobs  # ... while at most this many jobs decode
        self._runtime_factory = runtime_factory  # tests pass a toy model
        self._runtime: Any = None
        self._scheduler: BatchScheduler | None = None

    def _load_locked(self) -> Any:
        if self._runtime is not None:
            return self._runtime
        return self._announced(self._load_runtime)

    def _load_runtime(self) -> Any:
        if self._runtime_factory is not None:
            runtime = self._runtime_factory()
        else:
            from cejudge_dspy.backbones.llamacpp._runtime import LlamaRuntime

            # The Llama object lends model, tokenizer, template and samplers; its own context stays tiny.
            self._llama = self._build(n_ctx=64, n_batch=8)
            # Room for the running calls at full length plus the kept prefixes (28 KB a cell for 1.5B).
            runtime = LlamaRuntime(
                self._llama, kv_cells=2 * self.n_ctx, n_seq=N_SEQ, n_batch=512, n_threads=self.n_threads
            )
        prefixes = SequenceStates(runtime, self.prompt_state_dir) if self.prompt_state_dir else None
        self._scheduler = BatchScheduler(
            runtime,
            max_active=self.parallel,
            prefixes=prefixes,
            reuse=self.reuse_prefixes,
            draft=self.draft,
            draft_jobs=self.draft_jobs,
        )
        self._runtime = runtime
        return runtime

    def complete(self, request: lm15.Request) -> lm15.Response:
        validate_request(request)
        kwargs = chat_kwargs(request)
        response_format = kwargs.pop("response_format", None)
        with self._lock:
            runtime = self._load_locked()
            scheduler = self._scheduler
        assert scheduler is not None
        prompt, template_stop = runtime.prompt(kwargs["messages"])
        if len(prompt) >= self.n_ctx:  # llama.cpp's own wording, as the serial engine raises it
            raise lm15.ContextLengthError(
                f"Requested tokens ({len(prompt)}) exceed context window of {self.n_ctx}", provider="llamacpp"
            )
        options = {k: kwargs[k] for k in kwargs if k not in ("messages", "max_tokens", "stop")}
        if self.repeat_penalty != 1.0:
            options["repeat_penalty"] = self.repeat_penalty
        if self.constrained and response_format is not None:
            from llama_cpp.llama_chat_format import _grammar_for_response_format

            options["grammar"] = _grammar_for_response_format(response_format)
        k = request.config.logprobs
        job = Job(
            prompt=prompt,
            max_tokens=min(kwargs["max_tokens"], self.n_ctx - len(prompt)),
            stop=list(kwargs["stop"]) + template_stop,
            make_sampler=lambda: runtime.sampler(options),
            make_recorder=(lambda: TopLogprobs(k or 1)) if k is not None else None,
            stage_len=system_turn(lambda m: runtime.prompt(m)[0], kwargs["messages"], prompt),
        )
        started = time.perf_counter()
        scheduler.submit(job).done.wait()
        if job.error is not None:
            if isinstance(job.error, NoRoom):
                raise lm15.ContextLengthError(str(job.error), provider="llamacpp") from job.error
            raise job.error
        return self._response(request, runtime, job, kwargs, started)

    def answer_logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        """Token log probabilities of `answer` to the chat `messages`, as the serial engine's answer scorer
        gives them (_answer_scorer.py), read by this engine's own scheduler beside the calls in flight: no
        second model instance and its logits buffer, logits only at the answer's positions, and the
        instruction's prefix shared with any sequence that holds it. Raises ValueError when the text
        does not fit a call's context."""
        with self._lock:
            runtime = self._load_locked()
            scheduler = self._scheduler
        assert scheduler is not None
        prompt, tokens = runtime.answer_tokens(messages, answer)
        if len(prompt) + len(tokens) > self.n_ctx:
            raise ValueError(f"{len(prompt) + len(tokens)} tokens do not fit the context of {self.n_ctx}")
        job = Job(
            prompt=prompt + tokens, max_tokens=0, stop=[], make_sampler=lambda: None, score_from=len(prompt)
        )
        scheduler.submit(job).done.wait()
        if isinstance(job.error, NoRoom):
            raise ValueError(str(job.error)) from job.error
        if job.error is not None:
            raise job.error
        return job.logprobs

    def _response(
        self, request: lm15.Request, runtime: Any, job: Job, kwargs: dict[str, Any], started: float
    ) -> lm15.Response:
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": job.text.decode("utf-8", errors="ignore")},
            "logprobs": None,
            "finish_reason": job.finish,
        }
        if job.recorder is not None:
            content = job.recorder.content(runtime.detokenize, job.prompt)
            choice["logprobs"] = {"content": content, "refusal": None}
        n_prompt, n_out = len(job.prompt), len(job.generated)
        raw = {
            "id": f"chatcmpl-{uuid.uuid4()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": n_prompt,
                "completion_tokens": n_out,
                "total_tokens": n_prompt + n_out,
            },
        }
        if self.call_log is not None:
            self.call_log.append(
                {
                    "prompt": n_prompt,
                    "evaluated": job.evaluated,
                    "output": n_out,
                    "seconds": time.perf_counter() - started,
                    "system": kwargs["messages"][0]["content"] if kwargs["messages"] else "",
                }
            )
        return lm15.response_from_openai_chat(raw, model=request.model)

    def close(self) -> None:
        with self._lock:
            scheduler, self._scheduler = self._scheduler, None
            runtime, self._runtime = self._runtime, None
        if scheduler is not None:
            scheduler.close()
        if runtime is not None:
            runtime.close()
        super().close()  # the Llama that lent the model
