"""Token log probabilities of a *given* answer under a local GGUF model: one forward pass, no generation.

`likelihood_check.py` uses it to ask how plausible a translation is, to the backbone itself, as an answer
to "translate this source" (Prism-src / GPTScore style); `benchmarks/likelihood_probe.py` measured it with
this same code. It needs a `Llama` built with `logits_all=True` (one logits row per position), so it is a
second, small-context instance beside the generating one: the weights are memory-mapped from the same file,
the logits buffer is `n_ctx` x vocabulary floats (about 1.2 GB for Qwen2.5 at the default 2048).
"""

from __future__ import annotations

import math
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
        rendered = self.template(messages=[*messages, {"role": "assistant", "content": _MARKER}]).prompt
        head, _, tail = rendered.partition(_MARKER)
        # A template may append a generation prompt after the assistant turn; only its own turn counts.
        end = tail.split("\n", 1)[0] if tail else ""
        return head, answer + end

    def logprobs(self, messages: list[dict[str, str]], answer: str) -> list[float]:
        """log p(token | everything before it) for every token of `answer` (and its end of turn).

        Raises ValueError when prompt and answer do not fit the scorer's context."""
        head, scored = self.split(messages, answer)
        llama = self.llama
        prompt = llama.tokenize(head.encode("utf-8"), add_bos=False, special=True)
        tokens = llama.tokenize(scored.encode("utf-8"), add_bos=False, special=True)
        if len(prompt) + len(tokens) > llama.n_ctx():
            raise ValueError(
                f"{len(prompt) + len(tokens)} tokens do not fit the scorer's context of {llama.n_ctx()}"
            )
        llama.reset()
        llama.eval(prompt + tokens)
        logits = np.asarray(llama.scores[: len(prompt) + len(tokens)], dtype=np.float64)
        out = []
        for i, token in enumerate(tokens):
            row = logits[len(prompt) + i - 1]  # the position before a token predicts it
            top = row.max()
            out.append(float(row[token] - (top + math.log(np.exp(row - top).sum()))))
        return out
