"""`cejudge view`'s page in a real headless browser: Debian's chromium driven by Playwright.

No browser is downloaded: Playwright launches /usr/bin/chromium (CI installs it with apt, see
.ci/run); without it, or without the `playwright` package, these tests skip and say why.
Screenshots for a person to look at go to $CEJUDGE_SCREENSHOTS (default: pytest's temporary folder,
under view-screenshots/); their paths are printed (`pytest -rP` shows them).
Every wait is bounded by Playwright's timeout; nothing asserts on time.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cejudge_dspy.cli import main
from tests import support
from tests.support import view_runs
from tests.support.browser import CHROMIUM, MISSING, TIMEOUT_MS, chromium
from tests.support.view_runs import chat_run, checkeval_run, literary_run

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)
if not Path(CHROMIUM).exists():
    pytest.skip(MISSING, allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium(sync_api) as b:
        yield b


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("CEJUDGE_SCREENSHOTS") or tmp_path_factory.mktemp("view-screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Page:
    """One opened page plus what it logged and fetched."""

    def __init__(self, browser: Any, html: Path) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(html.resolve().as_uri())
        self.page.wait_for_selector("#items tbody tr")

    def visible_ids(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "#items tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.id)"
        )

    def close(self) -> None:
        self.context.close()


def _view(runs: list[Path], out: Path, csv_out: Path | None = None) -> Path:
    args = ["view", *map(str, runs), "-o", str(out), "--bootstrap", "50"]
    assert main([*args, *(["--csv", str(csv_out)] if csv_out else [])]) == 0
    return out


def test_pairwise_page(browser: Any, tmp_path: Path, shots: Path) -> None:
    csv_out = tmp_path / "items.csv"
    html = _view([chat_run(tmp_path)], tmp_path / "chat.html", csv_out)
    v = Page(browser, html)
    page = v.page
    try:
        # Loads clean, fetches nothing beyond the file itself.
        assert v.errors == []
        assert [u for u in v.requests if not u.startswith(("file:", "data:", "blob:"))] == []
        # Charts are drawn: SVGs with a size and marks in them.
        for key in ("metric", "confusion"):
            box = page.locator(f'[data-chart="{key}"] svg').bounding_box()
            assert box and box["width"] > 100 and box["height"] > 50
        assert page.locator('[data-chart="confusion"] svg text').count() >= 12
        page.screenshot(path=str(shots / "pairwise-overview.png"), full_page=True)
        print(f"screenshot: {shots / 'pairwise-overview.png'}")

        assert sorted(v.visible_ids()) == ["p1", "p2", "p3", "p4", "p5", "p6"]
        assert page.inner_text("#shown") == "showing 6 of 6"
        # Outcome filter: drop correct and wrong.
        page.locator('#outcomes input[value="correct"]').uncheck()
        page.locator('#outcomes input[value="wrong"]').uncheck()
        assert sorted(v.visible_ids()) == ["p3", "p4", "p5", "p6"]
        # Language filter on top.
        page.select_option("#language", "de")
        assert sorted(v.visible_ids()) == ["p4", "p5", "p6"]
        page.select_option("#language", "")
        page.locator('#outcomes input[value="correct"]').check()
        page.locator('#outcomes input[value="wrong"]').check()
        # Text search reaches the item's texts.
        page.fill("#search", view_runs.SEARCH_WORD)
        assert v.visible_ids() == ["p3"]
        page.fill("#search", "")
        assert len(v.visible_ids()) == 6

        # Clicking an item shows both checklists with their questions, and both orders.
        page.click('#items tr[data-id="p1"]')
        drawer = page.locator("#drawer")
        assert drawer.is_visible()
        assert drawer.locator('.checklist-block[data-response="a"] li').count() == 3
        assert drawer.locator('.checklist-block[data-response="b"] li').count() == 1
        assert "p1 a q2?" in drawer.inner_text()
        assert drawer.locator(".order").count() == 2 and "BA feedback p1" in drawer.inner_text()
        page.screenshot(path=str(shots / "pairwise-item.png"))
        # An unparsed item names the stage and shows the raw output.
        page.click('#items tr[data-id="p5"]')
        problem = drawer.locator(".problem").first.inner_text()
        assert "ChecklistFromResponse" in problem and "{not json" in problem
        page.screenshot(path=str(shots / "pairwise-unparsed.png"))
        page.keyboard.press("Escape")
        assert not drawer.is_visible()

        # The CSV download is the file `--csv` wrote.
        with page.expect_download() as info:
            page.click("#download-csv")
        downloaded = Path(info.value.path()).read_text(encoding="utf-8")
        assert downloaded == csv_out.read_text(encoding="utf-8")
        assert [r["id"] for r in csv.DictReader(io.StringIO(downloaded))] == [
            "p1",
            "p2",
            "p3",
            "p4",
            "p5",
            "p6",
        ]
        assert v.errors == []
    finally:
        v.close()


def test_pointwise_score_range_and_scatter(browser: Any, tmp_path: Path, shots: Path) -> None:
    v = Page(browser, _view([literary_run(tmp_path)], tmp_path / "lit.html"))
    page = v.page
    try:
        assert v.errors == []
        assert page.locator('[data-chart="scatter"] svg circle, [data-chart="scatter"] svg path').count() >= 4
        page.fill("#score-min", "3")
        assert sorted(v.visible_ids()) == ["l1", "l2", "l4"]
        page.fill("#score-max", "4")
        assert sorted(v.visible_ids()) == ["l1", "l4"]
        page.select_option("#language", "ru-en")
        assert v.visible_ids() == ["l4"]
        page.screenshot(path=str(shots / "pointwise.png"), full_page=True)
    finally:
        v.close()


def test_checkeval_matrix_and_answers(browser: Any, tmp_path: Path, shots: Path) -> None:
    v = Page(browser, _view([checkeval_run(tmp_path)], tmp_path / "se.html"))
    page = v.page
    try:
        assert v.errors == []
        assert page.locator('[data-chart="answers"] svg').count() == 1
        page.click('#items tr[data-id="s2"]')
        rows = page.locator("#drawer table.answers tbody tr")
        assert rows.count() == 2 and "no" in rows.nth(0).inner_text()
        page.screenshot(path=str(shots / "checkeval.png"), full_page=True)
    finally:
        v.close()


def test_comparison_tab(browser: Any, tmp_path: Path, shots: Path) -> None:
    a, b = chat_run(tmp_path), chat_run(tmp_path, "chat-b", view_runs.CHAT_B, method="direct")
    v = Page(browser, _view([a, b], tmp_path / "both.html"))
    page = v.page
    try:
        page.get_by_role("tab", name="Comparison").click()
        ids = page.eval_on_selector_all("#disagreements tbody tr", "rows => rows.map(r => r.dataset.id)")
        assert ids == ["p2", "p5"]
        assert "McNemar" in page.inner_text(".compare-test")
        page.screenshot(path=str(shots / "comparison.png"), full_page=True)
        # Jump from a disagreement into the second run's item.
        page.locator('#disagreements tr[data-id="p5"] button', has_text="chat-b").click()
        assert page.locator("#drawer").is_visible() and "verdict B" in page.inner_text("#drawer")
        assert v.errors == []
    finally:
        v.close()


def test_probability_fields_per_item_and_the_decision_rule(browser: Any, tmp_path: Path, shots: Path) -> None:
    runs = [
        view_runs.chat_probability_run(tmp_path),
        view_runs.literary_probability_run(tmp_path),
        view_runs.checkeval_probability_run(tmp_path),
        view_runs.geval_run(tmp_path),
    ]
    v = Page(browser, _view(runs, tmp_path / "probabilities.html"))
    page = v.page
    try:
        assert v.errors == []
        # The run's rule, and both rules' accuracy from the same records (see test_rules.py).
        facts = page.inner_text("#overview .facts")
        assert "probability (tie band 0) · decided: argmax 0, probability 6 · probabilities: ok 6" in facts
        assert page.inner_text('.stat[data-rule="argmax"] .v') == "0.200"
        assert page.inner_text('.stat[data-rule="probability"] .v') == "0.600"
        assert "0.457" in page.inner_text("#stats")  # ECE
        assert "p(A)" in page.inner_text("#items thead")
        assert "0.550" in page.inner_text('#items tr[data-id="i2"]')
        page.click('#items tr[data-id="i2"]')
        drawer = page.locator("#drawer")
        probs = " ".join(drawer.locator(".probabilities").inner_text().split())
        assert "p(A) 0.550" in probs and "probability verdict A" in probs and "argmax verdict tie" in probs
        assert drawer.locator(".p-first").all_inner_texts() == [
            " · P(first better) 0.700",
            " · P(first better) 0.600",
        ]
        page.screenshot(path=str(shots / "probabilities-pairwise.png"))

        page.get_by_role("tab", name="lit-probability").click()
        page.click('#items tr[data-id="e2"]')
        probs = " ".join(drawer.locator(".probabilities").inner_text().split())
        assert "expected score 5.850" in probs and "argmax score 5" in probs
        assert drawer.locator("table.distribution tr").count() == 7
        assert "0.350" in drawer.locator('table.distribution tr[data-level="6"]').inner_text()
        page.screenshot(path=str(shots / "probabilities-pointwise.png"))

        page.get_by_role("tab", name="se-probability").click()
        page.click('#items tr[data-id="s1"]')
        assert drawer.locator("td.p-yes").all_inner_texts() == ["0.900", "0.300"]
        assert "mean P(yes) 0.900 · share of Yes 1" in drawer.locator(".probabilities").inner_text()

        page.get_by_role("tab", name="geval").click()
        page.click('#items tr[data-id="g1"]')
        coherence = drawer.locator('table.geval tr[data-dimension="coherence"]').inner_text()
        assert "3.600" in coherence and "4" in coherence
        assert "no 'score' field" in drawer.locator('table.geval tr[data-dimension="fluency"]').inner_text()
        page.screenshot(path=str(shots / "probabilities-geval.png"))
        assert v.errors == []
    finally:
        v.close()


def test_a_graded_pairwise_item_shows_each_response_s_grade(browser: Any, tmp_path: Path) -> None:
    """A run written by the real evaluate path (simulated backbone): an item its grades decided."""
    data = tmp_path / "pairs.jsonl"
    rows = [
        {"id": f"g{i}", "prompt": f"Q{i}?", "response_a": f"y{i}", "response_b": f"n{i}", "language": "en"}
        for i in range(6)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp_path / "run"
    args = [
        "evaluate",
        "--lm",
        "simulated:0",
        "--no-cache",
        "--task",
        "chat",
        "--data",
        str(data),
        "--reference",
    ]
    # In a subprocess: the browser fixture's event loop runs in this thread.
    cli = [sys.executable, "-c", "import sys; from cejudge_dspy.cli._app import main; sys.exit(main())"]
    done = subprocess.run(
        [*cli, *args, "--field", "id=id", "--const", "label=A", "--out", str(run)], check=False
    )
    assert done.returncode == 0
    records = [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    graded = next(r["id"] for r in records if r["result"]["grades"] and not r["result"]["orders"])
    page = Page(browser, _view([run], tmp_path / "view.html"))
    try:
        page.page.click(f'#items tr[data-id="{graded}"]')
        shown = page.page.inner_text("body").lower()  # headings are upper-cased by the page's CSS
        assert "grades (each response judged on its own)" in shown and "no order was shown" in shown
        reference = next(r for r in records if r["id"] == graded)["result"]["details"]["reference"]["answer"]
        assert f"the judge's own answer, written first: {reference}".lower() in " ".join(shown.split())
        assert not page.errors
    finally:
        page.close()


def test_a_panel_run_shows_each_member_s_vote_and_the_agreement(browser: Any, tmp_path: Path) -> None:
    """A panel run written by the real evaluate path (two simulated backbones, two methods)."""
    out = tmp_path / "panel"
    data = support.BENCHMARKS / "obvious" / "pairwise.jsonl"
    argv = ["evaluate", "--task", "chat", "--data", str(data), "--limit", "4", "--bootstrap", "0"]
    argv += ["--lm", "simulated:0", "--lm", "simulated:1", "--method", "cejudge", "--method", "direct"]
    # In a subprocess: the browser fixture's event loop runs in this thread.
    cli = [sys.executable, "-c", "import sys; from cejudge_dspy.cli._app import main; sys.exit(main())"]
    assert subprocess.run([*cli, *argv, "--out", str(out)], check=False).returncode == 0
    record = json.loads((out / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    votes = record["result"]["details"]["panel"]["votes"]
    v = Page(browser, _view([out], tmp_path / "panel.html"))
    page = v.page
    try:
        assert v.errors == []
        assert "votes" in page.inner_text("#items thead") and "agreement" in page.inner_text("#items thead")
        row = page.locator(f'#items tr[data-id="{record["id"]}"]').inner_text()
        assert " ".join(votes.values()) in row
        page.click(f'#items tr[data-id="{record["id"]}"]')
        drawer = page.locator("#drawer")
        assert drawer.locator("table.panel-votes tbody tr").count() == 4
        for name, vote in votes.items():
            assert vote in drawer.locator(f'table.panel-votes tr[data-member="{name}"]').inner_text()
        said = drawer.locator(".panel-agreement").inner_text()
        agreement = record["result"]["details"]["panel"]["agreement"]
        shown = str(int(agreement)) if float(agreement).is_integer() else f"{agreement:.3f}"  # the page's fmt
        assert f"agreement {shown} of 4 voting" in said and "entropy" in said
        assert v.errors == []
    finally:
        v.close()
