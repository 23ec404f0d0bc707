"""The hostile corpus's broken-server cases (issue #49): what a model server that answers wrongly, echoes the
key, or never answers does to `evaluate`, `judge`, `calibrate` and `backbones check`.

Each case starts a fake server (`server.HostileServer`, or the gated server where records must be written
before it stalls), runs one command in-process against it, and checks what the run must end with: one clear
line, or an honest outcome recorded; never a traceback, a hang, a bare NaN, a key or a silent grade.
`run_server_case` returns the outcome; `check` raises AssertionError naming what went wrong.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.bad_inputs import Case, good_data
from tests.support.hostile.server import MODEL

KEY = "sk-hostile-1234567890"  # the --api-key every case sends; no output may hold it
URL_KEY = "urlsecret-0987654321"  # the password in an --api-base with credentials
_JUDGE = [
    "judge",
    "--task",
    "chat",
    "--instruction",
    "Name a prime.",
    "--response-a",
    "9",
    "--response-b",
    "7",
]


@dataclass
class Outcome:
    """What one command did: its exit code, stdout, stderr, the folder it ran in, and the exception that
    escaped it (None when it returned)."""

    code: int | None
    out: str
    err: str
    folder: Path
    escaped: str | None = None

    @property
    def lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

    def run_dir(self) -> Path:
        return self.folder / "run"

    def records(self) -> list[dict[str, Any]]:
        return [strict(line) for line in (self.run_dir() / "results.jsonl").read_text().splitlines() if line]

    def texts(self) -> str:
        """Everything the command printed and wrote (every file under its folder but the data)."""
        files = [
            p for p in self.folder.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".html")
        ]
        return (
            self.out
            + self.err
            + "".join(p.read_text(errors="replace") for p in files if p.name != "good.jsonl")
        )


def strict(text: str) -> Any:
    """JSON as a strict reader reads it: a bare NaN or Infinity is an error."""

    def refuse(name: str) -> Any:
        raise ValueError(f"bare {name} in JSON")

    return json.loads(text, parse_constant=refuse)


@dataclass
class ServerCase:
    name: str
    mode: str  # the HostileServer mode, or "gated-stall" (the gated server, stalling after 2 records)
    argv: Callable[[Path, str], list[str]]  # (folder, api_base) -> the cejudge arguments
    check: Callable[[Outcome], None]
    api_base: Callable[[str], str] = field(default=lambda base: base)  # the --api-base given, from the real


def run_cli(argv: list[str], folder: Path) -> Outcome:
    from cejudge_dspy.cli import main

    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
    except BaseException as exc:  # noqa: BLE001 - what escapes is the finding
        return Outcome(None, out.getvalue(), err.getvalue(), folder, f"{type(exc).__name__}: {exc}")
    return Outcome(code, out.getvalue(), err.getvalue(), folder)


def run_server_case(case: ServerCase, folder: Path) -> Outcome:
    from tests.support.gated_server import GatedServer
    from tests.support.hostile.server import HostileServer

    folder.mkdir(parents=True, exist_ok=True)
    if case.mode.startswith("gated"):
        with GatedServer() as gated:
            results = folder / "run" / "results.jsonl"
            if case.mode == "gated-stall":
                # Two records on disk, then every later request waits at the closed gate until it stops.
                gated.hold_when = lambda: results.exists() and len(results.read_text().splitlines()) >= 2
            return run_cli(case.argv(folder, case.api_base(gated.api_base)), folder)
    with HostileServer(case.mode) as server:
        return run_cli(case.argv(folder, case.api_base(server.api_base)), folder)


# --- the commands --------------------------------------------------------------------------------------


def evaluate(*extra: str, n: int = 3, data: str | None = None) -> Callable[[Path, str], list[str]]:
    def argv(d: Path, base: str) -> list[str]:
        data_file = d / data if data else good_data(d, n)
        return [
            "evaluate",
            "--task",
            "chat",
            "--method",
            "direct",
            "--data",
            str(data_file),
            "--out",
            str(d / "run"),
            "--lm",
            MODEL,
            "--api-base",
            base,
            "--api-key",
            KEY,
            "--no-cache",
            "--bootstrap",
            "0",
            *extra,
        ]

    return argv


def judge(*extra: str) -> Callable[[Path, str], list[str]]:
    return lambda d, base: [
        *_JUDGE,
        "--lm",
        MODEL,
        "--api-base",
        base,
        "--api-key",
        KEY,
        "--no-cache",
        *extra,
    ]


def check_backbone(*extra: str) -> Callable[[Path, str], list[str]]:
    return lambda d, base: ["backbones", "check", "--lm", MODEL, "--api-base", base, "--api-key", KEY, *extra]


def then_calibrate(d: Path, base: str) -> list[str]:
    """An evaluate run against the NaN server (its labels from the data), then `calibrate` of it."""
    data = d / "labelled.jsonl"
    rows = [
        {"prompt": f"q{i}", "chosen": "a", "rejected": "b", "language": "en", "label": "A"} for i in range(3)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first = run_cli(evaluate("--field", "label=label", data=data.name)(d, base), d)
    assert first.escaped is None and first.code in (0, 1), (first.escaped, first.err[-800:])
    return ["calibrate", str(d / "run")]


# --- the checks ----------------------------------------------------------------------------------------


def no_traceback(o: Outcome) -> None:
    assert o.escaped is None, f"escaped: {o.escaped}\n{o.err[-1500:]}"
    assert "Traceback" not in o.err and "Traceback" not in o.out, o.err[-1500:]


def one_line(*words: str, code: int | None = None) -> Callable[[Outcome], None]:
    """A non-zero exit with one `error:` line (holding `words`) as the last thing said."""

    def check(o: Outcome) -> None:
        no_traceback(o)
        assert o.code not in (0, None), (o.code, o.err[-800:])
        assert code is None or o.code == code, (o.code, o.err[-800:])
        assert o.lines and o.lines[-1].startswith("error: "), o.err[-800:]
        assert all(w in o.lines[-1] for w in words), o.lines[-1]

    return check


def no_secret(o: Outcome) -> None:
    text = o.texts()
    assert KEY not in text and URL_KEY not in text, [line for line in text.splitlines() if KEY in line][:3]


def strict_files(o: Outcome) -> None:
    """results.jsonl and summary.json parse as strict JSON (no bare NaN or Infinity)."""
    o.records()
    strict((o.run_dir() / "summary.json").read_text())


def impossible_logprobs_unavailable(why: str) -> Callable[[Outcome], None]:
    """Every record judged by the argmax answer, its probabilities unavailable with the reason `why`."""

    def check(o: Outcome) -> None:
        no_traceback(o)
        assert o.code in (0, 1), (o.code, o.err[-800:])
        strict_files(o)
        records = o.records()
        assert records and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
        for r in records:
            probs = r["result"]["probabilities"]
            assert probs["status"] == "unavailable" and why in probs["reason"], probs
            assert probs.get("p_a") is None, probs

    return check


def logprobs_no(why: str) -> Callable[[Outcome], None]:
    def check(o: Outcome) -> None:
        no_traceback(o)
        assert o.code == 0, (o.code, o.err[-800:])
        report = json.loads(o.out)
        assert report["features"]["logprobs"] is False, report
        assert why in report["evidence"]["logprobs"], report

    return check


def cut_answers_unparsed(o: Outcome) -> None:
    no_traceback(o)
    assert o.code in (0, 1), (o.code, o.err[-800:])
    records = o.records()
    assert records and all(r["status"] == "unparsed" for r in records), [r["status"] for r in records]
    assert all("finish_reason: length" in json.dumps(r["result"]) for r in records), records[0]["result"]


def nothing_raw(o: Outcome) -> None:
    """No escape or bell reached the terminal raw (stdout or stderr)."""
    assert "\x1b" not in o.out + o.err and "\x07" not in o.out + o.err, repr((o.out + o.err)[-400:])


def panel_shows_escapes(o: Outcome) -> None:
    """`cejudge judge` (the verdict panel) over a model whose text holds terminal escapes: judged, and every
    escape written out (`\\x1b`) on stdout, never sent raw to the terminal."""
    no_traceback(o)
    assert o.code == 0, (o.code, o.err[-800:])
    nothing_raw(o)
    assert "\\x1b]0;pwned" in o.out, o.out[-800:]


def evaluate_escapes_kept(o: Outcome) -> None:
    """`evaluate` over a model whose text holds terminal escapes: judged, the text kept as the model wrote it
    in the records (JSON escapes it), and nothing raw on the terminal."""
    no_traceback(o)
    assert o.code in (0, 1), (o.code, o.err[-800:])
    nothing_raw(o)
    records = o.records()
    assert records and all(r["status"] == "ok" for r in records), [r["status"] for r in records]
    assert "\\u001b]0;pwned" in json.dumps([r["result"] for r in records])


def judge_unparsed(*words: str) -> Callable[[Outcome], None]:
    """`cejudge judge --json`: exit 1 and an unparsed outcome whose reason holds `words`, or one line."""

    def check(o: Outcome) -> None:
        no_traceback(o)
        if o.code == 1 and o.out.strip():
            result = json.loads(o.out)
            assert result["status"] == "unparsed", result
            assert all(w in json.dumps(result) for w in words), result
            return
        one_line()(o)

    return check


def calibrate_without_nan(o: Outcome) -> None:
    no_traceback(o)
    assert "nan" not in (o.out + o.err).lower(), (o.out + o.err)[-800:]


def stalled_run_keeps_records(o: Outcome) -> None:
    one_line("did not answer within 5 s", code=3)(o)
    records = o.records()
    assert len(records) >= 2 and all(r["status"] == "ok" for r in records), [r["status"] for r in records]


def error_records_in_one_line(o: Outcome) -> None:
    """Each item an error record whose reason is one line, without the client's traceback text."""
    no_traceback(o)
    records = o.records()
    assert records and all(r["status"] == "error" for r in records), [r["status"] for r in records]
    for r in records:
        assert "\n" not in r["error"] and 'File "' not in r["error"] and "Traceback" not in r["error"], r[
            "error"
        ]


def garbage_unparsed(o: Outcome) -> None:
    no_traceback(o)
    assert o.code in (0, 1), (o.code, o.err[-800:])
    records = o.records()
    assert records and all(r["status"] == "unparsed" for r in records), [r["status"] for r in records]


def with_credentials(base: str) -> str:
    return base.replace("http://", f"http://judge:{URL_KEY}@")


def echoed_key_redacted(o: Outcome) -> None:
    one_line(code=3)(o)
    assert "[redacted]" in o.lines[-1], o.lines[-1]
    no_secret(o)


def evaluate_key_redacted(o: Outcome) -> None:
    no_traceback(o)
    no_secret(o)


def credentials_never_stored(o: Outcome) -> None:
    no_traceback(o)
    assert o.code in (0, 1), (o.code, o.err[-800:])
    view = run_cli(["view", str(o.run_dir()), "--bootstrap", "0"], o.folder)
    assert view.code == 0, view.err[-800:]
    assert (o.run_dir() / "view.html").exists()
    no_secret(o)
    assert "[redacted]@127.0.0.1" in (o.run_dir() / "run.json").read_text()


def CASES() -> list[Case]:  # noqa: N802 - the same name as bad_inputs.CASES
    """The refusals among them: options that would be ignored against a server, refused in one line."""
    return [
        Case("option: --api-key with a simulated backbone", evaluate_simulated("--api-key", KEY)),
        Case("option: --timeout 0", evaluate_simulated("--timeout", "0")),
        Case("option: --timeout nan", evaluate_simulated("--timeout", "nan")),
        Case("option: --timeout 100000", evaluate_simulated("--timeout", "100000")),
    ]


def evaluate_simulated(*extra: str) -> Callable[[Path], list[str]]:
    from tests.support.bad_inputs import evaluate as simulated

    return simulated(*extra)


def SERVER_CASES() -> list[ServerCase]:  # noqa: N802 - a table, built fresh per run
    return [
        ServerCase(
            "logprobs NaN: evaluate", "nan", evaluate(), impossible_logprobs_unavailable("not finite")
        ),
        ServerCase("logprobs +5: evaluate", "plus5", evaluate(), impossible_logprobs_unavailable("above 0")),
        ServerCase(
            "logprobs inf: evaluate", "inf", evaluate(), impossible_logprobs_unavailable("not finite")
        ),
        ServerCase("logprobs NaN: calibrate", "nan", then_calibrate, calibrate_without_nan),
        ServerCase(
            "logprobs NaN: backbones check", "nan", check_backbone("--json"), logprobs_no("not finite")
        ),
        ServerCase("logprobs +5: backbones check", "plus5", check_backbone("--json"), logprobs_no("above 0")),
        ServerCase(
            "logprobs inf: backbones check", "inf", check_backbone("--json"), logprobs_no("not finite")
        ),
        ServerCase("finish_reason length: evaluate", "length", evaluate(), cut_answers_unparsed),
        ServerCase("finish_reason length: judge", "length", judge("--json"), judge_unparsed("finish_reason")),
        ServerCase(
            "finish_reason length, answer whole: evaluate", "length-whole", evaluate(), cut_answers_unparsed
        ),
        ServerCase(
            "finish_reason length, answer whole: judge",
            "length-whole",
            judge("--json"),
            judge_unparsed("finish_reason"),
        ),
        ServerCase("escapes in the model's text: judge", "escapes", judge(), panel_shows_escapes),
        ServerCase("escapes in the model's text: evaluate", "escapes", evaluate(), evaluate_escapes_kept),
        ServerCase("echoed key: backbones check", "echo-key", check_backbone(), echoed_key_redacted),
        ServerCase("echoed key: evaluate", "echo-key", evaluate(), evaluate_key_redacted),
        ServerCase("echoed key: judge", "echo-key", judge(), echoed_key_redacted),
        ServerCase(
            "credentials in --api-base: evaluate and view",
            "gated-ok",
            evaluate(),
            credentials_never_stored,
            with_credentials,
        ),
        ServerCase(
            "credentials in --api-base: echoed",
            "echo-key",
            check_backbone(),
            echoed_key_redacted,
            with_credentials,
        ),
        ServerCase("no choices: judge", "no-choices", judge("--json"), judge_unparsed()),
        ServerCase("not JSON: judge", "not-json", judge("--json"), judge_unparsed()),
        ServerCase("no message: judge", "no-message", judge("--json"), judge_unparsed()),
        ServerCase("no message: evaluate", "no-message", evaluate(), error_records_in_one_line),
        ServerCase("not JSON: evaluate", "not-json", evaluate(), error_records_in_one_line),
        ServerCase("garbage answer: evaluate", "garbage", evaluate(), garbage_unparsed),
        ServerCase("garbage answer: judge", "garbage", judge("--json"), judge_unparsed("unparseable")),
        ServerCase("no choices: backbones check", "no-choices", check_backbone(), one_line(code=3)),
        ServerCase("no choices: evaluate", "no-choices", evaluate(), error_records_in_one_line),
        ServerCase(
            "stalls: evaluate --timeout 5",
            "gated-stall",
            evaluate("--timeout", "5", n=6),
            stalled_run_keeps_records,
        ),
        ServerCase(
            "stalls: backbones check --timeout 1",
            "stall",
            check_backbone("--timeout", "1"),
            one_line("did not answer within 1 s", code=3),
        ),
    ]
