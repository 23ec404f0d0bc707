"""The options of a run's judge, declared once: `JudgeOptions`.

Each option is one field with its `Option` metadata: the flag and its help, the bounds of a number, which
methods and tasks have it, and what to say when it is given where it does not apply. From these fields
derive the CLI's flags (cli/_program_args.py builds them), a `--config` file's keys, the keyword arguments
every method's factory takes (`program_kwargs`), the checks (`check`), and the run identity that run.json
records and a resume compares (`identity`). Adding an option is one field here plus its use in a judge.

The options are method-neutral on purpose: `cejudge judge` and `cejudge evaluate` take one set of flags for
every method, and an option a method does not have is recorded as None in its run identity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from cejudge_dspy.errors import DeclaredOptions, InputError, Option, typed_mapping
from cejudge_dspy.judges._option_choices import (
    DEFAULT_GRADE_MARGIN,
    DEFAULT_TIE_BAND,
    DEFAULT_TIE_BREAKER,
    RULES,
    reference_default,
)
from cejudge_dspy.tasks import TaskSpec

Applies = Callable[["JudgeOptions", TaskSpec], bool]


def _option(default: Any, rule: str | None = None, **meta: Any) -> Any:
    """A field and its flag; `rule`: the name of its bounds or choices in `RULES` (the constructors' too)."""
    option = replace(RULES[rule], **meta) if rule else Option(**meta)
    return field(default=default, metadata={"option": option})


def _cejudge(o: JudgeOptions, spec: TaskSpec) -> bool:
    return o.method == "cejudge"


def _graded(o: JudgeOptions, spec: TaskSpec) -> bool:
    """Only CE-Judge's pairwise judge has a judgment to choose."""
    return o.method == "cejudge" and spec.mode == "pairwise"


def _referenced(o: JudgeOptions, spec: TaskSpec) -> bool:
    """CE-Judge's graded pairwise judgment, or its pointwise judge, can read a reference of its own."""
    return o.method == "cejudge" and (spec.mode == "pointwise" or o.judgment == "graded")


def _pointwise_cejudge(o: JudgeOptions, spec: TaskSpec) -> bool:
    return o.method == "cejudge" and spec.mode == "pointwise"


def _language_checked(o: JudgeOptions, spec: TaskSpec) -> bool:
    return _pointwise_cejudge(o, spec) and spec.check_response_language


def _likelihood_checked(o: JudgeOptions, spec: TaskSpec) -> bool:
    return _pointwise_cejudge(o, spec) and spec.check_translation_likelihood


def _ablation_refusal(o: JudgeOptions, spec: TaskSpec) -> str:
    return f"is an ablation of CE-Judge; --method {o.method} has no such stage"


def _on(value: bool | None) -> bool:
    """An on/off check: on unless turned off."""
    return value is not False


@dataclass(frozen=True)
class JudgeOptions(DeclaredOptions):
    """Everything a run's judge is built with besides its task and backbone (see the module docstring).

    `JudgeOptions()` is the default judge; `JudgeOptions(method="direct", orders="single")` another. The
    field order is the order of the run identity's entries."""

    method: str = _option(
        "cejudge",
        flag="--method",
        kind="text",
        in_identity=False,
        repeatable=True,
        help="cejudge (default), direct, checkeval, geval, likelihood (pairwise, on a backbone that scores "
        "a given text: its likelihood of each response as its own answer, no judgment call); repeated, a "
        "panel: one member per method (and per --lm)",
    )
    program: str = _option(
        "auto",
        flag="--program",
        kind="text",
        in_identity=False,
        help="auto (tuned program from optimized/ when present), base, or a saved program path",
    )
    orders: Literal["both", "single"] = _option(
        "both",
        rule="orders",
        # The likelihood judge scores each response on its own: it shows no order.
        applies=lambda o, spec: o.method != "likelihood",
        refusal=lambda o, spec: "--method likelihood scores each response on its own; it has no orders",
        help="pairwise: judge A/B and B/A (default) or only A/B as the paper did",
    )
    decision: Literal["probability", "argmax"] = _option(
        "probability",
        rule="decision",
        help="what decides a verdict or score: the judge's token probabilities (default; the argmax where a "
        "backbone gives none, said once) or its argmax answer; records keep both",
    )
    tie_band: float = _option(
        DEFAULT_TIE_BAND,
        rule="tie_band",
        help=f"pairwise, --decision probability: a tie when p(A) is within half this of 0.5 "
        f"(default {DEFAULT_TIE_BAND}; `cejudge calibrate DEV_RUN` picks one)",
    )
    judgment: Literal["graded", "pairwise"] = _option(
        "graded",
        rule="judgment",
        applies=_graded,
        help="CE-Judge pairwise: grade each response on its own and let the pairwise judgment (both "
        "orders) decide only pairs whose grades tie (graded, default), or the paper's pairwise judgment "
        "for every pair",
    )
    grade_margin: float = _option(
        DEFAULT_GRADE_MARGIN,
        rule="grade_margin",
        applies=_graded,
        help=f"--judgment graded, --decision probability: the gap between the two expected grades that "
        f"the grades must exceed to decide a pair without the tie-breaker (default {DEFAULT_GRADE_MARGIN}; "
        "0: any difference)",
    )
    tie_breaker: Literal["likelihood", "orders"] = _option(
        DEFAULT_TIE_BREAKER,
        rule="tie_breaker",
        applies=_graded,
        help="--judgment graded: what decides a pair whose expected grades are within --grade-margin: the "
        "backbone's likelihood of each response as its own answer (default; local GGUF backbones, the "
        "grades alone elsewhere) or the pairwise judgment in both orders",
    )
    reference: bool | None = _option(
        None,
        flag="--reference",
        kind="switch",
        applies=_referenced,
        recorded=lambda o, spec: reference_default(spec.mode) if o.reference is None else bool(o.reference),
        refusal=lambda o, spec: (
            f"needs CE-Judge with the graded judgment (pairwise) or a pointwise task; task '{spec.name}' "
            f"with --method {o.method} --judgment {o.judgment} has no stage to give it to"
        ),
        help="CE-Judge: the judge first writes its own short answer to the instruction (pairwise, --judgment "
        "graded: both grades read it) or its own translation of the source (pointwise translation items: the "
        "judgment reads it); one more LM call per item. Default: on for pointwise, off for pairwise "
        "(docs/measurements/embedded-obvious-items.md)",
    )
    translator: str = _option(
        "llm", flag="--translator", kind="text", help="llm (offline default), google, none"
    )
    concepts: bool = _option(
        True,
        flag="--no-concepts",
        kind="negated",
        group="ablations",
        applies=_cejudge,
        refusal=_ablation_refusal,
        help="no concepts stage: both checklist directions are written without concepts",
    )
    directions: Literal["both", "r2i", "i2r"] = _option(
        "both",
        rule="directions",
        group="ablations",
        applies=_cejudge,
        refusal=_ablation_refusal,
        help="checklist directions: both (default), only response->instruction (r2i) or only "
        "instruction->response (i2r)",
    )
    judge_on: Literal["original", "translated"] = _option(
        "original",
        rule="judge_on",
        group="ablations",
        applies=_cejudge,
        refusal=_ablation_refusal,
        help="the texts the judgment reads: the originals (default) or their English translations",
    )
    answers: bool | None = _option(
        None,
        flag="--answers",
        kind="switch",
        group="ablations",
        applies=_pointwise_cejudge,
        recorded=lambda o, spec: bool(o.answers),
        kwarg=bool,
        refusal=lambda o, spec: (
            f"is for CE-Judge's pointwise judgment; task '{spec.name}' with --method {o.method} has none "
            "(the graded pairwise judgment writes no answers, the paper's pairwise judgment always does)"
        ),
        help="pointwise: the judgment writes its answers to the checklist before its feedback (the paper's "
        "step); default off: it reads the checklist and answers it for itself (fewer tokens, the same "
        "scores; docs/measurements/embedded-obvious-items.md)",
    )
    language_check: bool | None = _option(
        None,
        flag="--language-check",
        kind="on_off",
        group="ablations",
        applies=_language_checked,
        recorded=lambda o, spec: _on(o.language_check),
        kwarg=_on,
        refusal=lambda o, spec: (
            f"task '{spec.name}' with --method {o.method} has no response-language check (CE-Judge on a "
            "pointwise task that declares check_response_language)"
        ),
        help="pointwise tasks that declare it: give a response surely in the wrong language the lowest "
        "level without an LLM call (default on)",
    )
    likelihood_check: bool | None = _option(
        None,
        flag="--likelihood-check",
        kind="on_off",
        group="ablations",
        applies=_likelihood_checked,
        recorded=lambda o, spec: _on(o.likelihood_check),
        kwarg=_on,
        refusal=lambda o, spec: (
            f"task '{spec.name}' with --method {o.method} has no translation-likelihood check (CE-Judge "
            "on a pointwise task that declares check_translation_likelihood)"
        ),
        help="pointwise translation tasks that declare it, on local GGUF backbones: give a translation the "
        "backbone finds implausible for its source (word salad) the lowest level without an LLM judgment "
        "(default on)",
    )

    @classmethod
    def identity_keys(cls) -> tuple[str, ...]:
        """The run identity's entries for the judge's options, in run.json's order."""
        keys = [name for name, opt in cls.options() if opt.in_identity]
        return (
            *keys[: keys.index("reference") + 1],
            "english_reference",
            *keys[keys.index("reference") + 1 :],
        )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], source: str) -> JudgeOptions:
        """Options from a `--config` file's table: field names as keys, TOML values typed as the fields
        are (`tie_band = 0.1`, `concepts = false`, `language_check = false`); a wrong key or value is one
        line naming `source` and the key."""
        return cls(**typed_mapping(cls.options(), values, source))

    def given(self) -> dict[str, Any]:
        """The options that differ from the defaults."""
        default = JudgeOptions()
        return {k: v for k, v in asdict(self).items() if v != getattr(default, k)}

    def check(self, spec: TaskSpec) -> None:
        """An option given where the run does not have it: one line each (the bounds were checked when
        the options were made)."""
        for name, opt in self.options():
            if opt.refusal is None or opt.applies is None or name not in self.given():
                continue
            if not opt.applies(self, spec):
                raise InputError(opt.refusal(self, spec), field=_flag_as_given(opt, getattr(self, name)))

    def program_kwargs(self) -> dict[str, Any]:
        """The keyword arguments every method's factory takes (each ignores those it has no use for)."""
        return {
            name: opt.kwarg(getattr(self, name)) if opt.kwarg else getattr(self, name)
            for name, opt in self.options()
            if name not in ("method", "program")
        }

    def identity(self, spec: TaskSpec) -> dict[str, Any]:
        """The run identity's entries for these options on `spec` (None where the run has no such option)."""
        out: dict[str, Any] = {}
        for name, opt in self.options():
            if not opt.in_identity:
                continue
            if opt.applies is not None and not opt.applies(self, spec):
                out[name] = None
            else:
                out[name] = opt.recorded(self, spec) if opt.recorded else getattr(self, name)
            if name == "reference":
                out["english_reference"] = self.english_reference(spec)
        return out

    def english_reference(self, spec: TaskSpec) -> str | None:
        """The stage whose text a pointwise CE-Judge judgment reads as its reference into English: stage 2's
        translation of the source when the LLM translates, else the reference stage's own (the pointwise
        judge's). None when the judgment writes no reference: --no-reference, or --judge-on translated."""
        if spec.mode != "pointwise" or not _referenced(self, spec):
            return None
        if not (reference_default(spec.mode) if self.reference is None else self.reference):
            return None
        if self.judge_on != "original":
            return None
        return "translate" if self.translator == "llm" else "reference translation"


def _flag_as_given(opt: Option, value: Any) -> str:
    if opt.kind == "switch" and value is False:
        return "--no-" + opt.flag.removeprefix("--")
    return opt.flag
