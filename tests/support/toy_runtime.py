"""A toy model behind the batch scheduler's `Runtime` interface: the next token is a fixed function of the
tokens a sequence holds, so any completion has one right answer, computable without the scheduler.

It keeps every sequence's tokens by position and refuses a decode whose positions are not contiguous, so
a bookkeeping slip in the scheduler (a prefix copied short, a token read twice) fails loudly instead of
changing an answer by chance. Capacity counts cells without sharing: stricter than llama.cpp.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

VOCAB = 40
END = 0


def next_token(tokens: list[int]) -> int:
    """The toy model: a token from the last one, shifted every 25 positions, so outputs run in short
    cycles that prompt-lookup drafts guess right, until a shift makes a guess wrong; END once in a while."""
    return (tokens[-1] * 7 + 3 + len(tokens) // 25) % VOCAB


def reference(prompt: list[int], max_tokens: int, stop: list[str]) -> tuple[bytes, str, list[int]]:
    """What a serial decoder answers: text, finish reason, tokens."""
    generated: list[int] = []
    while True:
        token = next_token(prompt + generated)
        if token == END:
            return text_of(generated), "stop", generated
        generated.append(token)
        text = text_of(generated)
        for s in stop:
            if (at := text.find(s.encode())) >= 0:
                return text[:at], "stop", generated
        if len(generated) >= max_tokens:
            return text, "length", generated


def text_of(tokens: list[int]) -> bytes:
    return bytes(97 + t % 26 for t in tokens)


class GreedySampler:
    def __init__(self) -> None:
        self.accepted: list[int] = []


class ToyRuntime:
    def __init__(self, n_seq: int = 8, n_batch: int = 16, capacity: int = 10_000) -> None:
        self.n_seq, self.n_batch, self.capacity = n_seq, n_batch, capacity
        self.n_vocab = VOCAB
        self.seqs: dict[int, list[int]] = {}
        self.rows: dict[int, np.ndarray] = {}
        self.decoded = 0  # tokens evaluated in all
        self.batches: list[int] = []  # sequences per decode call
        self.fail_next: int | None = None
        self.closed = False
        self.lock = threading.Lock()  # one decoding thread is the contract: catch a second one

    def prompt(self, messages: list[dict[str, str]]) -> tuple[list[int], list[str]]:
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages)
        return [1 + ord(c) % (VOCAB - 1) for c in text], []

    def answer_tokens(self, messages: list[dict[str, str]], answer: str) -> tuple[list[int], list[int]]:
        """The chat's tokens, then the answer's and an end of turn (as `prompt` spells characters)."""
        return self.prompt(messages)[0], [1 + ord(c) % (VOCAB - 1) for c in answer] + [END]

    def sampler(self, options: dict[str, Any]) -> GreedySampler:
        return GreedySampler()

    def decode(self, entries: list[tuple[int, int, int, bool]]) -> int:
        assert self.lock.acquire(blocking=False), "two threads decoded at once"
        try:
            if self.fail_next is not None:
                status, self.fail_next = self.fail_next, None
                return status
            if sum(map(len, self.seqs.values())) + len(entries) > self.capacity:
                return 1
            self.rows.clear()
            for i, (token, pos, seq, logits) in enumerate(entries):
                held = self.seqs.setdefault(seq, [])
                assert pos == len(held), f"sequence {seq}: position {pos} after {len(held)} tokens"
                held.append(token)
                if logits:
                    row = np.full(VOCAB, -1.0)
                    row[next_token(held)] = 3.0
                    self.rows[i] = row
            self.decoded += len(entries)
            self.batches.append(len({e[2] for e in entries}))
            return 0
        finally:
            self.lock.release()

    def logits(self, index: int) -> np.ndarray:
        return self.rows[index]

    def sample(self, sampler: GreedySampler, index: int) -> int:
        token = int(np.argmax(self.rows[index]))
        sampler.accepted.append(token)
        return token

    def copy_prefix(self, src: int, dst: int, n: int) -> None:
        assert not self.seqs.get(dst), f"copy into sequence {dst}, which holds tokens"
        assert len(self.seqs[src]) >= n
        self.seqs[dst] = list(self.seqs[src][:n])

    def drop(self, seq: int) -> None:
        self.seqs.pop(seq, None)

    def trim(self, seq: int, n: int) -> None:
        if seq in self.seqs:  # llama.cpp, too, takes a trim of a dropped sequence
            del self.seqs[seq][n:]

    def is_end(self, token: int) -> bool:
        return token == END

    def detokenize(self, tokens: list[int], prev: list[int]) -> bytes:
        return text_of(tokens)

    def save_seq(self, seq: int) -> bytes:
        return np.asarray(self.seqs[seq], dtype=np.int32).tobytes()

    def load_seq(self, seq: int, data: bytes) -> bool:
        self.seqs[seq] = np.frombuffer(data, dtype=np.int32).tolist()
        return True

    def close(self) -> None:
        self.closed = True
