"""Token log probabilities of a *given* answer under a local GGUF model: one forward pass, no generation.

The likelihood check (`judges/_likelihood.py`) uses it to ask how plausible a translation is, to the
backbone itself, as an answer to "translate this source" (Prism-src / GPTScore style);
`benchmarks/experiments/likelihood_probe.py` measured it with this same code. It needs a `Llama` built with
`logits_all=True` (one logits row per position), so it is a second, small-context instance beside the serial
engine's generating one: the weights are memory-mapped from the same file, the logits buffer is `n_ctx` x
vocabulary floats (about 1.2 GB for Qwen2.5 at the default 2048). The batched engine needs no second
instance: it scores an answer as a job of its own scheduler, with logits only at the answer's positions
(_batch_engine.py), through `split_answer` and `token_logprob` below.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

SCORER_N_CTX = 2048
# Rendered once as the assistant's content and cut there: what precedes it is the prompt, and the text
# that closes its turn (Qwen's <|im_end|>) is scored with the answer, so a fragment that should go on
# is less likely than a finished text. An invisible separator that no template or text contains.
_MARKER = "\u2063ANSWER\u2063"


class AnswerScorer:
    """Scores answers with `llama` (a `llama_cpp.Llama` made with `logits_all=True`)."""

    def __init__(self, llama: Any) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llama = llama
        eos = llama.detokenize([llama.token_eos()]).decode("utf-8", "ignore")
        self.template = Jinja2ChatFormatter(
            llama.metadata["tokenizer.chat_template"], eos_token=eos, bos_token=""
        )

    def split(self, messages: list[dict[str, str]], answer: str) -> tuple[str, str]:
        """The rendered prompt up to the answer, and the answer with the template's end-of-turn text."""
        return split_answer(lambda m: self.template(messages=m).prompt, messages, answer)

    def tokens(self, messages: list[dict[str, str]], answer: str) -> tuple[list[int], list[int]]:
        """The prompt's tokens and the scored tokens (the answer and its end of turn)."""
        head, scored = self.split(messages, answer)
        tokenize = self.llama.tokenize
        return (
            list(tokenize(head.encode("utf-8"), add_bos=False, special=True)),
            list(tokenize(scored.encode("utf-8"), add_bos=False, special=True)),
        )

    def logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        """log p(token | everything before it) for every token of `answer` (and its end of turn).

        Raises ValueError when prompt and answer do not fit the scorer's context."""
        prompt, tokens = self.tokens(messages, answer)
        llama = self.llama
        if len(prompt) + len(tokens) > llama.n_ctx():
            raise ValueError(
                f"{len(prompt) + len(tokens)} tokens do not fit the scorer's context of {llama.n_ctx()}"
            )
        llama.reset()
        llama.eval(prompt + tokens)
        logits = np.asarray(llama.scores[: len(prompt) + len(tokens)], dtype=np.float64)
        # The position before a token predicts it.
        return [token_logprob(logits[len(prompt) + i - 1], token) for i, token in enumerate(tokens)]


def split_answer(
    render: Callable[[list[dict[str, str]]], str], messages: list[dict[str, str]], answer: str
) -> tuple[str, str]:
    """The chat template's text up to `answer` as the assistant's turn, and `answer` with the text that
    closes that turn (`render`: messages -> the template's text)."""
    head, _, tail = render([*messages, {"role": "assistant", "content": _MARKER}]).partition(_MARKER)
    # A template may append a generation prompt after the assistant turn; only its own turn counts.
    end = tail.split("\n", 1)[0] if tail else ""
    return head, answer + end


def token_logprob(row: Any, token: int) -> float:
    """log softmax(row)[token], in double precision (a logits row over the vocabulary)."""
    row = np.asarray(row, dtype=np.float64)
    top = row.max()
    return float(row[token] - (top + math.log(np.exp(row - top).sum())))
