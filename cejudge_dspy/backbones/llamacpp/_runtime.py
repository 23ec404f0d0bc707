"""llama.cpp seen from the batch scheduler: one context whose unified KV cache holds several sequences,
with the prompt built and sampled exactly as `Llama.create_chat_completion` does.

A small `llama_cpp.Llama` (a context of a few tokens) lends the model, the tokenizer, the GGUF's chat
template and its sampler chain (`Llama._init_sampler`: the repeat penalty over this completion's own
tokens, then greedy at temperature 0); the sequences live in a second context built here with
`n_seq_max` sequences and `kv_unified`, so a prefix copied from one sequence to another shares its
cells instead of copying them.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

# Wraps a raw context pointer for `LlamaSampler.sample`, which reads `.ctx`.
_Ctx = type("_Ctx", (), {})


def chat_formatter(llama: Any) -> Any:
    """The chat formatter `Llama.__init__` registers for a GGUF with a template (chat_template.default);
    KeyError when the GGUF has none."""
    from llama_cpp import llama_chat_format

    eos, bos = llama.token_eos(), llama.token_bos()
    return llama_chat_format.Jinja2ChatFormatter(
        template=llama.metadata["tokenizer.chat_template"],
        eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
        stop_token_ids=[eos],
    )


def chat_prompt(llama: Any, formatter: Any, messages: list[dict[str, str]]) -> tuple[list[int], list[str]]:
    """The prompt tokens and extra stop strings of `messages`, as `create_chat_completion` builds them."""
    result = formatter(messages=messages)
    tokens = llama.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)
    stop = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
    return list(tokens), stop


class LlamaRuntime:
    def __init__(self, llama: Any, *, kv_cells: int, n_seq: int, n_batch: int, n_threads: int) -> None:
        import llama_cpp as lc

        self._lc = lc
        self.llama = llama
        self.n_batch, self.n_seq = n_batch, n_seq
        params = lc.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = kv_cells, n_batch, n_batch
        params.n_seq_max, params.kv_unified = n_seq, True
        params.n_threads = params.n_threads_batch = n_threads
        self.ctx = lc.llama_init_from_model(llama._model.model, params)
        if not self.ctx:
            raise RuntimeError(
                f"llama.cpp could not make a context of {kv_cells} cells for {n_seq} sequences"
            )
        self._wrapped = _Ctx()
        self._wrapped.ctx = self.ctx  # type: ignore[attr-defined]
        self.memory = lc.llama_get_memory(self.ctx)
        self.batch = lc.llama_batch_init(n_batch, 0, 1)
        self.vocab = lc.llama_model_get_vocab(llama._model.model)
        self.n_vocab = int(lc.llama_vocab_n_tokens(self.vocab))
        self.formatter = chat_formatter(llama)
        self._seed_lock = threading.Lock()
        self._texts: Any = None

    def prompt(self, messages: list[dict[str, str]]) -> tuple[list[int], list[str]]:
        """The prompt tokens and extra stop strings, as `create_chat_completion` builds them."""
        return chat_prompt(self.llama, self.formatter, messages)

    def answer_tokens(self, messages: list[dict[str, str]], answer: str) -> tuple[list[int], list[int]]:
        """The tokens of `messages` up to `answer` as the assistant's turn, and those of the answer with its
        end of turn, as the serial engine's answer scorer splits them (_answer_scorer.py)."""
        if self._texts is None:
            from cejudge_dspy.backbones.llamacpp._answer_scorer import AnswerScorer

            self._texts = AnswerScorer(self.llama)  # its template and tokenizer only: no logits needed
        return self._texts.tokens(messages, answer)

    def sampler(self, options: dict[str, Any]) -> Any:
        """A sampler chain as `Llama.create_completion` makes one (grammar included, if given)."""
        with self._seed_lock:  # `_init_sampler` reads the seed from the Llama object
            if options.get("seed") is not None:
                self.llama.set_seed(int(options["seed"]))
            return self.llama._init_sampler(
                top_k=options.get("top_k", 40),
                top_p=options.get("top_p", 0.95),
                min_p=0.05,
                temp=options.get("temperature", 0.2),
                repeat_penalty=options.get("repeat_penalty", 1.0),
                frequency_penalty=options.get("frequency_penalty", 0.0),
                presence_penalty=options.get("presence_penalty", 0.0),
                grammar=options.get("grammar"),
            )

    def decode(self, entries: list[tuple[int, int, int, bool]]) -> int:
        b = self.batch
        b.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = token, pos, 1, logits
            b.seq_id[i][0] = seq
        return int(self._lc.llama_decode(self.ctx, b))

    def logits(self, index: int) -> np.ndarray:
        return np.ctypeslib.as_array(self._lc.llama_get_logits_ith(self.ctx, index), shape=(self.n_vocab,))

    def sample(self, sampler: Any, index: int) -> int:
        return int(sampler.sample(self._wrapped, index))

    def copy_prefix(self, src: int, dst: int, n: int) -> None:
        self._lc.llama_memory_seq_cp(self.memory, src, dst, 0, n)

    def drop(self, seq: int) -> None:
        self._lc.llama_memory_seq_rm(self.memory, seq, -1, -1)

    def trim(self, seq: int, n: int) -> None:
        self._lc.llama_memory_seq_rm(self.memory, seq, n, -1)

    def is_end(self, token: int) -> bool:
        return bool(self._lc.llama_vocab_is_eog(self.vocab, token))

    def detokenize(self, tokens: list[int], prev: list[int]) -> bytes:
        return bytes(self.llama.detokenize(tokens, prev_tokens=prev))

    def save_seq(self, seq: int) -> bytes:
        size = int(self._lc.llama_state_seq_get_size(self.ctx, seq))
        buf = (ctypes.c_uint8 * size)()
        written = int(self._lc.llama_state_seq_get_data(self.ctx, buf, size, seq))
        return bytes(buf)[:written]

    def load_seq(self, seq: int, data: bytes) -> bool:
        self.drop(seq)
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        return int(self._lc.llama_state_seq_set_data(self.ctx, buf, len(data), seq)) > 0

    def close(self) -> None:
        if self.ctx:
            self._lc.llama_batch_free(self.batch)
            self._lc.llama_free(self.ctx)
            self.ctx = None
