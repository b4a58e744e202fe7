"""MkDocs hooks (``hooks:`` in ``mkdocs.yml``), run before the build renders anything.

- The generated reference pages are checked against the code, and the benchmark pages
  and charts against the benchmarks' stored results, so that ``mkdocs build --strict``
  fails on a stale page (a renamed flag, a changed exit code, a new setting, a figure
  edited by hand or without its stamp) as it does on a broken link.
- A Python block's test settings (```` ```python test="skip" reason="..." ````, read by
  ``tests/test_docs_examples.py``) are taken off its fence before the page renders: the
  reader sees a plain Python block.
- The package is laid out as it installs (``graph/``, ``nodes/`` and ``tools/`` as
  ``hugginggpt.graph``, ...; ``scripts/installed_tree.py``) in ``build/docs-tree``,
  where mkdocstrings reads the docstrings (``paths`` in ``mkdocs.yml``).
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "docs-tree"
log = logging.getLogger("mkdocs.hooks.reference_pages")
TEST_SETTINGS = re.compile(r'^(\s*```\s*(?:python|py))((?:\s+(?:test|reason)="[^"]*")+)\s*$',
                           re.MULTILINE)
"""A Python fence's opening line with its test settings (pytest-examples' format)."""


@event_priority(100)  # before mkdocstrings reads its paths (it drops one that is missing)
def on_config(config: Any) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from scripts.installed_tree import lay_out

    shutil.rmtree(TREE, ignore_errors=True)
    lay_out(TREE)


def on_pre_build(config: Any) -> None:
    from scripts import benchmark_pages, plan_drawing, reference_pages

    docs = Path(config["docs_dir"])
    for path in reference_pages.stale(docs):
        log.warning("docs/%s differs from the code: run python scripts/reference_pages.py",
                    path)
    for path in benchmark_pages.stale(docs):
        log.warning("docs/%s differs from the benchmarks' stored results: run python "
                    "scripts/benchmark_pages.py", path)
    for path in plan_drawing.stale(docs):
        log.warning("docs/%s differs from the stored plan of a real run: run python "
                    "scripts/plan_drawing.py", path)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return TEST_SETTINGS.sub(r"\1", markdown)
