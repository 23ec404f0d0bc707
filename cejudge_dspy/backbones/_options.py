"""The backbone's settings, declared once: `BackboneOptions`.

Each setting is one field with its `Option` (the shared declaration of `JudgeOptions`' fields): its flag and
help, its kind, the bounds of a number. From these fields derive the CLI's backbone flags (cli/_common.py
builds them), a `--config` file's backbone keys, `make_lm`'s / `use_backbone`'s keyword arguments
(`kwargs`), the bounds checks (`Option.problem`, in the constructor), and the backbone's entries in a run's
identity (`identity`), which run.json records and a resume compares.

Light on purpose (no DSPy): the CLI builds its flags from it before any command runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from cejudge_dspy.errors import (
    DeclaredOptions,
    InputError,
    Option,
    known_keywords,
    typed_mapping,
)

# One judgment call of a small model on a loaded CPU server can take minutes
# (docs/measurements/server-road.md): the default lets such a server work, while one that never answers
# costs 5 minutes, not 600 s per attempt times four.
DEFAULT_TIMEOUT_S = 300.0
TIMEOUT_RANGE = (1.0, 3600.0)  # seconds one call may take, retries included
# llama.cpp's repeat penalty over the last 64 tokens: mild, so that a small model's JSON does not loop
# (a grammar does not stop a looping model), and the value the in-process engine used, so verdicts carry on.
DEFAULT_REPEAT_PENALTY = 1.1
MAX_PARALLEL = 12  # a local server's slots: past 4 the measured 2 cores were full; 12 leaves room for more
# The prompt format the judges ask a backbone in (`--adapter`): DSPy's ChatAdapter (`[[ ## field ## ]]`
# markers, with its JSON fallback) or JSONAdapter (one JSON object); `auto` is the backbone's own
# (`resolved_adapter`).
AdapterChoice = Literal["auto", "chat", "json"]
ADAPTERS: tuple[AdapterChoice, ...] = ("auto", "chat", "json")
# Temperatures above 2 are outside what the HTTP providers accept; llama.cpp's seed is a 32-bit unsigned
# number.
TEMPERATURE_RANGE = (0.0, 2.0)
SEED_RANGE = (0, 2**32 - 1)


def is_local(spec: Any) -> bool:
    """Whether a backbone spec names a local GGUF model the package serves (embedded or gguf:PATH)."""
    return isinstance(spec, str) and (spec.strip() == "embedded" or spec.strip().startswith("gguf:"))


def _option(default: Any, **meta: Any) -> Any:
    return field(default=default, metadata={"option": Option(group="backbone", **meta)})


@dataclass(frozen=True)
class BackboneOptions(DeclaredOptions):
    """The backbone a run judges with and how it is asked: `BackboneOptions(lm="simulated:0")`,
    `BackboneOptions(lm="hosted_vllm/M", api_base="http://127.0.0.1:8000/v1", temperature=0.2)`.

    The field order is the order of the run identity's backbone entries (the fields in it come first)."""

    lm: str = _option(
        "embedded",
        flag="--lm",
        kind="text",
        repeatable=True,
        help="embedded (default), gguf:PATH, llama-server/NAME with --api-base, or a dspy model string such "
        "as hosted_vllm/MODEL; repeated (evaluate, judge), a panel: one member per backbone (and per "
        "--method)",
    )
    api_base: str | None = _option(
        None,
        flag="--api-base",
        kind="text",
        optional=True,
        help="server URL for HTTP backbones, including /v1",
    )
    api_key: str | None = _option(
        None,
        flag="--api-key",
        kind="text",
        optional=True,
        in_identity=False,
        help="API key for HTTP backbones",
    )
    temperature: float = _option(
        0.0,
        flag="--temperature",
        kind="number",
        low=TEMPERATURE_RANGE[0],
        high=TEMPERATURE_RANGE[1],
        what="a sampling temperature",
        help="sampling temperature, {range} (default 0)",
    )
    # The run's seed: a run records it as its own (`seed`), not among the backbone's entries.
    seed: int = _option(
        42,
        flag="--seed",
        kind="number",
        whole=True,
        low=SEED_RANGE[0],
        high=SEED_RANGE[1],
        what="a random seed",
        in_identity=False,
        help="random seed, {range} (default 42)",
    )
    max_tokens: int = _option(
        1024,
        flag="--max-tokens",
        kind="number",
        whole=True,
        low=1,
        what="tokens",
        help="output tokens per call, {range} (default 1024)",
    )
    constrained: bool = _option(
        False,
        flag="--constrained",
        kind="flag",
        recorded=bool,
        help="llama.cpp's server (local GGUF models, llama-server/NAME): send the JSON schema, decoded as a "
        "grammar (always parses; slower where the model strays from it)",
    )
    # llama.cpp's sampler setting: only local GGUF models have one (elsewhere the identity records None).
    repeat_penalty: float = _option(
        DEFAULT_REPEAT_PENALTY,
        flag="--repeat-penalty",
        kind="number",
        low=0.0,
        low_open=True,
        what="a repeat penalty; 1 turns it off",
        applies=lambda o: is_local(o.lm),
        recorded=float,
        help=f"local GGUF models: their llama.cpp server's repeat penalty, {{range}} (default "
        f"{DEFAULT_REPEAT_PENALTY}; 1: off)",
    )
    # The prompt format as asked (auto, chat, json); what it resolved to is in each record's features.
    adapter: AdapterChoice = _option(
        "auto",
        flag="--adapter",
        choices=ADAPTERS,
        help="the prompt format: DSPy's chat adapter ([[ ## field ## ]] markers) or its JSON adapter; auto "
        "(default): json for llama.cpp's server (local GGUF models, llama-server/NAME), chat for other "
        "backbones. json suits a small model behind a server that does not follow the chat markers",
    )
    # A server that accepts a request and never answers ends the run in this time, not in the client's 600 s.
    timeout: float = _option(
        DEFAULT_TIMEOUT_S,
        flag="--timeout",
        kind="number",
        low=TIMEOUT_RANGE[0],
        high=TIMEOUT_RANGE[1],
        what="seconds",
        in_identity=False,
        help=f"HTTP backbones: seconds one call may take, retries included, {{range}} (default "
        f"{DEFAULT_TIMEOUT_S:g}); on a server the package started, seconds it may do no work while a call "
        "waits; a server that stops answering ends the run with one line, its records kept",
    )
    cache: bool = _option(
        True,
        flag="--no-cache",
        kind="negated",
        in_identity=False,
        help="do not read or write DSPy's response cache",
    )
    require_logprobs: bool = _option(
        False,
        flag="--require-logprobs",
        kind="flag",
        in_identity=False,
        help="stop with an error when the backbone gives no token probabilities, instead of falling back "
        "to the argmax answers (`cejudge backbones check` says what a server gives)",
    )
    parallel: int | None = _option(
        None,
        flag="--parallel",
        kind="number",
        whole=True,
        optional=True,
        low=1,
        high=MAX_PARALLEL,
        what="slots",
        in_identity=False,
        help="local GGUF models: their llama.cpp server's slots, the calls it decodes together, {range} "
        "(default 1; docs/measurements/local-server.md)",
    )

    @classmethod
    def help_of(cls, name: str) -> str:
        """A setting's help text, its range filled in."""
        opt = dict(cls.options())[name]
        return opt.help.replace("{range}", opt.describe())

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], source: str) -> BackboneOptions:
        """Settings from a `--config` file's table (field names as keys); a wrong key or value is one line
        naming `source` and the key (the nearest known key for a typo)."""
        return cls(**typed_mapping(cls.options(), values, source))

    def given(self) -> dict[str, Any]:
        """The settings that differ from the defaults."""
        default = BackboneOptions()
        return {k: v for k, v in asdict(self).items() if v != getattr(default, k)}

    def kwargs(self) -> dict[str, Any]:
        """`make_lm`'s, `check_backbone`'s and `use_backbone`'s keyword arguments (besides the spec, `lm`)."""
        return {
            "api_base": self.api_base,
            "api_key": self.api_key,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "cache": self.cache,
            "adapter": self.adapter,
            "timeout": float(self.timeout),
            **({"require_logprobs": True} if self.require_logprobs else {}),
            **({"constrained": True} if self.constrained else {}),
            # Passed only when set: HTTP backbones refuse a sampler setting they do not have.
            **(
                {"repeat_penalty": float(self.repeat_penalty)}
                if self.repeat_penalty != DEFAULT_REPEAT_PENALTY
                else {}
            ),
            # Passed only when given: HTTP backbones refuse a setting they do not have.
            **({"parallel": self.parallel} if self.parallel is not None else {}),
        }

    @classmethod
    def from_kwargs(cls, lm: str = "embedded", **kwargs: Any) -> BackboneOptions:
        """The settings of `make_lm(lm, **kwargs)` (a `kwargs()` dict read back); a name that is none of
        them is one line naming the nearest."""
        return cls(lm=lm, **{k: v for k, v in kwargs.items() if not (k == "repeat_penalty" and v is None)})

    def identity(self) -> dict[str, Any]:
        """The run identity's backbone entries, in run.json's order (None where the backbone has no such
        setting)."""
        out: dict[str, Any] = {}
        for name, opt in self.options():
            if not opt.in_identity:
                continue
            if opt.applies is not None and not opt.applies(self):
                out[name] = None
            else:
                out[name] = opt.recorded(getattr(self, name)) if opt.recorded else getattr(self, name)
        return out


# A keyword the options do not have is one line naming the nearest one (`temprature`), not a TypeError.
BackboneOptions.__init__ = known_keywords(BackboneOptions.__init__)  # type: ignore[method-assign]


def backbone_options(
    backbone: Any, option: str = "backbone", kinds: str = "a BackboneOptions or a backbone spec"
) -> BackboneOptions:
    """A backbone as its settings: a `BackboneOptions` as it is, a spec such as "simulated:0" as
    `BackboneOptions(lm=spec)` (the default settings). Anything else is one line naming `option` and what
    it takes (`kinds`). The one reading of a `backbone=` argument: `EvaluateOptions`, `optimize` and the
    bridges' judges go through it."""
    if isinstance(backbone, BackboneOptions):
        return backbone
    if isinstance(backbone, str):
        return BackboneOptions(lm=backbone)
    raise InputError(f"must be {kinds}, got {backbone!r}", option=option)
