"""How to configure llama.cpp's server for judging: one run, the same items, one setting changed at a time.

    python -m benchmarks.bench_local_server --items 6 --method cejudge --concurrency 1
    python -m benchmarks.bench_local_server --variants base,no-ram-cache,split-kv --json /tmp/local.json

The embedded model is served by llama.cpp's own server (`backbones._local_server`). Each variant is that
server with one setting changed from the package's defaults (`base`):

* `no-ram-cache`: no prompt cache in host memory (`cache_ram_mib = 0`), so a finished call's prompt state is
  not kept for the next call sharing its prefix;
* `split-kv`: each slot its own part of the KV cache (`kv_unified = false`) instead of one shared pool;
* `one-slot`: one slot (calls queue) instead of `DEFAULT_SLOTS`;
* `no-schema`: the JSON adapter describes the format in the prompt instead of sending the schema (reached as
  `openai/NAME`, which DSPy knows no schema support for), so nothing is grammar-constrained;
* `one-thread`: one thread instead of the machine's cores;
* `spin`: waiting threads spin (llama.cpp's default `poll` 50 and OpenMP's default wait) instead of sleeping;

Every variant judges the same first N obvious pairs (`benchmarks/obvious/pairwise.jsonl`) with the chosen
method at the chosen concurrency, DSPy's cache off, on a server of its own started before the clock (and a
warm-up call), the variants in turn. Printed per variant: wall seconds, items per minute and its ratio to
`base`, prompt tokens the server evaluated against those it was sent (the rest came from its caches), LM
calls, verdicts right, and verdicts equal to `base`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy
import httpx

HERE = Path(__file__).resolve().parent
OBVIOUS = HERE / "obvious" / "pairwise.jsonl"
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {},
    "no-ram-cache": {"cache_ram_mib": 0},
    "split-kv": {"kv_unified": False},
    "one-slot": {"slots": 1},
    "no-schema": {"schema": False},
    "one-thread": {"threads": 1},
    "spin": {"spin": True},
}


def evaluated_tokens(api_base: str) -> tuple[int, int]:
    """(prompt tokens evaluated, tokens predicted) so far, from the server's /metrics counters."""
    text = httpx.get(api_base.removesuffix("/v1") + "/metrics", timeout=30).text
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name.strip()] = float(value)
    return int(values.get("llamacpp:prompt_tokens_total", 0)), int(
        values.get("llamacpp:tokens_predicted_total", 0)
    )


def run_variant(name: str, items: Sequence[Any], method: str, concurrency: int) -> dict[str, Any]:
    from cejudge_dspy.backbones import _local_server as local
    from cejudge_dspy.backbones import make_lm, resolve_gguf
    from cejudge_dspy.backbones._builders import gguf_model_name
    from cejudge_dspy.evaluate import judge_items
    from cejudge_dspy.judges import build_program

    settings = dict(VARIANTS[name])
    schema = settings.pop("schema", True)
    path = resolve_gguf()
    alias = gguf_model_name(path).split("/", 1)[1]
    config = dataclasses.replace(local.ServerConfig(model=str(path), alias=alias, metrics=True), **settings)
    server = local.LocalServer(config)
    api_base = server.start()
    try:
        spec = f"llama-server/{alias}" if schema else f"openai/{alias}"
        lm = make_lm(spec, api_base=api_base, cache=False)
        adapter = dspy.JSONAdapter()
        lm("Reply with OK.", max_tokens=2)  # warm-up, before the clock
        before = evaluated_tokens(api_base)
        program = build_program("chat", method)
        with tempfile.TemporaryDirectory() as tmp, dspy.context(lm=lm, adapter=adapter):
            started = time.monotonic()
            records = asyncio.run(
                judge_items(
                    items, program, Path(tmp) / "results.jsonl", task="chat", method=method,
                    concurrency=concurrency,
                )
            )  # fmt: skip
            wall = time.monotonic() - started
        after = evaluated_tokens(api_base)
    finally:
        server.stop()
    sent = sum(r.result.usage.prompt_tokens for r in records if r.result is not None)
    calls = sum(r.result.usage.calls for r in records if r.result is not None)
    verdicts = {r.id: (r.result.verdict if r.status == "ok" and r.result else None) for r in records}
    right = sum(verdicts[r.id] == r.item.label for r in records)
    return {
        "variant": name,
        "wall": wall,
        "per_minute": 60 * len(records) / wall,
        "evaluated": after[0] - before[0],
        "sent": sent,
        "predicted": after[1] - before[1],
        "calls": calls,
        "right": right,
        "items": len(records),
        "verdicts": verdicts,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=6, help="the first N obvious pairs (default 6)")
    p.add_argument("--method", default="cejudge")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    from cejudge_dspy.data import load_items
    from cejudge_dspy.tasks import load_task

    items = load_items(load_task("chat"), str(OBVIOUS), fields={"id": "id"}, limit=args.items, first=True)
    rows = []
    for name in args.variants.split(","):
        if name not in VARIANTS:
            p.error(f"unknown variant {name!r}; choose from {', '.join(VARIANTS)}")
        row = run_variant(name, items, args.method, args.concurrency)
        rows.append(row)
        line = f"{row['wall']:.1f} s, {row['per_minute']:.2f} items/min, {row['right']}/{row['items']} right"
        print(f"{name}: {line}", flush=True)
    base = next((r for r in rows if r["variant"] == "base"), rows[0])
    print(f"\n{len(items)} obvious pairs, --method {args.method}, --concurrency {args.concurrency}\n")
    head = "| variant | wall s | items/min | vs base | prompt tokens evaluated/sent | output tokens "
    print(head + "| calls | right | same verdicts as base |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        same = sum(r["verdicts"].get(k) == v for k, v in base["verdicts"].items())
        print(
            f"| {r['variant']} | {r['wall']:.1f} | {r['per_minute']:.2f} "
            f"| {r['per_minute'] / base['per_minute']:.2f}x "
            f"| {r['evaluated']}/{r['sent']} | {r['predicted']} | {r['calls']} | {r['right']}/{r['items']} "
            f"| {same}/{len(base['verdicts'])} |"
        )  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
