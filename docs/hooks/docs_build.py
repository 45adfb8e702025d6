"""MkDocs hooks for the agentevals site (``hooks:`` in ``mkdocs.yml``).

- The scorer catalogue page gets its table generated from ``agentevals.scorers._catalogue.SCORERS``
  at build time, in place of the ``<!-- scorer-catalogue -->`` marker.
- Doctest examples in docstrings (``>>>`` lines and their output) render as Python console code
  blocks in the API reference, instead of as paragraphs.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from collections.abc import Callable
from typing import Any

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

CATALOGUE_MARKER = "<!-- scorer-catalogue -->"
# Keywords left out of the table: naming (id, name), and deprecated spellings that still work.
HIDDEN_OPTIONS = {"id", "name", "options", "option_kwargs", "args_match"}
KINDS = {
    "agentevals.scorers.code._checks": "code, quick check",
    "agentevals.scorers.code": "code",
    "agentevals.scorers.trajectory": "code, trajectory",
    "agentevals.scorers.llm": "LLM-judged",
}


def _kind(factory: Callable[..., Any]) -> str:
    for prefix, kind in KINDS.items():
        if factory.__module__.startswith(prefix):
            return kind
    raise ValueError(f"{factory.__module__}: no kind for this catalogue module")  # a new folder


def _markdown(text: str) -> str:
    """reST inline literals as Markdown, safe inside a table cell."""
    return text.replace("``", "`").replace("|", "\\|").strip()


def _measures(factory: Callable[..., Any]) -> str:
    paragraph = (inspect.getdoc(factory) or "").split("\n\n", 1)[0]
    return _markdown(" ".join(paragraph.split()))


def _default(value: Any) -> str:
    return value.__name__ if callable(value) else repr(value)


def _options(factory: Callable[..., Any]) -> str:
    signature = inspect.signature(factory)
    shown = []
    for parameter in signature.parameters.values():
        if parameter.name in HIDDEN_OPTIONS or parameter.kind is parameter.VAR_KEYWORD:
            continue
        if parameter.default is parameter.empty:
            shown.append(parameter.name)
        else:
            shown.append(f"{parameter.name}={_default(parameter.default)}")
    options = signature.parameters.get("options")
    if options is not None:  # LLM-judged: the fields of the options dataclass, also keyword arguments
        class_name = str(options.annotation).split("|", 1)[0].strip()
        options_class = getattr(sys.modules[factory.__module__], class_name)
        for field in dataclasses.fields(options_class):
            default = field.default if field.default is not dataclasses.MISSING else None
            shown.append(f"{field.name}={_default(default)}")
    return ", ".join(f"`{_markdown(option)}`" for option in shown) or "none"


def _factory_name(id: str, factory: Callable[..., Any]) -> str:
    return f"checks.{factory.__name__}" if id.startswith("check_") else factory.__name__


def catalogue_table() -> str:
    """The Markdown table of every prebuilt scorer, by id."""
    from agentevals.scorers._catalogue import SCORERS

    rows = [
        "| id | factory | kind | options | what it measures |",
        "|---|---|---|---|---|",
    ]
    for id, factory in SCORERS.items():
        rows.append(
            f"| `{id}` | `{_factory_name(id, factory)}` | {_kind(factory)} | {_options(factory)} "
            f"| {_measures(factory)} |"
        )
    table = "\n".join(rows)
    return f'<div class="scorer-catalogue" markdown>\n\n{table}\n\n</div>'  # styled in extra.css


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if CATALOGUE_MARKER in markdown:
        markdown = markdown.replace(CATALOGUE_MARKER, catalogue_table())
    return markdown


FENCE = re.compile(r"^\s*(```|~~~)")


class DoctestPreprocessor(Preprocessor):
    """Fence each run of doctest lines (``>>>``, ``...`` and the output up to a blank line)."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        in_fence = in_doctest = False
        for line in lines:
            if in_doctest and not line.strip():
                out.append("```")
                in_doctest = False
            if not in_doctest and FENCE.match(line):
                in_fence = not in_fence
            elif not in_fence and not in_doctest and line.startswith(">>>"):
                if out and out[-1].strip():
                    out.append("")
                out.append("```pycon")
                in_doctest = True
            out.append(line)
        if in_doctest:
            out.append("```")
        return out


class DoctestExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(DoctestPreprocessor(md), "agentevals_doctest", 28)


@event_priority(100)  # before mkdocstrings reads the Markdown extensions
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    config.markdown_extensions.append(DoctestExtension())  # type: ignore[arg-type]
    return config
