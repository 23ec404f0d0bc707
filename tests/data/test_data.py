"""The data loader: declared mappings on small local fixtures, errors, filters, sampling, hub loading.

Fixtures in tests/fixtures/data are invented texts in the shapes of LitEval (one `;` CSV per language
pair), MM-Eval (prompt/chosen/rejected/language/subset), SummEval and Topical-Chat. No network, no model.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import datasets
import pytest

from cejudge_dspy.data import Item, load_items, parse_label, stratified_sample, task_summary
from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.tasks import available_tasks, load_task
from cejudge_dspy.tasks._spec import DatasetSpec
from tests import support

FIXTURES = support.FIXTURES / "data"
LITEVAL = FIXTURES / "liteval"
MMEVAL = FIXTURES / "mmeval.jsonl"
SHARED = support.SHARED_DATA
PAIRWISE_FIELDS = {
    "instruction": "prompt",
    "response_a": "response_a",
    "response_b": "response_b",
    "label": "label",
}


def write_jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def pairwise_rows(counts: dict[str, int]) -> list[dict]:
    return [
        {"prompt": f"q {lang} {i}", "response_a": "a", "response_b": "b", "label": "A", "language": lang}
        for lang, n in counts.items()
        for i in range(n)
    ]


# --- declared tasks ------------------------------------------------------------------------------


def test_literary_reads_a_liteval_directory_with_pairs_from_file_names() -> None:
    items = load_items(load_task("literary"), str(LITEVAL))
    assert [i.id for i in items] == ["de-en/0", "de-en/1", "de-en/2", "de-en/3", "en-zh/0", "en-zh/1"]
    first, quoted, chinese = items[0], items[1], items[4]
    assert (first.mode, first.language, first.response_language, first.label) == (
        "pointwise",
        "de",
        "en",
        6.0,
    )
    assert first.response == "The fog lay heavy over the river."
    # a quoted cell keeps its `;` and quotes; "4,5" is a European decimal
    assert quoted.instruction == 'Sie sagte leise: "Komm; es ist spät."' and quoted.label == 4.5
    assert (chinese.language, chinese.response_language, chinese.response) == (
        "en",
        "zh",
        "灯在空荡荡的大厅里闪烁。",
    )
    assert first.meta == {"source": str(LITEVAL / "de-en.csv"), "row": 0}


def test_literary_file_name_with_prefix_and_comma_csv(tmp_path: Path) -> None:
    # the declared `;` is absent from this header, so the delimiter is sniffed
    path = tmp_path / "liteval_cs-en.csv"
    path.write_text('source,tgt,rating\n"Ahoj, světe",Hello world,3\n', encoding="utf-8")
    (item,) = load_items(load_task("literary"), str(path))
    assert (item.id, item.language, item.response_language) == ("liteval_cs-en/0", "cs", "en")
    assert (item.instruction, item.label) == ("Ahoj, světe", 3.0)


def test_literary_file_name_without_a_pair_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text((LITEVAL / "de-en.csv").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(DataError, match=r"ratings\.csv.*SOURCE-TARGET\.csv.*--field language_pair=COLUMN"):
        load_items(load_task("literary"), str(path))


@pytest.mark.parametrize(
    ("name", "ids", "korean"),
    [
        (
            "reasoning",
            ["101", "103", "105", "107"],
            ("다음 수는 32입니다.", "다음 수는 24입니다."),
        ),
        ("chat", ["102", "104", "106"], ("김치찌개는 어떠세요?", "I cannot help with that.")),
    ],
)
def test_mmeval_tasks_keep_their_subset(name: str, ids: list[str], korean: tuple[str, str]) -> None:
    # Declared subset filters describe the hub dataset; a local dump of MM-Eval is filtered with
    # --subset. The Klingon lang_res row would fail language normalisation: it must be dropped first.
    items = load_items(load_task(name), str(MMEVAL), subsets=[name])
    assert [i.id for i in items] == ids
    assert {i.subset.casefold() for i in items} == {name}
    assert {i.label for i in items} == {"A"} and {i.mode for i in items} == {"pairwise"}
    assert (items[1].language, items[1].response_a, items[1].response_b) == ("ko", *korean)  # file: "Korean"


def test_local_file_in_the_common_schema_needs_no_flags(shared_data: Path) -> None:
    # The shared file has response_a/response_b/label columns and other subsets than "chat": the
    # declared chosen/rejected columns and label "A" give way to the file's own columns.
    items = load_items(load_task("chat"), str(shared_data / "pairwise_en_dev.jsonl"))
    assert len(items) == 135 and {i.label for i in items} == {"A", "B", "tie"}
    assert items[0].response_a.startswith("Inflation is a rise")


def test_declared_subset_filter_applies_to_the_hub_dataset(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    rows = [
        {"prompt": "p", "chosen": "c", "rejected": "r", "language": "de", "subset": s}
        for s in ("chat", "reasoning", "chat")
    ]
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: datasets.Dataset.from_list(rows))
    items = load_items(load_task("chat"))
    assert len(items) == 2 and {i.subset for i in items} == {"chat"}


def test_constant_fills_a_field_whose_column_is_absent(tmp_path: Path) -> None:
    rows = [{"prompt": "p", "chosen": "good", "rejected": "bad", "language": "German"}]
    (item,) = load_items(load_task("reasoning"), write_jsonl(tmp_path / "x.jsonl", rows))
    assert (item.subset, item.label, item.language, item.response_a) == ("reasoning", "A", "de", "good")


def test_summeval_declaration_reads_score_dicts_and_document_groups() -> None:
    items = load_items(load_task("summeval"), str(FIXTURES / "summeval.jsonl"))
    assert [i.group for i in items] == ["doc-1", "doc-1", "doc-2"]
    assert items[1].label == {"coherence": 1.333, "consistency": 3.0, "fluency": 2.0, "relevance": 2.666}
    assert items[0].response == "Council approves new park." and items[0].language == "en"


def test_topical_chat_declaration_and_a_template_that_adds_the_fact() -> None:
    task, path = load_task("topical_chat"), str(FIXTURES / "topical_chat.jsonl")
    items = load_items(task, path)
    assert items[0].group == items[1].group != items[2].group  # grouped by dialogue context
    assert items[1].label["groundedness"] == 0.0 and "overall" in items[1].label
    joined = load_items(task, path, fields={"instruction": "{source}\n\nFact: {context}"})
    assert joined[0].instruction.endswith(
        "\n\nFact: kind of blue is the best-selling jazz record of all time ."
    )
    assert joined[0].instruction.startswith("do you like jazz ?")


def test_score_dict_must_hold_every_dimension(tmp_path: Path) -> None:
    row = json.loads((FIXTURES / "summeval.jsonl").read_text().splitlines()[0])
    del row["scores"]["fluency"]
    expected = r"item doc-1/M0 \(bad.jsonl line 1\), field 'label': scores lack fluency"
    with pytest.raises(InputError, match=expected):
        load_items(load_task("summeval"), write_jsonl(tmp_path / "bad.jsonl", [row]))


def test_task_summary_for_every_declared_task() -> None:
    for name, task in available_tasks().items():
        summary = task_summary(task)
        assert summary["task"] == name and summary["fields"] == task.dataset.fields
        mapped = set(summary["fields"]) | set(summary["constants"])
        if task.mode == "pairwise" and "response" in mapped:  # a declaration for `cejudge rank`: one
            assert {"instruction", "response"} <= mapped  # answer a row, rank makes the pairs
            continue
        assert set(summary["required"]) <= mapped
    chat, literary = task_summary(load_task("chat")), task_summary(load_task("literary"))
    assert chat["keeps_only"] == {"subset": "chat"} and chat["label"] == "always 'A'"
    assert chat["source"].startswith("prometheus-eval/MM-Eval")
    assert literary["language"].startswith("pair from the file name") and literary["delimiter"] == ";"
    assert literary["source"] == "local files only: --data PATH"


# --- generic files and overrides -----------------------------------------------------------------


def test_cli_mapping_overrides_the_declaration() -> None:
    path, reasoning = str(FIXTURES / "pairwise_labels.jsonl"), load_task("reasoning")
    # The declared subset filter is the hub dataset's: a local file keeps its own subsets.
    assert {i.subset for i in load_items(reasoning, path, fields=PAIRWISE_FIELDS)} == {
        "natural",
        "adversarial",
    }
    # A command-line field replaces the declared constant for that field instead of filtering by it:
    # `label=label` overrides label = "A", `subset=subset` lifts the subset restriction.
    items = load_items(reasoning, path, fields=PAIRWISE_FIELDS | {"subset": "subset"})
    assert [i.label for i in items] == ["A", "B", "tie", "B"]  # "b", "TIE", " B " normalised
    assert [i.subset for i in items] == ["natural", "natural", "adversarial", "adversarial"]
    # and a command-line constant replaces the declared column
    items = load_items(reasoning, path, fields=PAIRWISE_FIELDS, constants={"subset": "custom"})
    assert {i.subset for i in items} == {"custom"} and len(items) == 4


def test_generic_parquet_with_id_column(tmp_path: Path) -> None:
    path = tmp_path / "data.parquet"
    datasets.Dataset.from_list(
        [
            {"uid": "x-1", "question": "Q1", "answer": "A1", "score": 3, "lang": "fr", "doc": 7},
            {"uid": "x-2", "question": "Q2", "answer": "A2", "score": 5, "lang": "French", "doc": 7},
        ]
    ).to_parquet(str(path))
    task = replace(load_task("literary"), dataset=DatasetSpec())
    fields = {
        "id": "uid",
        "instruction": "question",
        "response": "answer",
        "label": "score",
        "language": "lang",
        "group": "doc",
    }
    items = load_items(task, str(path), fields=fields)
    assert [(i.id, i.language, i.label, i.group, i.response_language) for i in items] == [
        ("x-1", "fr", 3.0, "7", None),
        ("x-2", "fr", 5.0, "7", None),
    ]


def test_tsv_and_cells_that_look_like_missing_values(tmp_path: Path) -> None:
    path = tmp_path / "en-de.tsv"
    path.write_text("source\ttgt\trating\nNone\tNA\t007\n", encoding="utf-8")
    (item,) = load_items(load_task("literary"), str(path))
    assert (item.instruction, item.response, item.label) == ("None", "NA", 7.0)


def test_missing_column_names_file_column_available_columns_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "de-en.csv"
    path.write_text("source;target;rating\na;b;3\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_items(load_task("literary"), str(path))
    message = str(err.value)
    for part in (
        str(path),
        "column 'tgt'",
        "--field response=COLUMN",
        "Available columns: source, target, rating",
    ):
        assert part in message


def test_a_constant_stands_in_for_a_missing_optional_column(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "nolang.jsonl", [{"prompt": "p", "response_a": "x", "response_b": "y", "label": "a"}]
    )
    with pytest.raises(
        DataError, match=r"column 'language' for language not found; fix: --field language=COLUMN or a"
    ):
        load_items(load_task("chat"), path, fields=PAIRWISE_FIELDS)
    (item,) = load_items(load_task("chat"), path, fields=PAIRWISE_FIELDS, constants={"language": "Swahili"})
    # The file is read through its own columns: the declared subset (MM-Eval's) does not reach it (#48).
    assert (item.language, item.label, item.subset) == ("sw", "A", None)


def test_missing_column_suggests_a_close_name(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "typo.jsonl", [{"promt": "p", "chosen": "x", "rejected": "y", "language": "en"}]
    )
    with pytest.raises(
        DataError, match=r"column 'prompt' for instruction not found \(did you mean 'promt'\?\)"
    ):
        load_items(load_task("chat"), path)


def test_unmapped_required_field_is_a_data_error() -> None:
    task = replace(load_task("chat"), dataset=DatasetSpec(fields={"instruction": "prompt"}))
    with pytest.raises(DataError, match=r"pairwise and maps no column to response_a, response_b"):
        load_items(task, str(MMEVAL))


def test_bad_pairwise_label_names_the_item(tmp_path: Path) -> None:
    rows = [{"prompt": "p", "response_a": "x", "response_b": "y", "label": "C", "language": "en"}]
    expected = r"item bad/0 \(bad.jsonl line 1\), field 'label': pairwise label must be 'A', 'B' or 'tie'"
    with pytest.raises(InputError, match=expected):
        load_items(load_task("chat"), write_jsonl(tmp_path / "bad.jsonl", rows), fields=PAIRWISE_FIELDS)


def test_parse_label_forms() -> None:
    literary = load_task("literary")
    assert parse_label(" 4,5 ", literary, "i") == 4.5
    scores = '{"coherence": 1, "consistency": 2, "fluency": 3, "relevance": "4,5", "extra": null}'
    assert parse_label(scores, load_task("summeval"), "i") == {
        "coherence": 1.0,
        "consistency": 2.0,
        "fluency": 3.0,
        "relevance": 4.5,
    }
    # a dict on a task without score dimensions would drop out of its metric: refused (issue #41)
    for bad in ("good", True, float("nan"), "", '{"a": 1, "b": null}', float("inf"), "Infinity"):
        with pytest.raises(InputError, match="item i, field 'label'"):
            parse_label(bad, literary, "i")


def test_empty_texts_are_reported_together(tmp_path: Path) -> None:
    rows = [
        {"prompt": "ok", "response_a": "x", "response_b": "y", "label": "A", "language": "en"},
        {"prompt": " ", "response_a": "x", "response_b": "y", "label": "A", "language": "en"},
        {"prompt": "ok", "response_a": "x", "response_b": None, "label": "Z", "language": "en"},
    ]
    with pytest.raises(InputError) as err:
        load_items(load_task("chat"), write_jsonl(tmp_path / "t.jsonl", rows), fields=PAIRWISE_FIELDS)
    message = str(err.value)
    assert message.startswith("3 problems in the data")
    assert "item t/1 (t.jsonl line 2), field 'instruction': empty or missing text" in message
    assert "item t/2 (t.jsonl line 3), field 'response_b'" in message and "got 'Z'" in message
    assert (err.value.item, err.value.field) == ("t/1 (t.jsonl line 2)", "instruction")


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    rows = [
        {"id": "same", "prompt": "p", "response_a": "x", "response_b": "y", "label": "B", "language": "en"}
    ] * 2
    with pytest.raises(InputError, match="item same, field 'id': id is not unique"):
        load_items(
            load_task("chat"), write_jsonl(tmp_path / "d.jsonl", rows), fields={"id": "id", **PAIRWISE_FIELDS}
        )


@pytest.mark.parametrize(
    ("path", "pattern"), [("nowhere.jsonl", "does not exist"), (__file__, "unsupported file type")]
)
def test_bad_paths(path: str, pattern: str) -> None:
    with pytest.raises(DataError, match=pattern):
        load_items(load_task("chat"), path)


def test_directory_without_data_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not data", encoding="utf-8")
    with pytest.raises(DataError, match=r"holds no \.jsonl/\.json/\.csv/\.tsv/\.parquet files"):
        load_items(load_task("literary"), str(tmp_path))


def test_malformed_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"prompt": "p"\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"cannot read .*broken\.jsonl as jsonl"):
        load_items(load_task("chat"), str(path))


def test_argument_errors() -> None:
    with pytest.raises(InputError, match="unknown item field 'instructions'"):
        load_items(load_task("chat"), str(MMEVAL), fields={"instructions": "prompt"})
    with pytest.raises(InputError, match="limit must be a positive"):
        load_items(load_task("chat"), str(MMEVAL), limit=0)
    with pytest.raises(InputError, match="unknown language 'Elvish'"):
        load_items(load_task("chat"), str(MMEVAL), languages=["Elvish"])


# --- filters and sampling ------------------------------------------------------------------------


def test_language_and_subset_filters() -> None:
    reasoning = load_task("reasoning")
    assert [
        i.id for i in load_items(reasoning, str(MMEVAL), languages=["German", "ko"], subsets=["reasoning"])
    ] == ["101", "103"]  # the file's own `id` column
    literary = load_items(load_task("literary"), str(LITEVAL), languages=["en-zh"])
    assert {i.id.split("/")[0] for i in literary} == {"en-zh"}
    wide = replace(reasoning, dataset=replace(reasoning.dataset, constants={"label": "A"}))
    assert [i.id for i in load_items(wide, str(MMEVAL), subsets=["SAFETY", "chat"], languages=["en"])] == [
        "106",
        "108",
    ]


def test_base_language_matches_regional_variants(tmp_path: Path) -> None:
    rows = pairwise_rows({"zh-TW": 1, "zh": 1, "ja": 1})
    items = load_items(
        load_task("chat"),
        write_jsonl(tmp_path / "z.jsonl", rows),
        fields=PAIRWISE_FIELDS | {"language": "language"},
        languages=["zh"],
    )
    assert [i.language for i in items] == ["zh-TW", "zh"]


def test_filters_that_leave_nothing_say_what_was_present() -> None:
    with pytest.raises(
        DataError,
        match=r"no items from .*9 rows read, .*outside --languages.*language values present: de, ko",
    ):
        load_items(load_task("reasoning"), str(MMEVAL), languages=["sw"], subsets=["reasoning"])
    with pytest.raises(DataError, match=r"subset values present: .*natural"):
        load_items(
            load_task("reasoning"),
            str(FIXTURES / "pairwise_labels.jsonl"),
            fields=PAIRWISE_FIELDS | {"subset": "subset"},
            subsets=["hard"],
        )


def make_items(counts: dict[str, int]) -> list[Item]:
    return [
        Item(
            id=f"{lang}/{i}", mode="pairwise", instruction="q", response_a="a", response_b="b", language=lang
        )
        for lang, n in counts.items()
        for i in range(n)
    ]


def test_stratified_sample_proportions_minimum_and_order() -> None:
    items = make_items({"de": 70, "fr": 20, "sw": 10})
    sample = stratified_sample(items, 10, seed=1)
    assert Counter(i.language for i in sample) == {"de": 7, "fr": 2, "sw": 1}
    assert sample == sorted(sample, key=items.index)  # file order kept
    # 90/9/1 with limit 5: exact shares 4.5/0.45/0.05, but every language keeps one item
    skewed = stratified_sample(make_items({"de": 90, "fr": 9, "sw": 1}), 5, seed=1)
    assert Counter(i.language for i in skewed) == {"de": 3, "fr": 1, "sw": 1}
    # fewer seats than languages: the largest strata win
    assert {i.language for i in stratified_sample(make_items({"de": 5, "fr": 3, "sw": 1}), 2)} == {"de", "fr"}
    assert stratified_sample(items, 500) == items


def test_stratified_sample_is_deterministic_per_seed() -> None:
    items = make_items({"de": 40, "fr": 40})
    ids = [i.id for i in stratified_sample(items, 10, seed=7)]
    assert ids == [i.id for i in stratified_sample(items, 10, seed=7)]
    assert any(ids != [i.id for i in stratified_sample(items, 10, seed=s)] for s in range(8, 12))
    # a stratum's picks do not depend on which other languages are present
    alone = [i.id for i in stratified_sample(make_items({"de": 40}), 5, seed=7)]
    assert [i for i in ids if i.startswith("de/")] == alone


def test_limit_through_the_loader(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "many.jsonl", pairwise_rows({"de": 12, "ko": 6, "en": 2}))
    fields = PAIRWISE_FIELDS | {"language": "language"}
    first = load_items(load_task("chat"), path, fields=fields, limit=10, seed=3)
    again = load_items(load_task("chat"), path, fields=fields, limit=10, seed=3)
    assert [i.id for i in first] == [i.id for i in again]
    assert Counter(i.language for i in first) == {"de": 6, "ko": 3, "en": 1}
    assert [int(i.id.split("/")[1]) for i in first] == sorted(int(i.id.split("/")[1]) for i in first)


# --- hub -----------------------------------------------------------------------------------------


def test_hub_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    rows = [json.loads(line) for line in MMEVAL.read_text(encoding="utf-8").splitlines()]

    def fake_load_dataset(*args, **kwargs):
        calls.append((args, kwargs))
        return datasets.Dataset.from_list(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    items = load_items(load_task("reasoning"), languages=["fr"])
    assert calls == [(("prometheus-eval/MM-Eval", "default"), {"split": "test"})]
    assert [(i.id, i.meta["source"]) for i in items] == [("MM-Eval/6", "hub dataset prometheus-eval/MM-Eval")]


def test_unreachable_hub_suggests_a_local_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*args, **kwargs):
        raise ConnectionError("Couldn't reach 'prometheus-eval/MM-Eval' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(
        DataError, match=r"cannot load 'prometheus-eval/MM-Eval'.*ConnectionError.*--data PATH"
    ):
        load_items(load_task("chat"))


def test_task_without_hub_needs_a_path() -> None:
    with pytest.raises(DataError, match=r"task 'literary' declares no hub dataset.*--data PATH") as error:
        load_items(load_task("literary"))
    said = str(error.value)
    # where LitEval comes from, what a file must hold, the exact command, and a sample to try it on (#49)
    assert "LitEval-Corpus" in said and "arXiv:2410.18697" in said
    assert "the columns source (instruction), tgt (response), rating (label)" in said and "';'" in said
    assert "`python optimize.py --task literary --data de-en.csv`" in said
    assert "--data ../shared/data/translation_da_dev.jsonl --field response=translation" in said
    assert "\n" not in said


# --- real samples in ../shared/data (optional) ---------------------------------------------------


def shared(name: str) -> str:
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return str(path)


@pytest.mark.shared_data
def test_shared_pairwise_dev_set() -> None:
    fields = PAIRWISE_FIELDS | {"language": "language", "subset": "subset", "id": "id"}
    items = load_items(load_task("chat"), shared("pairwise_en_dev.jsonl"), fields=fields)
    assert len(items) == 135 and Counter(i.label for i in items) == {"A": 60, "B": 60, "tie": 15}
    assert {i.language for i in items} == {"en"} and len({i.subset for i in items}) > 2
    sample = load_items(
        load_task("chat"), shared("pairwise_en_dev.jsonl"), fields=fields, limit=20, subsets=["Natural"]
    )
    assert len(sample) == 20 and {i.subset for i in sample} == {"Natural"}


@pytest.mark.shared_data
def test_shared_translation_dev_set() -> None:
    fields = {
        "instruction": "source",
        "response": "translation",
        "label": "human_score",
        "language_pair": "language_pair",
        "id": "id",
    }
    items = load_items(load_task("literary"), shared("translation_da_dev.jsonl"), fields=fields)
    assert Counter((i.language, i.response_language) for i in items) == {("en", "de"): 50, ("ru", "en"): 50}
    assert all(isinstance(i.label, float) and 0 <= i.label <= 100 for i in items)
    sample = load_items(load_task("literary"), shared("translation_da_dev.jsonl"), fields=fields, limit=10)
    assert Counter(i.language for i in sample) == {"en": 5, "ru": 5}


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("task", "name", "n", "groups"),
    [("summeval", "summeval_sample.jsonl", 50, 5), ("topical_chat", "topical_chat_sample.jsonl", 60, 10)],
)
def test_shared_checkeval_samples_fit_their_declarations(task: str, name: str, n: int, groups: int) -> None:
    items = load_items(load_task(task), shared(name))
    assert len(items) == n and len({i.group for i in items}) == groups
    assert all(isinstance(i.label, dict) and i.label for i in items)
