"""What the batch scheduler (_batch_scheduler.py) works with: a job (one completion), the runtime that
evaluates tokens for it, and an optional store of prompt prefixes outside the KV cache."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


class Runtime(Protocol):
    n_batch: int  # tokens one decode call may take
    n_seq: int  # sequence ids 0..n_seq-1

    def decode(self, entries: list[tuple[int, int, int, bool]]) -> int:
        """Evaluate (token, position, sequence, wants logits) entries; 0 ok, 1 no room in the KV cache."""

    def sample(self, sampler: Any, index: int) -> int:
        """The token `sampler` picks from the logits of batch entry `index` (and records it)."""

    def logits(self, index: int) -> Any: ...
    def copy_prefix(self, src: int, dst: int, n: int) -> None: ...
    def drop(self, seq: int) -> None: ...
    def is_end(self, token: int) -> bool: ...
    def detokenize(self, tokens: list[int], prev: list[int]) -> bytes: ...
    def trim(self, seq: int, n: int) -> None:
        """Forget what sequence `seq` holds from position `n` on."""


class Prefixes(Protocol):
    """Prompt prefixes kept outside the KV cache (on disk, for the next process)."""

    def longest(self, prompt: list[int]) -> tuple[int, Any]:
        """How many leading tokens of `prompt` a kept prefix holds, and a key to restore it by."""

    def restore(self, key: Any, seq: int) -> list[int] | None:
        """Load the prefix into sequence `seq`; its tokens, or None when it could not be loaded."""

    def offer(self, job: Job) -> None:
        """A job's sequence holds exactly its prompt now: keep it if it starts a new prefix."""


class NoRoom(RuntimeError):
    """A single call needs more of the KV cache than there is."""


@dataclass(eq=False)
class Job:
    """One completion: a prompt in, tokens out, under its own sampler (penalties keep per-job history)."""

    prompt: list[int]
    max_tokens: int
    stop: list[str]
    make_sampler: Callable[[], Any]
    # A recorder is called with (input ids, logits) before each sampling, like a logits processor.
    make_recorder: Callable[[], Any] | None = None
    # The prompt's leading tokens that every call of its stage shares (its system turn; 0 when unknown):
    # the prefix store keeps a new family for a prompt whose system turn no stored prefix covers.
    stage_len: int = 0
    # A scoring job generates nothing: it reads `prompt` and keeps, in `logprobs`, the log probability of
    # every token from this index on given those before it (_answer_scorer.py's measure, in the batch).
    score_from: int | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start over (a job pushed out of a full KV cache runs again from its prompt)."""
        self.sampler = self.make_sampler()
        self.recorder = self.make_recorder() if self.make_recorder else None
        self.generated: list[int] = []
        self.kv: list[int] = []
        self.seq = -1
        self.reused = 0  # prompt tokens served by another sequence's prefix
        self.text = b""
        self.finish: str | None = None
        self.draft_len = 4  # prompt-lookup drafts to try next; grows while they are right
        self.logprobs: list[float] = []  # a scoring job's, one per token from `score_from` on

    @property
    def read_from(self) -> int:
        """The first position the job must evaluate itself, for its logits: the last prompt token, or for a
        scoring job the token before the first scored one (a shared prefix serves only what precedes it)."""
        return len(self.prompt) - 1 if self.score_from is None else max(0, self.score_from - 1)

    def wants_logits(self, pos: int) -> bool:
        """Whether a scoring job needs the logits at prompt position `pos` (they predict token pos + 1)."""
        return self.score_from is not None and self.score_from - 1 <= pos < len(self.prompt) - 1

    @property
    def evaluated(self) -> int:
        return len(self.prompt) - self.reused

    def todo(self) -> list[int]:
        """Tokens to evaluate next: the rest of the prompt, or the token sampled last."""
        return (self.prompt + self.generated)[len(self.kv) :]


def lookup_drafts(history: list[int], n: int, longest: int = 4, shortest: int = 3) -> list[int]:
    """Up to `n` tokens that followed the latest earlier occurrence of the history's last 4 (else 3) tokens.

    Why: a judge's outputs copy their inputs (a checklist quotes the response, a judgment repeats the
    checklist's questions), and where a copy is under way the next tokens are in the prompt already;
    llama.cpp's `lookup` example and transformers' `prompt_lookup_num_tokens` guess them the same way.
    Two-token matches were measured right about a third of the time on free text: too few to pay.
    """
    for size in range(longest, shortest - 1, -1):
        if len(history) <= size:
            continue
        tail = history[-size:]
        for start in range(len(history) - size - 1, -1, -1):
            if history[start : start + size] == tail:
                return history[start + size : start + size + n]
    return []
