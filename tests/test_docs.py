"""The documentation site builds strict, and its generated reference pages are the
code's: a flag renamed in the parser, or a page edited by hand, fails here (and fails
``mkdocs build --strict``, through ``scripts/docs_hooks.py``)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from typing import Annotated, Literal

import pytest
from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
)

from scripts.reference_pages import (
    DOCS,
    PAGES,
    ROOT,
    cli_page,
    field_docstrings,
    settings_rows,
    stale,
)

needs_mkdocs = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed (pip install -e '.[docs]', part of dev)")


@needs_mkdocs
@pytest.mark.timeout(300)
def test_the_site_builds_strict(tmp_path):
    """A broken link, a link to a missing heading, an object mkdocstrings cannot find or a
    stale generated page is a warning, and --strict makes it fail the build. As in a fresh
    clone, the package's layout for mkdocstrings is not there before the build."""
    shutil.rmtree(ROOT / "build" / "docs-tree", ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "reference" / "cli" / "index.html").exists()
    api = (tmp_path / "reference" / "python-api" / "index.html").read_text(encoding="utf-8")
    assert "RunResult" in api and "aresume" in api  # rendered from the docstrings
    server = (tmp_path / "guides" / "server" / "index.html").read_text(encoding="utf-8")
    assert "get_client" in server and 'test="skip"' not in server  # a plain Python block


def test_the_reference_pages_are_what_the_code_gives():
    assert stale() == [], "run python scripts/reference_pages.py"


def test_a_page_edited_by_hand_is_stale(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    for path, old, new in [("reference/cli.md", "`--max-subtasks`", "`--max-steps`"),
                           ("architecture.md", "hugginggpt.cli\n   ▼\nhugginggpt.ui",
                            "hugginggpt.ui\n   ▼\nhugginggpt.cli")]:
        page = docs / path
        text = page.read_text(encoding="utf-8")
        assert old in text
        page.write_text(text.replace(old, new), encoding="utf-8")
    assert stale(docs) == ["reference/cli.md", "architecture.md"]


def test_a_flag_renamed_in_the_parser_no_longer_matches_the_page():
    """The page is made from the parser itself: the parser the command builds, with one
    flag renamed as a code change would, gives another page."""
    from hugginggpt.cli import _parser

    parser = _parser()
    run = next(a for a in parser._actions if a.dest == "command").choices["run"]
    [action] = [a for a in run._actions if "--max-subtasks" in a.option_strings]
    action.option_strings = ["--max-steps"]
    renamed = cli_page(parser)
    committed = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert "`--max-steps`" in renamed and "`--max-steps`" not in committed
    assert renamed != committed


def test_every_generated_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert all(path in nav for path in PAGES)


class _Settings(BaseModel):
    """A settings model as pydantic-settings declares one (``env_prefix``, attribute
    docstrings), for the generator of the settings page."""

    model_config = ConfigDict(use_attribute_docstrings=True, env_prefix="HUGGINGGPT_")

    planner: Literal["auto", "llm", "offline"] = "auto"
    """``auto``: the LLM when one is configured, else the <offline> planner
    (:mod:`hugginggpt.nodes.planning`, ``<bank>``)."""
    download: Literal["ask", "no"] | None = None
    max_subtasks: Annotated[int, Field(ge=1)] = 10
    subtask_timeout_s: Annotated[float, Field(gt=0)] = Field(
        300.0, validation_alias="HUGGINGGPT_SUBTASK_TIMEOUT")
    llm_base_url: str | None = Field(None, validation_alias=AliasChoices(
        "HUGGINGGPT_LLM_BASE_URL", "OPENAI_BASE_URL"))
    backend: Annotated[str, AfterValidator(str.strip)] = "auto"
    hosts: Annotated[dict[str, Annotated[str, AfterValidator(str.lower)]],
                     BeforeValidator(str.split)] | None = None


def test_a_setting_row_names_its_variables_default_check_and_description():
    rows = settings_rows(_Settings)
    assert rows == [
        "| `planner` | `HUGGINGGPT_PLANNER` | `'auto'` | one of `auto`, `llm`, `offline` "
        "| ``auto``: the LLM when one is configured, else the &lt;offline> planner "
        "(`hugginggpt.nodes.planning`, ``<bank>``). |",
        "| `download` | `HUGGINGGPT_DOWNLOAD` | `None` | one of `ask`, `no` or `None` |  |",
        "| `max_subtasks` | `HUGGINGGPT_MAX_SUBTASKS` | `10` | `int`, >= 1 |  |",
        "| `subtask_timeout_s` | `HUGGINGGPT_SUBTASK_TIMEOUT` | `300.0` | `float`, > 0 |  |",
        "| `llm_base_url` | `HUGGINGGPT_LLM_BASE_URL`, `OPENAI_BASE_URL` | `None` "
        "| `str` or `None` |  |",
        "| `backend` | `HUGGINGGPT_BACKEND` | `'auto'` | `str`, checked by `strip` |  |",
        "| `hosts` | `HUGGINGGPT_HOSTS` | `None` | `dict[str, str]` or `None`, checked by "
        "`split`, `lower` |  |",
    ]


class _Inherited(BaseModel):
    first: int = 1
    """What the base says."""
    second: int = 2
    """Said by the base, then by the subclass."""


class _Subclass(_Inherited):
    second: int = 3
    """The subclass's own."""
    third: int = 3
    fourth: int = 4
    """After a field without one."""


def test_a_field_docstring_is_read_from_the_source_not_from_pydantic():
    assert field_docstrings(_Subclass) == {
        "first": "What the base says.", "second": "The subclass's own.",
        "fourth": "After a field without one."}
    assert all(f.description is None for f in _Subclass.model_fields.values())


def test_every_setting_says_what_it_does_without_reading_docstrings_at_start_up():
    """The settings page's last column comes from each field's docstring in the source;
    ``Context`` itself never reads them (``use_attribute_docstrings`` is off: it would
    read every class's source on every start)."""
    from hugginggpt.graph.context import Context

    assert all(f.description is None for f in Context.model_fields.values())
    rows = settings_rows(Context)
    assert len(rows) == len(Context.model_fields)
    assert [row for row in rows if row.endswith("|  |")] == []
    [max_subtasks] = [row for row in rows if row.startswith("| `max_subtasks` |")]
    assert "The most subtasks a plan may have" in max_subtasks


def test_docstrings_rest_habits_read_as_markdown():
    from scripts.griffe_docstrings import markdown

    text = ("Uses :class:`~hugginggpt.api.RunResult` and :func:`hugginggpt.run`.\n\n"
            "Example::\n\n    import hugginggpt\n\n    hugginggpt.run('x')\n\nAfter.")
    assert markdown(text) == (
        "Uses `RunResult` and `hugginggpt.run`.\n\nExample:\n\n```python\nimport hugginggpt\n"
        "\nhugginggpt.run('x')\n```\n\nAfter.")
