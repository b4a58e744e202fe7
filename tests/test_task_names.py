"""Where task types are named (issue 27's target, ``scripts/task_names.py``): only a task
type's declaration names it outside the backends, and each backend names it in one
module at most. ``task_names.py --check`` is what CI would run; it holds for every task
type, and a file that starts naming one breaks it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import task_names  # noqa: E402


def test_every_task_type_is_found_declared():
    found = task_names.namers()
    from hugginggpt.tools.experts.tasks import task_types

    assert set(found) == {t.name for t in task_types()}
    assert all(any(f.startswith(task_names.DECLARATIONS) for f in files)
               for files in found.values())


def test_the_target_holds_for_every_task_type(capsys):
    assert task_names.main(["--check"]) == 0, capsys.readouterr().out
    found = task_names.namers()
    assert capsys.readouterr().out.endswith(
        f"the target holds for {len(found)} of {len(found)}\n")


def test_a_file_naming_a_task_type_breaks_the_target():
    assert task_names.misses(["tools/experts/task_types/translation.py",
                              "nodes/respond.py"]) == ["outside the backends: nodes/respond.py"]
    assert task_names.misses(["tools/experts/local/text.py", "tools/experts/local/audio.py"]) \
        == ["2 modules in tools/experts/local"]


def test_a_name_meaning_something_else_is_excused_only_where_listed():
    found = task_names.namers()
    assert "tools/llm/local_chat.py" not in found["text-generation"]
    assert "text-generation" in Path(task_names.ROOT, "tools/llm/local_chat.py").read_text()


def test_the_architecture_page_says_for_how_many_the_target_holds():
    """docs/architecture.md ("Each task type in few files", which the README links) says
    what ``python scripts/task_names.py`` counts."""
    import re

    found = task_names.namers()
    held = sum(not task_names.misses(files) for files in found.values())
    page = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    section = page[page.index("## Each task type in few files"):]
    said = re.search(r"holds for (\d+) of (\d+) task types", " ".join(section.split()))
    assert said and (int(said.group(1)), int(said.group(2))) == (held, len(found)), said
