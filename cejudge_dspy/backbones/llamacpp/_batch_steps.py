"""The decode step of the batch scheduler (_batch_scheduler.py), and how a job ends.

`DecodeSteps` holds what happens inside one llama decode call: which tokens of the running jobs go into the
batch (with prompt-lookup drafts), reading the logits back (sampling a completion's next token, verifying
its drafts, keeping a scoring job's log probabilities), making room when the KV cache is full, and
finishing or failing a job. `BatchScheduler` subclasses it and adds the queue, the thread and admission
(which sequence a new job gets, and which prefix it copies).

Why separate: the two halves meet only at the scheduler's state. Admission decides where a job starts,
under the scheduler's lock; a step evaluates what was admitted, outside it, in the scheduler's thread.
Together they outgrew one readable file. The state (the running, pending and kept sequences) is set up
by `BatchScheduler.__init__`; the annotations below name what a step reads and writes. The invariant is
the scheduler's: `job.kv` lists exactly the tokens whose keys and values the job's sequence holds, at
positions 0..len-1.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, OrderedDict, deque

from cejudge_dspy.backbones.llamacpp._answer_scorer import token_logprob
from cejudge_dspy.backbones.llamacpp._batch_jobs import Job, NoRoom, Prefixes, Runtime, lookup_drafts

# Drafts are verified only while at most this many jobs decode (the scheduler's `draft_jobs`): each draft
# is another row of the batch, and on 2 cores a step of 4 rows costs 1.8 steps of one
# (benchmarks/experiments/bench_batch_decode.py). With 1 they go only to a call that decodes alone (a
# pointwise judgment's score, a stage's tail): faster on both kinds of judgment, where drafts for up to two
# jobs had made the German example pair slower (docs/measurements/speed-and-cost.md).
DRAFT_JOBS = 1
MAX_DRAFT = 8


class DecodeSteps:
    """One decode call at a time over the running jobs; the state is `BatchScheduler`'s (its __init__)."""

    runtime: Runtime
    prefixes: Prefixes | None
    reuse: bool
    draft: bool
    draft_jobs: int
    drafted: int
    accepted: int
    rows: Counter[int]
    _pending: deque[Job]
    _active: list[Job]
    _kept: OrderedDict[int, list[int]]
    _cond: threading.Condition
    _dirty: bool
    _held: bool

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
            drafting = last and job.generated and decoding <= self.draft_jobs
            drafts = self._drafts(job, room - 1) if drafting else []
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
