"""The documentation site builds strict, and its generated reference pages are the
code's: a flag renamed in the parser, or a page edited by hand, fails here (and fails
``mkdocs build --strict``, through ``scripts/docs_hooks.py``)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
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


# -- every flag the pages mention is the CLI's

_PROGRAM = re.compile(
    r"(?:(?<![\w.-])(?:\S*/)?(?:(?P<ours>hugginggpt)(?=\s[a-z])|(?:langgraph|pip|docker|curl|make|"
    r"mkdocs|pytest|git|ollama|vllm|playwright|openssl)(?=\s))"
    r"|(?:scripts|benchmarks)/\w+\.py)(?P<command>(?:\s+[a-z][a-z-]*){0,2})")
_BETWEEN = re.compile(r"[;|()]")
"""What ends a command in a code span or line (the next flag is no longer its)."""
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_SCRIPT = re.compile(r"(?:scripts|benchmarks)/\w+\.py")
_BREAK = re.compile(r"^\s*(?:[-*] |\d+\. |#|\||```|$)")
"""A line that starts a paragraph of its own: a list item, a heading, a table row, a fence
or a blank line."""


def cli_flags(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """The flags of the ``hugginggpt`` parser by command ("" for the top level's,
    ``models list`` for a nested one's)."""
    found: dict[str, set[str]] = {"": set()}
    for action in parser._actions:
        found[""].update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for command, flags in cli_flags(sub).items():
                    found.setdefault(f"{name} {command}".strip(), set()).update(flags)
    return found


def _paragraphs(text: str) -> Iterator[tuple[int, str, bool]]:
    """(first line, text, in a code block) of each paragraph; a code block's line is one,
    with the lines its trailing backslash continues."""
    fenced, start = False, 0
    lines: list[str] = []
    for number, line in enumerate([*text.splitlines(), ""], 1):
        if line.lstrip().startswith("```"):
            if lines:
                yield start, "\n".join(lines), fenced
            fenced, lines = not fenced, []
            continue
        if fenced:
            if not lines:
                start = number
            lines.append(line)
            if not line.rstrip().endswith("\\"):
                yield start, "\n".join(lines), True
                lines = []
            continue
        if _BREAK.match(line) and lines:
            yield start, "\n".join(lines), False
            lines = []
        if line.strip():
            if not lines:
                start = number
            lines.append(line)


def mentioned_flags(text: str) -> Iterator[tuple[int, tuple[str, ...], str, str]]:
    """Each ``--flag`` of a page: (line, whose it may be, the command named, flag). A flag
    in a code span or code line that names a program before it is that program's (and
    command's); any other is ``hugginggpt``'s or a flag of a script of this repository
    that its paragraph or section names."""
    section: list[str] = []
    for start, paragraph, code in _paragraphs(text):
        if paragraph.startswith("#"):
            section = _SCRIPT.findall(paragraph)
        others = ("hugginggpt", *section, *_SCRIPT.findall(paragraph))
        spans = [paragraph] if code else paragraph.split("`")
        offset = 0
        for index, span in enumerate(spans):
            program: tuple[str, ...] = others
            command = ""
            events = sorted([*_PROGRAM.finditer(span), *_FLAG.finditer(span),
                             *_BETWEEN.finditer(span)], key=lambda m: m.start())
            for match in events:
                if match.re is _BETWEEN:
                    program, command = others, ""
                elif match.re is _PROGRAM and (code or index % 2):
                    name = match.group(0).split()[0]
                    program = ("hugginggpt",) if match.group("ours") else (
                        name if name.endswith(".py") else name.rsplit("/", 1)[-1],)
                    command = " ".join(match.group("command").split())
                elif match.re is _FLAG:
                    line = start + paragraph.count("\n", 0, offset + match.start())
                    yield line, program, command, match.group(0)
            offset += len(span) + 1


def unknown_flags(pages: list[Path], parser: argparse.ArgumentParser) -> list[str]:
    """The pages' mentions of a flag that is none of its possible owners': ``hugginggpt``
    (the command named's, else any command's), a script of this repository (what its
    ``--help`` lists). Another program's flags are its own business."""
    flags = cli_flags(parser)
    every = set().union(*flags.values())
    helps: dict[str, str] = {}

    def knows(owner: str, command: str, flag: str) -> bool:
        if owner == "hugginggpt":
            while command and command not in flags:
                command = command.rpartition(" ")[0]
            return flag in (flags[command] | flags[""] if command else every)
        if not owner.endswith(".py"):
            return True
        if owner not in helps:
            helps[owner] = subprocess.run([sys.executable, owner, "--help"], cwd=ROOT,
                                          capture_output=True, text=True, timeout=120).stdout
        return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", helps[owner]) is not None

    return [f"{page.relative_to(ROOT)}:{line}: {' | '.join(owners)} {command} {flag}"
            for page in pages
            for line, owners, command, flag in mentioned_flags(page.read_text(encoding="utf-8"))
            if not any(knows(owner, command, flag) for owner in owners)]


DOCUMENTED = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


@pytest.mark.timeout(300)
def test_every_flag_the_pages_mention_is_the_clis():
    """A flag renamed in the code, and not in the README or a page that mentions it (in
    prose, in an example, in a shown output), fails here; the generated CLI page is
    checked whole above."""
    from hugginggpt.cli import _parser

    assert unknown_flags(DOCUMENTED, _parser()) == []


def test_a_flag_renamed_in_the_parser_is_found_in_the_pages():
    """``--max-subtasks`` renamed in every command that has it, as renaming its setting
    would: the pages that still say ``--max-subtasks`` are found."""
    from hugginggpt.cli import _parser

    parser = _parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices.values()
    renamed = [a for command in commands for a in command._actions
               if "--max-subtasks" in a.option_strings]
    assert renamed
    for action in renamed:
        action.option_strings = ["--max-steps"]
    wrong = unknown_flags([ROOT / "docs" / "getting-started.md", ROOT / "README.md"], parser)
    assert wrong and all(w.endswith(" --max-subtasks") for w in wrong), wrong
    assert any(w.startswith("docs/getting-started.md:") for w in wrong)


def test_a_flag_is_given_to_the_command_named_before_it():
    text = ("Run `hugginggpt models list --task x` or `langgraph dev --no-browser`; `--json`.\n"
            "- `--plan`\n\n"
            "```bash\n.venv/bin/hugginggpt run \"x\" \\\n  --backend lite\ncurl -fsS URL\n```\n"
            "### Soak: `python benchmarks/soak.py`\n\n`--runs 5`\n")
    anyone = ("hugginggpt",)
    assert list(mentioned_flags(text)) == [
        (1, anyone, "models list", "--task"), (1, ("langgraph",), "dev", "--no-browser"),
        (1, anyone, "", "--json"), (2, anyone, "", "--plan"),
        (6, anyone, "run", "--backend"),
        (11, ("hugginggpt", "benchmarks/soak.py"), "", "--runs")]
