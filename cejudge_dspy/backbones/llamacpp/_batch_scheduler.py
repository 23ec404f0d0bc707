"""Continuous batching for a llama.cpp context that holds several sequences: the calls in flight decode
together, one token each per step, and a new call starts from the longest prefix any sequence holds.

Why: on 2 CPU cores one decode step of the 1.5B model costs about as much for 4 sequences as for 1.8
(measured, benchmarks/experiments/bench_batch_decode.py: 14.3 tokens/s alone, 31.3 with 4 sequences;
docs/measurements/speed-and-cost.md), because a step
reads all the weights whatever the number of rows. A CE-Judge item makes its calls in parallel groups
(the concepts of instruction and responses, the four checklists, the grades of both orders), so a
serial engine leaves that throughput unused, and most of an item's time is now decoding.

The scheduler is pure Python over a small `Runtime` (_batch_engine.py's wraps llama.cpp; the tests' a
toy model), so its bookkeeping is tested without a model. Invariant: `job.kv` lists exactly the tokens
whose keys and values the job's sequence holds, at positions 0..len-1.

This module holds the queue, the thread and admission (which sequence a job gets, which prefix it copies);
the decode step itself, and how a job finishes or fails, are in _batch_steps.py.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, deque

from cejudge_dspy.backbones.llamacpp._batch_jobs import Job, Prefixes, Runtime
from cejudge_dspy.backbones.llamacpp._batch_steps import DRAFT_JOBS, DecodeSteps
from cejudge_dspy.backbones.llamacpp._prefix_cache import common_prefix


class BatchScheduler(DecodeSteps):
    """Runs jobs on a runtime, at most `max_active` at a time, in one thread of its own."""

    def __init__(
        self,
        runtime: Runtime,
        max_active: int = 4,
        prefixes: Prefixes | None = None,
        reuse: bool = True,
        draft: bool = False,
        draft_jobs: int = DRAFT_JOBS,
    ) -> None:
        self.runtime = runtime
        self.draft = draft  # prompt-lookup drafts, verified in the same decode call (_batch_steps.py)
        self.draft_jobs = draft_jobs  # ... only while at most this many jobs decode
        self.drafted = self.accepted = 0
        self.reuse = reuse  # False: no prefix is shared or kept, every prompt is read whole
        # Two ids stay free of running jobs: one for a restored prefix, one to evict into.
        self.max_active = max(1, min(max_active, runtime.n_seq - 2))
        self.prefixes = prefixes
        self._pending: deque[Job] = deque()
        self._active: list[Job] = []
        # Finished sequences kept for their prefixes, least recently used first: seq -> tokens held.
        self._kept: OrderedDict[int, list[int]] = OrderedDict()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        # Admission is reconsidered only when it can change: a job came, finished or read its prompt.
        self._dirty = True
        # Decode calls by the number of sequences that got a token from them (the slow test reads it).
        self.rows: Counter[int] = Counter()
        # Set when a job was pushed out of a full cache: nothing starts until a running job ends.
        self._held = False

    def submit(self, job: Job, *more: Job) -> Job:
        """Queue jobs (several at once: none starts before all are queued); returns the first."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the batch scheduler is closed")
            self._pending.extend((job, *more))
            self._dirty = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="llama-batch", daemon=True)
                self._thread.start()
            self._cond.notify()
        return job

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()

    def kept(self) -> dict[int, list[int]]:
        """Sequences held for their prefixes (tests read it)."""
        return dict(self._kept)

    # -- the loop ---------------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and not self._pending and not self._active:
                    self._cond.wait()
                if self._closed:
                    self._fail(self._active + list(self._pending), RuntimeError("the engine was closed"))
                    return
                if self._dirty and not self._held:
                    self._dirty = False
                    for job in list(self._pending):
                        if len(self._active) >= self.max_active:
                            break
                        if not self._waits_for_prefix(job):
                            self._pending.remove(job)
                            self._admit(job)
            try:
                self.step()
            except Exception as exc:  # the jobs in that batch fail; no job may wait forever
                with self._cond:
                    self._fail(list(self._active), exc)

    def _free_seq(self, keep: int) -> int:
        """A sequence id for a new job; `keep` (the prefix it copies from) is never the one dropped."""
        used = {j.seq for j in self._active} | set(self._kept)
        for seq in range(self.runtime.n_seq):
            if seq not in used:
                return seq
        seq = next(s for s in self._kept if s != keep)  # the least recently used kept prefix goes
        del self._kept[seq]
        self.runtime.drop(seq)
        return seq

    def _best_source(self, prompt: list[int]) -> tuple[int, int]:
        """The sequence holding the longest prefix of `prompt`, and its length."""
        best, best_len = -1, 0
        if not self.reuse:
            return best, best_len
        sources = [(j.seq, j.kv) for j in self._active] + list(self._kept.items())
        for seq, tokens in sources:
            if (n := common_prefix(tokens, prompt)) > best_len:
                best, best_len = seq, n
        return best, best_len

    def _waits_for_prefix(self, job: Job) -> bool:
        """Whether a running job is still reading a longer prefix of this job's prompt than any sequence
        holds: calls made together (the four checklists) share their stage's instructions, read once.
        The wait is short (a step reads up to n_batch prompt tokens) and costs no throughput."""
        if not self.reuse:
            return False
        held = self._best_source(job.prompt)[1]
        return any(
            len(j.kv) < len(j.prompt) and min(common_prefix(j.prompt, job.prompt), job.read_from) > held
            for j in self._active
        )

    def _admit(self, job: Job) -> None:
        best, best_len = self._best_source(job.prompt)
        if self.prefixes is not None:
            stored_len, key = self.prefixes.longest(job.prompt)
            if stored_len > best_len:
                seq = self._free_seq(keep=best)
                if (tokens := self.prefixes.restore(key, seq)) is not None:
                    self._kept[seq] = tokens
                    best, best_len = seq, common_prefix(tokens, job.prompt)
        job.seq = self._free_seq(keep=best)
        best_len = min(best_len, job.read_from)  # a token whose logits are needed is read by the job
        if best_len > 0:
            self.runtime.copy_prefix(best, job.seq, best_len)
            if best in self._kept:
                self._kept.move_to_end(best)
        job.kv, job.reused = job.prompt[:best_len], best_len
        self._active.append(job)
