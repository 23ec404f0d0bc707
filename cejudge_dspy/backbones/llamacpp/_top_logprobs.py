"""Token probabilities from llama.cpp without `logits_all`: a logits processor that keeps the top-k
log probabilities of every generated token, in the OpenAI chat `logprobs.content` shape DSPy reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TopLogprobs:
    """A llama.cpp logits processor that records, per generated token, the top-k log probabilities.

    llama-cpp-python returns logprobs only from a model built with `logits_all=True` (logits for every
    prompt token: an n_ctx x vocabulary array, 5 GB for Qwen at 8k context) and sorts the whole
    vocabulary in Python per token. Here each step's logits pass through once: a log-softmax and a
    partial sort in numpy. The token generated at a step is the last input id of the next step; its
    own logprob is read from the previous step's logits, the only array kept.
    """

    def __init__(self, k: int) -> None:
        self.k = max(int(k), 1)
        self.steps: list[tuple[Any, Any]] = []  # (top ids, their logprobs) per step
        self.chosen: list[tuple[int, float]] = []  # (id, logprob) of the token each step produced
        self.n_prompt: int | None = None
        self._previous: Any = None  # (logits - logsumexp) of the last step

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np

        if self.n_prompt is None:
            self.n_prompt = len(input_ids)
        elif self._previous is not None:
            token = int(input_ids[-1])
            self.chosen.append((token, float(self._previous[token])))
        logits = np.asarray(scores, dtype=np.float64)
        top = logits.max()
        logprobs = logits - (top + np.log(np.exp(logits - top).sum()))
        k = min(self.k, len(logprobs))
        ids = np.argpartition(-logprobs, k - 1)[:k]
        ids = ids[np.argsort(-logprobs[ids])]
        self.steps.append((ids, logprobs[ids]))
        self._previous = logprobs
        return scores

    def content(
        self, detokenize: Callable[[list[int], list[int]], bytes], prompt_ids: list[int]
    ) -> list[dict[str, Any]]:
        """The OpenAI chat `logprobs.content` list for the tokens whose successor step was seen."""
        out: list[dict[str, Any]] = []
        history = list(prompt_ids)
        for (token, logprob), (ids, lps) in zip(self.chosen, self.steps, strict=False):

            def text(i: int) -> str:
                return detokenize([int(i)], history).decode("utf-8", errors="ignore")

            alternatives = [
                {"token": text(i), "logprob": float(lp), "bytes": None}
                for i, lp in zip(ids, lps, strict=True)
            ]
            out.append(
                {"token": text(token), "logprob": logprob, "bytes": None, "top_logprobs": alternatives}
            )
            history.append(token)
        return out
