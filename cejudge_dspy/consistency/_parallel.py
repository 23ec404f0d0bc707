"""What a consistency run reads besides the items: its lists (`split_list`), and the items' own versions of
their texts in other languages (`FIELD@LANG` field keys, `--field instruction@ko=COLUMN`, or a task's
declared `instruction@ko = ...`), each checked before anything is written."""

from __future__ import annotations

from pathlib import Path

from cejudge_dspy.consistency._renderings import TEXT_FIELDS, field_language
from cejudge_dspy.data import Item, load_items, normalize_language
from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import TaskSpec


def split_list(values: list[str] | None, flag: str) -> list[str]:
    """`a,b --x c` -> [a, b, c], in order, without repeats; an empty entry is one line."""
    out: list[str] = []
    for value in values or []:
        for part in value.split(","):
            if not part.strip():
                raise InputError(f"an empty entry in {value!r}; write e.g. ko,de,ja", field=flag)
            if part.strip() not in out:
                out.append(part.strip())
    return out


def parallel_fields(
    fields: dict[str, str], declared: dict[str, dict[str, str]] | None = None
) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Split `--field` into the ordinary mapping and {language: {field: column}} for FIELD@LANG keys, on
    top of the task's declared ones (`declared`, [dataset.fields] `instruction@ko = ...`)."""
    plain: dict[str, str] = {}
    parallel: dict[str, dict[str, str]] = {}
    for lang, mapped in (declared or {}).items():
        parallel.setdefault(normalize_language(lang, field="[dataset.fields]"), {}).update(mapped)
    for key, column in fields.items():
        name, at, lang = key.partition("@")
        if not at:
            plain[key] = column
            continue
        code = normalize_language(lang, field=f"--field {key}")
        parallel.setdefault(code, {})[name] = column
    return plain, parallel


def parallel_versions(
    data: str | Path | None,
    subsets: list[str] | None,
    first: int | None,
    spec: TaskSpec,
    fields: dict[str, str],
    constants: dict[str, str],
    items: list[Item],
    columns: dict[str, dict[str, str]],
    languages: list[str],
) -> dict[tuple[str, str], dict[str, str]]:
    """(item id, language) -> the item's own texts in that language (those it has a column for; the
    translator writes the others), read by loading the data again with the parallel columns mapped to the
    text fields, so each must be filled for every item (with `--first N`, again no further than N items)."""

    text_fields = (
        ("instruction", "response_a", "response_b")
        if spec.mode == "pairwise"
        else ("instruction", "response")
    )
    out: dict[tuple[str, str], dict[str, str]] = {}
    for lang, mapped in columns.items():
        if lang not in languages:
            continue  # a version the run does not check (a declared one, or a --field for another run)
        unknown = sorted(set(mapped) - set(text_fields))
        if unknown:
            raise InputError(
                f"{unknown[0]}@{lang}: only the texts ({', '.join(text_fields)}) have versions in "
                "other languages",
                field="--field",
            )
        mapping = fields | mapped
        version = {
            i.id: i
            for i in load_items(
                spec,
                None if data is None else str(data),
                fields=mapping,
                constants=constants,
                subsets=subsets,
                limit=first,
                first=first is not None,
            )
        }
        for item in items:
            own = version.get(item.id)
            if own is None:
                raise InputError(
                    f"has no row in the parallel columns for {lang}", item=item.id, field="--field"
                )
            out[(item.id, lang)] = {name: getattr(own, name) for name in mapped}
    return out


def check_covered(
    items: list[Item], languages: list[str], parallel: dict[tuple[str, str], dict[str, str]]
) -> None:
    """With `--translator none` every text of every item needs its own version in every language it is not
    written in."""
    for lang in languages:
        for item in items:
            own = parallel.get((item.id, lang), {})
            for name in TEXT_FIELDS[item.mode]:
                if name not in own and field_language(item, name) != lang:
                    raise InputError(
                        f"has no version of its {name} in {lang} and --translator none translates nothing; "
                        f"map one with --field {name}@{lang}=COLUMN, or use --translator llm",
                        item=item.id,
                        field="--translator",
                    )
