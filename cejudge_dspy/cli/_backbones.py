"""`cejudge backbones check --lm ... --api-base ...`: ask a backbone one question and say which of the
features the judges use it gives (token probabilities, scoring of a given text, a JSON schema), in one table.

Run it before pointing a long run at a server: a backbone without token probabilities decides by the
argmax answers, one that cannot score a given text leaves close pairs to the grades alone
(`--require-logprobs` makes the first an error in a run). The API key is `--api-key`, else what litellm
reads from the environment (OPENAI_API_KEY for `openai/` models).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from cejudge_dspy.cli._common import add_backbone_args, backbone_flags, command_secrets
from cejudge_dspy.errors import BackboneError

# What a judge does with each feature and without it: the table's last column.
CONSEQUENCE = {
    "logprobs": ("verdicts and grades from token probabilities", "argmax answers only"),
    "scoring": ("likelihood tie-breaker and check", "close pairs decided by the grades alone"),
    "schema": ("structured output under the schema", "the format described in the prompt"),
}


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("backbones", help="ask a backbone which features the judges can use")
    actions = p.add_subparsers(dest="action", required=True)
    check = actions.add_parser(
        "check", help="ask one question and print which features it gives (logprobs, scoring, schema)"
    )
    check.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_backbone_args(check)
    check.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    from rich.table import Table
    from rich.text import Text

    from cejudge_dspy.backbones import backbone_failure, check_features, error_line, make_lm
    from cejudge_dspy.cli.display import console
    from cejudge_dspy.runs import public_url, redact_text

    # A check must reach the backbone itself, and asks once: no retries, each bounded by --timeout.
    backbone = dataclasses.replace(backbone_flags(args), cache=False)
    lm = make_lm(backbone.lm, **backbone.kwargs(), num_retries=0)
    try:
        checks = check_features(lm)
    except BackboneError:
        raise
    except Exception as exc:  # unreachable, a rejected key, an unknown model, no answer: one line
        explained = backbone_failure(exc, backbone.lm, api_base=backbone.api_base)
        why = error_line(exc, limit=200)
        raise (explained or BackboneError(f"backbone '{backbone.lm}' failed: {why}")) from exc
    # What the server said goes into the evidence: no secret of the command in it (runs._redact).
    secrets = command_secrets(args)
    checks = [dataclasses.replace(c, detail=redact_text(c.detail, secrets)) for c in checks]
    out = console()
    where = public_url(backbone.api_base)  # never its credentials
    if args.json:
        out.print_json(json.dumps({"lm": backbone.lm, "api_base": where} | _as_dict(checks)))
        return 0
    table = Table(title=f"{backbone.lm}" + (f" at {where}" if where else ""))
    for column in ("feature", "available", "evidence", "what the judges do"):
        table.add_column(column, overflow="fold")
    for check in checks:
        with_it, without_it = CONSEQUENCE[check.name]
        mark = Text("yes", style="green") if check.available else Text("no", style="red")
        table.add_row(check.name, mark, check.detail, with_it if check.available else without_it)
    out.print(table)
    return 0


def _as_dict(checks: list[Any]) -> dict[str, Any]:
    return {
        "features": {c.name: c.available for c in checks},
        "evidence": {c.name: c.detail for c in checks},
    }
