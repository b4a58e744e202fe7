"""Where task types are named (issue 27's target, ``scripts/task_names.py``): each backend
names a task type in one module at most, and outside the backends and the declarations
only the files still to be moved onto the declarations do; no other file starts to."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import task_names  # noqa: E402

STILL_NAMING = {"tools/llm/local_chat.py"}
"""Files outside the backends that name a task type today (in the LLM client, the
transformers pipeline that LangChain's HuggingFacePipeline builds by its task's name).
The list only shrinks."""


def test_every_task_type_is_found_declared():
    found = task_names.namers()
    from hugginggpt.tools.experts.tasks import task_types

    assert set(found) == {t.name for t in task_types()}
    assert all(any(f.startswith(task_names.DECLARATIONS) for f in files)
               for files in found.values())


def test_each_backend_names_a_task_type_in_one_module_at_most():
    assert {task: missed for task, files in task_names.namers().items()
            if (missed := [m for m in task_names.misses(files) if "modules in" in m])} == {}


def test_no_other_file_names_a_task_type():
    outside = {f for files in task_names.namers().values() for f in files
               if not f.startswith((*task_names.BACKENDS, task_names.DECLARATIONS))}
    assert outside <= STILL_NAMING


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
