"""MkDocs hook: docs/reference/cli.md is generated from the argparse parsers at build time.

The page's source holds the marker `<!-- cli-reference -->`; `on_page_markdown` replaces it with one
section per command (`cejudge judge`, `cejudge checklist`, ...): its help, its usage line and a table per
argument group of every flag with its metavar, default, choices and help. Every flag's name is a link to
itself with a stable anchor, the command's words after `cejudge` and the flag's long name (`#evaluate--lm`;
`#judge--reference` for `--reference, --no-reference`; a positional: `#view-runs`), so a page or an issue
can link to one flag (`reference/cli.md#evaluate--lm`). The text comes from
`cejudge_dspy.cli._app.build_parser()`, so the page cannot drift from the CLI;
tests/docs/test_cli_reference.py checks the rendered text against the parsers.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

MARKER = "<!-- cli-reference -->"
PAGE = "reference/cli.md"
USAGE_WIDTH = 80  # what fits a code block of the Material theme without scrolling


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("cejudge",)) -> Iterator[Any]:
    """(command words, parser, help) for every subcommand of `parser`, depth first, in declaration order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                words = (*path, name)
                yield words, sub, helps.get(name) or ""
                yield from commands(sub, words)


def flag_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The documented arguments of one parser: everything but -h and the subcommand dispatcher."""
    return [
        a
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        and a.help != argparse.SUPPRESS
    ]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def anchor(words: tuple[str, ...], action: argparse.Action) -> str:
    """The flag's stable anchor: `evaluate--lm` (its first long option), `view-runs` (a positional).

    The command's words leave out `cejudge`, so no anchor collides with a section's heading
    (`cejudge-evaluate`); the first long option is the flag's name (`--out` of `-o, --out`, `--reference`
    of `--reference, --no-reference`), which a short alias or a negation added later never changes.
    """
    command = "-".join(words[1:])
    if action.option_strings:
        return command + long_name(action)
    return f"{command}-{action.dest}"


def long_name(action: argparse.Action) -> str:
    """The first `--` option of a flag, else its first option (`-v` alone)."""
    return next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])


def _names(action: argparse.Action, words: tuple[str, ...] = ("cejudge",)) -> str:
    """The argument as `--help` writes it: `-o OUT`, `--out OUT`; `--orders {both,single}`; `runs`;
    a link to itself with its anchor (attr_list's `{#id}` on the link)."""
    formatter = argparse.HelpFormatter("cejudge")
    if not action.option_strings:
        names = f"`{formatter._format_action_invocation(action)}`"
    elif action.nargs == 0:
        names = ", ".join(f"`{option}`" for option in action.option_strings)
    else:
        args = formatter._format_args(action, action.dest.upper())
        names = ", ".join(f"`{option} {args}`" for option in action.option_strings)
    target = anchor(words, action)
    link = f"[{names}](#{target}){{#{target}}}"
    return link if action.option_strings else f"{link} (positional)"


def _default(action: argparse.Action) -> str:
    default = action.default
    if default in (None, argparse.SUPPRESS, False) or isinstance(default, (list, tuple)) and not default:
        return ""
    return f"`{default}`"


def _help(action: argparse.Action) -> str:
    text = _cell(action.help or "")
    if action.help and "%(" in action.help:
        try:
            text = _cell(action.help % {**vars(action), "prog": "cejudge"})
        except (KeyError, TypeError, ValueError):
            pass
    if action.choices and not isinstance(action.choices, dict):
        text += f" (choices: {', '.join(f'`{c}`' for c in action.choices)})"
    return text


def _groups(parser: argparse.ArgumentParser) -> Iterator[tuple[str, list[argparse.Action]]]:
    documented = set(map(id, flag_actions(parser)))
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if id(a) in documented]
        if actions:
            yield (group.title or "arguments"), actions


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The markdown of every command of `parser` (the CLI's own parser by default)."""
    if parser is None:
        from cejudge_dspy.cli._app import build_parser

        parser = build_parser()
    out: list[str] = []
    for words, sub, help_text in commands(parser):
        out.append(f"## {' '.join(words)}\n")
        if help_text:
            out.append(f"{_cell(help_text)[:1].upper()}{_cell(help_text)[1:]}.\n")
        if sub.description:
            out.append(f"{_cell(sub.description)}\n")
        sub.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=USAGE_WIDTH)
        out.append(f"```text\n{sub.format_usage().strip()}\n```\n")
        children = [(w, h) for w, _, h in commands(sub, words) if len(w) == len(words) + 1]
        if children:
            out.append("| command | what it does |\n|---|---|")
            out.extend(f"| [`{' '.join(w)}`](#{'-'.join(w)}) | {_cell(h)} |" for w, h in children)
            out.append("")
        for title, actions in _groups(sub):
            out.append(f"**{title}**\n")
            out.append("| argument | default | what it does |\n|---|---|---|")
            out.extend(f"| {_names(a, words)} | {_default(a)} | {_help(a)} |" for a in actions)
            out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lost its marker {MARKER}: the generated reference has nowhere to go")
    return markdown.replace(MARKER, render())
