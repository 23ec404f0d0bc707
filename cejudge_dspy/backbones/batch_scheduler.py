"""Continuous batching for a llama.cpp context that holds several sequences: the calls in flight decode
together, one token each per step, and a new call starts from the longest prefix any sequence holds.

Why: on 2 CPU cores one decode step of the 1.5B model costs about as much for 4 sequences as for 1.8
(measured, benchmarks/bench_batch_decode.py: 14.3 tokens/s alone, 31.3 with 4 sequences), because a step
reads all the weights whatever the number of rows. A CE-Judge item makes its calls in parallel groups
(the concepts of instruction and responses, the four checklists, the grades of both orders), so a
serial engine leaves that throughput unused, and most of an item's time is now decoding.

The scheduler is pure Python over a small `Runtime` (batch_engine.py's wraps llama.cpp; the tests' a
toy model), so its bookkeeping is tested without a model. Invariant: `job.kv` lists exactly the tokens
whose keys and values the job's sequence holds, at positions 0..len-1.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, OrderedDict, deque

from cejudge_dspy.backbones.answer_scorer import token_logprob
from cejudge_dspy.backbones.batch_jobs import Job, NoRoom, Prefixes, Runtime, lookup_drafts
from cejudge_dspy.backbones.prefix_cache import common_prefix

# Drafts are verified only while at most this many jobs decode: each draft is another row of the batch,
# and on 2 cores a step of 4 rows costs 1.8 steps of one (benchmarks/bench_batch_decode.py).
DRAFT_JOBS = 2
MAX_DRAFT = 8

__all__ = ["BatchScheduler", "Job", "NoRoom"]


class BatchScheduler:
    """Runs jobs on a runtime, at most `max_active` at a time, in one thread of its own."""

    def __init__(
        self,
        runtime: Runtime,
        max_active: int = 4,
        prefixes: Prefixes | None = None,
        reuse: bool = True,
        draft: bool = False,
    ) -> None:
        self.runtime = runtime
        self.draft = draft  # prompt-lookup drafts, verified in the same decode call (see _verify)
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

    def _fail(self, jobs: list[Job], exc: BaseException) -> None:
        for job in jobs:
            if job.seq >= 0:  # what a failed batch left in its sequences is unknown: start clean
                with contextlib.suppress(Exception):
                    self.runtime.drop(job.seq)
            if job in self._active:
                self._active.remove(job)
            if job in self._pending:
                self._pending.remove(job)
            job.error = exc
            job.done.set()
        self._dirty, self._held = True, False

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

    def step(self) -> None:
        """One decode call: a token of every decoding job (with its drafts), then prompt chunks as room
        allows."""
        entries: list[tuple[int, int, int, bool]] = []
        chunks: list[tuple[Job, list[int], int | None, list[int]]] = []  # job, tokens, logits index, drafts
        decoding = sum(1 for j in self._active if j.generated and len(j.todo()) == 1)
        # Decoding jobs (one token to read) first, so a long prompt never holds them back.
        for job in sorted(self._active, key=lambda j: len(j.todo())):
            room = self.runtime.n_batch - len(entries)
            if room <= 0:
                break
            todo = job.todo()[:room]
            last = len(job.kv) + len(todo) == len(job.prompt) + len(job.generated)
            drafts = self._drafts(job, room - 1) if last and job.generated and decoding <= DRAFT_JOBS else []
            scoring = job.score_from is not None
            for k, token in enumerate(todo + drafts):
                wants = job.wants_logits(len(job.kv) + k) if scoring else last and k >= len(todo) - 1
                entries.append((token, len(job.kv) + k, job.seq, wants))
            index = len(entries) - len(todo) if scoring else len(entries) - 1 - len(drafts) if last else None
            chunks.append((job, todo, index, drafts))
        if not entries:
            return
        if (status := self.runtime.decode(entries)) != 0:
            if status != 1:
                raise RuntimeError(f"llama_decode failed ({status})")
            self._make_room()
            return
        # A scoring job's logits give no sequence a token: only completions count.
        self.rows[sum(index is not None and job.score_from is None for job, _, index, _ in chunks)] += 1
        for job, todo, index, drafts in chunks:
            if job.score_from is not None:
                self._score(job, todo, index)
                continue
            had_prompt = len(job.kv) >= len(job.prompt)
            job.kv.extend(todo)
            if not had_prompt and len(job.kv) >= len(job.prompt):
                self._dirty = True  # a job waiting for this prompt's prefix may start now
                if self.prefixes is not None:
                    self.prefixes.offer(job)
            if index is not None:
                self._sample(job, index)
                self._verify(job, index, drafts)

    def _score(self, job: Job, todo: list[int], first: int | None) -> None:
        """A scoring job's chunk was read: keep the log probability of each next token its logits predict;
        done once the whole text is read (nothing is generated, nothing offered to the disk store)."""
        assert first is not None
        for k in range(len(todo)):
            pos = len(job.kv) + k
            if job.wants_logits(pos):
                job.logprobs.append(token_logprob(self.runtime.logits(first + k), job.prompt[pos + 1]))
        job.kv.extend(todo)
        if len(job.kv) >= len(job.prompt):
            self._finish(job, "scored")

    def _drafts(self, job: Job, room: int) -> list[int]:
        """Tokens guessed from an earlier occurrence of the job's last few tokens (prompt lookup)."""
        n = min(job.draft_len, room, job.max_tokens - len(job.generated) - 1)
        return lookup_drafts(job.prompt + job.generated, n) if self.draft and n > 0 else []

    def _verify(self, job: Job, index: int, drafts: list[int]) -> None:
        """Keep the drafts greedy decoding agrees with: while the token just sampled is the next draft, that
        draft's keys and values are right and its logits give the token after it. Sampling stays one token
        at a time through the job's own sampler, so penalties and recorders see what they would have."""
        accepted = 0
        while accepted < len(drafts) and job.finish is None and job.generated[-1] == drafts[accepted]:
            job.kv.append(drafts[accepted])
            accepted += 1
            self._sample(job, index + accepted)
        if drafts:
            self.runtime.trim(job.seq, len(job.kv))  # the rest were guessed wrong: forget them
            self.drafted += len(drafts)
            self.accepted += accepted
            job.draft_len = min(2 * job.draft_len, MAX_DRAFT) if accepted == len(drafts) else max(1, accepted)

    def _make_room(self) -> None:
        """The KV cache is full: drop a kept prefix, or restart the newest job later."""
        if self._kept:
            seq, _ = self._kept.popitem(last=False)
            self.runtime.drop(seq)
            return
        if len(self._active) <= 1:  # nothing left to make room with: this call alone cannot fit
            job = self._active.pop()
            with self._cond:
                self._fail([job], NoRoom("one call needs more of the KV cache than the context holds"))
            return
        job = self._active.pop()
        self.runtime.drop(job.seq)
        job.reset()
        with self._cond:
            self._pending.appendleft(job)
            self._held = True

    def _sample(self, job: Job, index: int) -> None:
        if job.recorder is not None:
            job.recorder(job.prompt + job.generated, self.runtime.logits(index))
        token = self.runtime.sample(job.sampler, index)
        if self.runtime.is_end(token):
            return self._finish(job, "stop")
        job.generated.append(token)
        job.text = self.runtime.detokenize(job.generated, job.prompt)
        for stop in job.stop:
            if (at := job.text.find(stop.encode("utf-8"))) >= 0:
                job.text = job.text[:at]
                return self._finish(job, "stop")
        if len(job.generated) >= job.max_tokens:
            self._finish(job, "length")

    def _finish(self, job: Job, reason: str) -> None:
        job.finish = reason
        self._active.remove(job)
        if self.reuse:
            self._kept[job.seq] = job.kv
        else:
            self.runtime.drop(job.seq)
        self._dirty, self._held = True, False
        job.done.set()
