"""mkdocs hook: the CLI reference is ``projector --help`` itself, written at build time.

A page holding the marker ``<!-- cli-help -->`` gets the top-level help and each subcommand's,
from ``build_parser()`` (the parser the command runs), so the page cannot drift from the flags.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

MARKER = "<!-- cli-help -->"
WIDTH = "100"  # argparse wraps to $COLUMNS: the same page on every machine


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_sections() -> str:
    from projector.server.cli import build_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        sections = [f"## projector\n\n```text\n{parser.format_help()}```\n"]
        for name, sub in _subcommands(parser).items():
            sections.append(f"## projector {name}\n\n```text\n{sub.format_help()}```\n")
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(sections)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker with the help text; other pages pass unchanged."""
    return markdown.replace(MARKER, _help_sections()) if MARKER in markdown else markdown
