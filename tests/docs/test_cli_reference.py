"""docs/reference/cli.md is generated from the parsers: every command and every flag, with its help."""

from __future__ import annotations

import argparse
import importlib.util
import re
from types import ModuleType

import pytest

from cejudge_dspy.cli._app import build_parser
from tests import support

PAGE = support.REPO / "docs" / "reference" / "cli.md"


def _hook() -> ModuleType:
    path = support.REPO / "docs" / "hooks" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference_hook", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _hook()
RENDERED = HOOK.render()
COMMANDS = [(" ".join(words), sub) for words, sub, _ in HOOK.commands(build_parser())]


def _section(command: str) -> str:
    m = re.search(rf"^## {re.escape(command)}\n(.*?)(?=^## |\Z)", RENDERED, re.S | re.M)
    assert m, f"no section for `{command}` in the generated CLI reference"
    return m.group(1)


def test_the_page_keeps_its_marker() -> None:
    assert HOOK.MARKER in PAGE.read_text(encoding="utf-8")


def test_every_command_has_a_section() -> None:
    top = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    documented = {c.removeprefix("cejudge ") for c, _ in COMMANDS}
    assert set(top.choices) <= documented
    assert len(COMMANDS) >= 10  # judge, tasks, evaluate, compare, merge, calibrate, checklist, ...


@pytest.mark.parametrize("command,parser", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_every_flag_is_documented_with_its_help(command: str, parser: argparse.ArgumentParser) -> None:
    section = _section(command)
    actions = HOOK.flag_actions(parser)
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert actions or groups, f"`{command}` has no arguments to document"
    for group in groups:
        for name in group.choices:
            assert f"[`{command} {name}`](#" in section, f"`{command}`: its command {name} is not listed"
    for action in actions:
        for option in action.option_strings:
            assert re.search(rf"`{re.escape(option)}[ `,]", section), f"`{command}`: {option} is missing"
        if not action.option_strings:
            shown = argparse.HelpFormatter("cejudge")._format_action_invocation(action)  # as --help shows it
            assert f"`{shown}`](#" in section, f"`{command}`: {action.dest} is missing"
        if action.help:
            words = " ".join(action.help.split()).replace("|", "\\|")[:40]
            assert words in section, f"`{command}` {action.dest}: its help text is missing"
        for choice in action.choices or ():
            assert f"`{choice}`" in section, f"`{command}` {action.dest}: choice {choice} is missing"


@pytest.mark.parametrize("command,parser", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_every_flag_has_its_stable_anchor(command: str, parser: argparse.ArgumentParser) -> None:
    """`#evaluate--lm`: the command's words after `cejudge`, then the flag's long name; set on the flag's
    own row (attr_list's `{#id}`), so a link to it lands on that flag."""
    section = _section(command)
    words = command.split()[1:]
    for action in HOOK.flag_actions(parser):
        if action.option_strings:
            long = [o for o in action.option_strings if o.startswith("--")] or action.option_strings
            expected = "-".join(words) + long[0]
        else:
            expected = "-".join(words) + "-" + action.dest
        assert HOOK.anchor(tuple(command.split()), action) == expected
        row = next((line for line in section.splitlines() if f"{{#{expected}}}" in line), None)
        assert row, f"`{command}`: no anchor #{expected}"
        assert f"](#{expected})" in row  # the flag links to itself: its anchor is one click away
        shown = action.option_strings or [argparse.HelpFormatter("cejudge")._format_action_invocation(action)]
        assert all(f"`{name}" in row for name in shown), f"#{expected} is not on {action.dest}'s row"


def test_the_anchors_are_unique_and_none_is_a_heading() -> None:
    anchors = re.findall(r"\{#([^}]+)\}", RENDERED)
    assert len(anchors) == len(set(anchors)) > 100
    headings = {"-".join(c.split()) for c, _ in COMMANDS}
    assert not headings & set(anchors)
    assert "evaluate--lm" in anchors and "evaluate--concurrency" in anchors
    assert "judge--reference" in anchors and "judge--no-reference" not in anchors  # a negation is no name


def test_a_new_flag_appears_without_an_edit() -> None:
    """The page follows the parser: a flag added to a parser is in the next render."""
    parser = argparse.ArgumentParser(prog="cejudge")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("demo", help="a demo command")
    p.add_argument("--brand-new", default=3, help="a flag no page mentions | with a pipe")
    text = HOOK.render(parser)
    assert "## cejudge demo" in text
    assert (
        "| [`--brand-new BRAND_NEW`](#demo--brand-new){#demo--brand-new} | `3` |"
        " a flag no page mentions \\| with a pipe |"
    ) in text
