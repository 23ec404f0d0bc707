"""Who sits on a panel: `PanelMember`, a (backbone, method, options) triple, from repeated flags or a panel
file.

`--lm a --lm b --method cejudge --method direct` makes every pairing a member (2 x 2 = 4); `--panel FILE`
names members with options of their own. Imports no DSPy: the CLI reads and checks a panel before it
builds anything, and a bad file is one line naming the file, the member and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from cejudge_dspy.errors import InputError
from cejudge_dspy.files import read_toml
from cejudge_dspy.judges._option_choices import ADAPTER_CHOICES
from cejudge_dspy.judges._options import JudgeOptions
from cejudge_dspy.tasks import TaskSpec

# A member's own backbone keys in a panel file; every other key is a judge option (JudgeOptions' names).
BACKBONE_KEYS = ("lm", "api_base", "api_key", "adapter")
MEMBER_KEYS = ("name", *BACKBONE_KEYS)


@dataclass(frozen=True)
class PanelMember:
    """One judge of a panel: its name (unique in the panel), backbone and the judge's options.

    `api_base`/`api_key`/`adapter` None: the command's own `--api-base`/`--api-key`/`--adapter`."""

    name: str
    lm: str
    options: JudgeOptions
    api_base: str | None = None
    api_key: str | None = None
    adapter: str | None = None

    @property
    def method(self) -> str:
        return self.options.method

    @property
    def backbone(self) -> tuple[str, str | None, str]:
        """What identifies the member's backbone and the prompt format it is asked in; members with the same
        (lm, api_base) share one LM (and its cache) whatever their adapters."""
        return (self.lm, self.api_base, self.adapter or "auto")

    def identity(self, spec: TaskSpec, program: str, prompts: str | None) -> dict[str, Any]:
        """The member's entry in run.json's `panel`: everything that changes its verdicts (no key)."""
        return {
            "name": self.name,
            "lm": self.lm,
            "api_base": self.api_base,
            "adapter": self.adapter or "auto",
            "method": self.method,
            "program": program,
            "prompts": prompts,
            **self.options.identity(spec),
        }


def members_from_flags(
    lms: Sequence[str], methods: Sequence[str], options: JudgeOptions
) -> list[PanelMember]:
    """Every (backbone, method) pairing of the repeated flags, in flag order, named `lm/method` (or just one
    of the two where the other is the same for every member)."""
    many_lms, many_methods = len(set(lms)) > 1, len(set(methods)) > 1
    out = []
    for lm in dict.fromkeys(lms):
        for method in dict.fromkeys(methods):
            name = "/".join(p for p, many in ((lm, many_lms), (method, many_methods)) if many) or lm
            out.append(PanelMember(name, lm, replace(options, method=method)))
    return out


def read_panel_file(path: str | Path, defaults: JudgeOptions, lm: str = "embedded") -> list[PanelMember]:
    """The members of a panel file: a TOML file of `[[member]]` tables, each with `lm` (default: the
    command's `--lm`), optional `name`, `api_base`, `api_key`, `adapter` (auto, chat or json), and any judge
    option by its field name (`method = "direct"`, `tie_band = 0.1`); an option or backbone key a member does
    not set is the command's. A wrong file, key or value is one line naming the file, the member and the
    field."""
    path = Path(path)
    table = read_toml(path, partial(InputError, field="--panel"))
    extra = sorted(set(table) - {"member"})
    rows = table.get("member")
    if extra or not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        why = f"unknown key '{extra[0]}'" if extra else "no [[member]] tables"
        raise InputError(f"{path}: {why}; a panel file is a list of [[member]] tables", field="--panel")
    members = [_member(path, n, row, defaults, lm) for n, row in enumerate(rows, 1)]
    check_names(members, str(path))
    return members


def _member(path: Path, n: int, row: dict[str, Any], defaults: JudgeOptions, lm: str) -> PanelMember:
    where = f"{path}: member {n}" + (f" ('{row['name']}')" if isinstance(row.get("name"), str) else "")
    for key in MEMBER_KEYS:
        if key in row and not (isinstance(row[key], str) and row[key].strip()):
            raise InputError(f"{where}: field '{key}' must be a non-empty string, got {row[key]!r}")
    if "adapter" in row and row["adapter"] not in ADAPTER_CHOICES:
        raise InputError(
            f"{where}: field 'adapter' must be one of {', '.join(ADAPTER_CHOICES)}, got {row['adapter']!r}"
        )
    given = {k: v for k, v in row.items() if k not in MEMBER_KEYS}
    try:
        own = JudgeOptions.from_mapping(given, where)
    except InputError as exc:
        # from_mapping names the source and the key; a value its constructor refuses names only the flag.
        raise (exc if str(exc).startswith(where) else InputError(f"{where}: {exc}")) from None
    options = replace(defaults, **{k: getattr(own, k) for k in given})
    member_lm = row.get("lm", lm).strip()
    name = row.get("name") or f"{member_lm}/{options.method}"
    return PanelMember(name, member_lm, options, row.get("api_base"), row.get("api_key"), row.get("adapter"))


def check_names(members: Sequence[PanelMember], source: str) -> None:
    """Members are told apart by name in records and tables: two with one name are one line."""
    seen: set[str] = set()
    for m in members:
        if m.name in seen:
            raise InputError(f"{source}: two members are named '{m.name}'; give each a distinct `name`")
        seen.add(m.name)
    if len(members) < 2:
        raise InputError(f"{source}: a panel needs at least two members, got {len(members)}")


def check_members(members: Sequence[PanelMember], spec: TaskSpec, source: str) -> None:
    """Each member's options on the task (JudgeOptions.check), one line naming the member."""
    for m in members:
        try:
            m.options.check(spec)
        except InputError as exc:
            raise InputError(f"{source}: member '{m.name}': {exc}") from None
