"""A Griffe extension (``extensions`` of mkdocstrings' Python handler in ``mkdocs.yml``):
the docstrings' few reStructuredText habits, read as Markdown for the site.

- a role, ``:class:`~hugginggpt.api.RunResult``` or ``:func:`run```, is shown as code:
  ``RunResult`` (a ``~`` keeps the last name only), ``run``;
- a literal block, a paragraph ending in ``::`` over an indented block, is a fenced
  Python block.

The docstrings themselves stay as they are: Sphinx-style roles read well in the source.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from griffe import Extension, Object

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    short, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _language(lines: list[str]) -> str:
    """``python`` for a block that is Python (the examples' tests run it), else none (a
    drawing, a table of figures: a benchmark page's ``text`` blocks are its output)."""
    try:
        ast.parse("\n".join(lines))
    except SyntaxError:
        return ""
    return "python"


def literal_blocks(text: str) -> str:
    """Each ``::`` literal block of ``text`` as a fenced block: Python where it parses."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not (line.rstrip().endswith("::") and i + 1 < len(lines)
                and not lines[i + 1].strip()):
            out.append(line)
            i += 1
            continue
        head, base = line.rstrip()[:-2].rstrip(), _indent(line)
        if head.strip():
            out.append(head + ":")
        j = i + 1
        block: list[str] = []
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
            block.append(lines[j])
            j += 1
        while block and not block[-1].strip():
            block.pop()
        while block and not block[0].strip():
            block.pop(0)
        inner = min((_indent(b) for b in block if b.strip()), default=0)
        pad = " " * base
        body = [b[inner:] if b.strip() else "" for b in block]
        out += ["", pad + f"```{_language(body)}", *[pad + b if b else "" for b in body],
                pad + "```", ""]
        i = j
    return "\n".join(out)


def roles_as_code(text: str) -> str:
    """Each role of ``text`` as code."""
    return ROLE.sub(_role, text)


def markdown(text: str) -> str:
    """A docstring's roles and literal blocks as Markdown."""
    return literal_blocks(roles_as_code(text))


class RestToMarkdown(Extension):
    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
