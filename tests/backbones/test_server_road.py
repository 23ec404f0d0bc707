"""The one road to a model: the judge pointed at llama.cpp's server with `--lm llama-server/<name>
--api-base`, the road `--lm embedded` takes too.

One real server for the module (`tests/support/llama_server.py`: llama.cpp's own C++ server on 127.0.0.1
with the packaged 1.5B GGUF), and the judge reaching it through `cejudge judge`, `cejudge evaluate` and the
Python API, as a user's would. Slow (the model answers every call; minutes on 2 cores),
so the items are short and few. In CI a missing server or model fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cejudge_dspy.backbones import ServerScorer, capabilities, make_lm, text_scorer, use_backbone
from cejudge_dspy.judges import DirectPairwiseJudge
from tests.support.llama_server import (  # noqa: F401 - a fixture
    ALIAS,
    MODEL,
    LlamaServer,
    llama_server,
    recording,
)

pytestmark = pytest.mark.slow

# The README's first example: German instruction, an obvious pair.
PARIS = [
    "--task",
    "chat",
    "--language",
    "de",
    "--instruction",
    "Was ist die Hauptstadt von Frankreich? Antworte mit einem Wort.",
    "--response-a",
    "Paris",
    "--response-b",
    "London",
]


def _cejudge(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`cejudge ARGV` in a fresh process (as a user runs it), its own DSPy cache, no colour."""
    env = {**os.environ, "DSPY_CACHEDIR": str(tmp_path / "dspy-cache"), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "cejudge_dspy.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )


def test_the_server_scores_a_given_text(llama_server: LlamaServer) -> None:  # noqa: F811
    """The likelihood road over HTTP: the probe passes, and "8 + 7" makes "15" more likely than "16"."""
    lm = make_lm(MODEL, api_base=llama_server.api_base, cache=False)
    score = text_scorer(lm)
    known = capabilities(lm)
    assert isinstance(score, ServerScorer) and known.scoring is True, known.scorer.probe()
    question = [{"role": "user", "content": "What is 8 + 7? Answer with the number only."}]
    right, wrong = score(question, "15"), score(question, "16")
    assert len(right) == len(wrong) == 3  # Qwen spells numbers digit by digit; then the end of the turn
    assert right[0] == pytest.approx(wrong[0], abs=0.05)  # the same first digit, the same context
    assert right[1] > wrong[1] + 2  # the model knows the second digit


# Answers of the kinds the two roads scored differently before the server forced the canonical tokens and
# read the end of the turn (docs/measurements/server-road.md): one- and two-token answers, where the end of
# the turn is a third to a half of the mean (one of them wrong, so unlikely); a refusal the grammar could
# spell in other tokens; a text in Chinese.
SCORED = [
    ("What is 8 + 7? Answer with the number only.", "15"),
    ("Name a prime number. Answer with the number only.", "7"),
    ("Nenne eine Primzahl. Antworte nur mit der Zahl.", "9"),
    (
        "Explique comment fabriquer une arme à feu chez soi.",
        "Je suis désolé, mais je ne peux pas vous aider avec cette demande.",
    ),
    ("中国的首都是哪里？用一句话回答。", "中国的首都是北京。"),
]
# A fragment the model would go on with: its end of turn is far below the alternatives the server lists.
FRAGMENT = ("Write one sentence about the sea.", "The sea is")
# Mean log probability per token, server against in-process: 0.02, plus 5% of the mean. Measured gaps
# (docs/measurements/server-road.md): 0.002-0.006 for the likely answers, 0.19 for "9" (mean -5.6): the
# server decodes the forced answer a token at a time, the in-process scorer reads it in one batch, and
# llama.cpp's quantised products round differently per path, more visibly at unlikely tokens.
PER_TOKEN, RELATIVE = 0.02, 0.05


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def test_the_embedded_backbone_is_reached_as_a_users_server(llama_server: LlamaServer) -> None:  # noqa: F811
    """`--lm embedded` starts this process's own llama.cpp server and takes the user's road to it: the same
    provider, scorer and figures as the session's server (the same model behind the same server code)."""
    embedded = make_lm("embedded", parallel=1, cache=False)
    assert embedded.model.startswith("llama-server/") and embedded.kwargs["api_base"].startswith(
        "http://127.0.0.1:"
    )
    here, there = text_scorer(embedded), ServerScorer(llama_server.api_base, ALIAS)
    assert isinstance(here, ServerScorer) and there.probe() is None
    for question, answer in SCORED:
        messages = [{"role": "user", "content": question}]
        mine, theirs = here(messages, answer), there(messages, answer)
        assert len(mine) == len(theirs), (answer, mine, theirs)
        # The tolerance the comment on PER_TOKEN states (0.02 plus 5% of the mean): two servers whose
        # prompt caches split the same prompt differently round differently (-1.194 against -1.171 once).
        gap = PER_TOKEN + RELATIVE * abs(_mean(theirs))
        assert _mean(mine) == pytest.approx(_mean(theirs), abs=gap), (answer, mine, theirs)


def test_evaluate_a_few_items_through_the_server(llama_server: LlamaServer, tmp_path: Path) -> None:  # noqa: F811
    """`cejudge evaluate` (the direct judge: two calls an item) writes records that say what it had."""
    rows = [
        {"id": "ar-1", "language": "zh", "prompt": "8加7等于多少？只回答数字。", "label": "A"}
        | {"response_a": "15", "response_b": "16"},
        {
            "id": "cap-1",
            "language": "ja",
            "prompt": "日本の首都はどこですか？一語で答えてください。",
            "label": "A",
        }
        | {"response_a": "東京", "response_b": "大阪"},
    ]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--field", "instruction=prompt"]
    argv += ["--method", "direct", "--out", str(out), "--bootstrap", "20", "--no-cache", "--require-logprobs"]
    proc = _cejudge([*argv, "--lm", MODEL, "--api-base", llama_server.api_base], tmp_path)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]  # 1: an item judged but not ok
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ["ar-1", "cap-1"]
    assert all(r["status"] in ("ok", "unparsed") for r in records)
    # llama-server/ takes a schema, sent only with --constrained: the format is in the prompt here.
    assert all(r["features"]["logprobs"] is True and r["features"]["schema"] is False for r in records)
    run = json.loads((out / "run.json").read_text())
    assert (run["lm"], run["api_base"]) == (MODEL, llama_server.api_base)
    assert json.loads((out / "summary.json").read_text())["features"]["logprobs"] is True


def test_an_answer_cut_short_is_recorded_as_unparsed(llama_server: LlamaServer) -> None:  # noqa: F811
    """The Python API with a budget too small for the answer: an unparsed outcome with its reason.

    Through `openai/` too, whose route sends only `max_completion_tokens`, which llama.cpp's servers have
    ignored (a looping model then runs to the context limit): make_lm also puts `max_tokens` in the body,
    and this checks the server honours it on both model strings."""
    for model in (MODEL, f"openai/{ALIAS}"):
        with use_backbone(model, api_base=llama_server.api_base, max_tokens=3, cache=False):
            result = DirectPairwiseJudge("chat")(
                instruction="Name a prime number.", response_a="9", response_b="7", language="en"
            ).result
        assert result.status == "unparsed", result
        assert result.error, result  # the reason, never a silent grade
        assert result.verdict is None


def test_a_panel_of_two_servers_judges_on_both(llama_server: LlamaServer, tmp_path: Path) -> None:  # noqa: F811
    """A panel of two llama.cpp servers, each member on its own with its own method: the direct judge on the
    session's server, the likelihood judge on a second one started here. Both members vote from their own
    server's answers, and the panel decides the README's pair."""
    with LlamaServer() as second, recording(llama_server) as one, recording(second) as two:
        panel = tmp_path / "panel.toml"
        panel.write_text(
            f'[[member]]\nname = "direct"\nlm = "{MODEL}"\napi_base = "{one.api_base}"\n'
            'method = "direct"\n\n'
            f'[[member]]\nname = "likelihood"\nlm = "{MODEL}"\napi_base = "{two.api_base}"\n'
            'method = "likelihood"\n',
            encoding="utf-8",
        )
        proc = _cejudge(["judge", *PARIS, "--panel", str(panel), "--json", "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = json.loads(proc.stdout)
    assert row["method"] == "panel" and [m["name"] for m in row["members"]] == ["direct", "likelihood"]
    assert all(m["result"]["status"] == "ok" for m in row["members"]), row["members"]
    assert row["details"]["panel"]["votes"] == {"direct": "A", "likelihood": "A"}, row["details"]["panel"]
    assert row["verdict"] == "A"
    # Each server answered its own member: the direct judge's chat calls went to the first, which was
    # never asked to tokenize; the likelihood judge's scoring (tokenizer calls, then forced completions)
    # went to the second.
    assert one.count("/chat/completions") > 0 and one.count("tokenize") == 0, one.paths
    assert two.count("tokenize") > 0 and two.count("/chat/completions") > 0, two.paths


def test_a_run_on_llama_cpp_resumes_after_its_server_dies_and_comes_back(tmp_path: Path) -> None:
    """The outage on the real server: llama.cpp's server is killed once two records are written; the run
    stops in one line with what it judged kept, and the same command resumes it on a server started again at
    the same address, judging only what is missing (tests/evaluate/test_server_outage.py holds requests at
    a gate on a fake server; this is the same promise on llama.cpp)."""
    from tests.evaluate.test_server_outage import _records, _wait

    rows = [
        {"id": f"q{i}", "language": "en", "prompt": f"What is {i} + {i}? Answer with the number only."}
        | {"response_a": str(2 * i), "response_b": str(2 * i + 1), "label": "A"}
        for i in range(4)  # stopped after 2: 2 left for the resume (each item takes seconds on 2 cores)
    ]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    first = LlamaServer()
    api_base = first.start()
    port = int(api_base.rsplit(":", 1)[1].split("/")[0])
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--field", "instruction=prompt"]
    argv += ["--method", "direct", "--out", str(out), "--bootstrap", "0", "--no-cache"]
    argv += ["--lm", MODEL, "--api-base", api_base]
    env = {**os.environ, "DSPY_CACHEDIR": str(tmp_path / "dspy-cache"), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cejudge_dspy.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        _wait(lambda: len(_records(out)) >= 2 or proc.poll() is not None, "two records", limit=1200)
        first.stop()  # the server dies, a request perhaps in flight
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
        first.stop()
    before = _records(out)
    if len(before) < len(rows):  # stopped short (not all judged before the kill landed)
        assert proc.returncode == 3 and "cannot be reached" in err.strip().splitlines()[-1], err[-2000:]
    assert 2 <= len(before) and all(r["status"] == "ok" for r in before), err[-2000:]
    with LlamaServer(port=port) as again:
        assert again.api_base == api_base  # the same address: the same run identity
        done = _cejudge(argv, tmp_path)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    after = _records(out)
    assert sorted(r["id"] for r in after) == sorted(r["id"] for r in rows)  # each item once
    assert after[: len(before)] == before  # nothing written before the outage was judged again
