"""Where each task type is named: per task type, the Python files under ``graph/``,
``nodes/``, ``tools/`` and ``hugginggpt/`` whose code spells its name in a string, outside
docstrings. A one-word name (``translation``) and an alias count only as a whole string:
"the translation" in a sentence or a pattern of words is not the task.

The target (issue 27): a task type is named only by its declaration outside the backend
folders (``tools/experts/{local,hf_inference,lite,llm}``), and by at most one module
within each backend folder. Adding a task type then touches its declaration and its
adapters, not a dozen tables.

Usage: ``python scripts/task_names.py`` prints, per task type, the count and the files;
``--check`` exits 1 unless the target holds for every task type.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("graph", "nodes", "tools", "hugginggpt")
BACKENDS = tuple(f"tools/experts/{name}" for name in ("local", "hf_inference", "lite", "llm"))
DECLARATIONS = "tools/experts/task_types/"
"""Where task types are declared, a module each: naming one there is the point."""
OTHER_MEANING = {"tools/llm/local_chat.py": {"text-generation"}}
"""Names spelt in a file where they mean something else, not the task type: the local
LLM client builds transformers' ``text-generation`` pipeline, which LangChain's
``HuggingFacePipeline`` takes (and checks) by that name. It runs the planner, not an
expert."""


def _strings(tree: ast.AST) -> Iterator[str]:
    """The string constants of a module's code, docstrings (a string standing as a
    statement: a module's, a function's or an attribute's) left out."""
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings):
            yield node.value


def _declared() -> dict[str, tuple[str, ...]]:
    """Each task type's name and aliases, read from its declaration's ``TaskType(...)``."""
    found: dict[str, tuple[str, ...]] = {}
    for path in sorted((ROOT / DECLARATIONS).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "TaskType" and isinstance(node.args[0], ast.Constant)):
                aliases = next((kw.value for kw in node.keywords if kw.arg == "aliases"), None)
                names = [e.value for e in getattr(aliases, "elts", [])
                         if isinstance(e, ast.Constant)]
                found[node.args[0].value] = (node.args[0].value, *names)
    return found


def namers() -> dict[str, list[str]]:
    """Per task type, the files (relative to the project) whose code names it."""
    sources = {
        path.relative_to(ROOT).as_posix(): list(_strings(ast.parse(path.read_text())))
        for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
    }
    result = {}
    for task, (name, *aliases) in sorted(_declared().items()):
        pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        whole = {*aliases} | ({name} if "-" not in name else set())
        result[task] = [path for path, strings in sources.items()
                        if task not in OTHER_MEANING.get(path, ())
                        and any(s in whole or ("-" in name and pattern.search(s))
                                for s in strings)]
    return result


def misses(files: list[str]) -> list[str]:
    """What breaks the target for a task type named in ``files`` (nothing: it holds)."""
    outside = [f for f in files if not f.startswith((*BACKENDS, DECLARATIONS))]
    found = [f"outside the backends: {', '.join(outside)}"] if outside else []
    for backend in BACKENDS:
        inside = [f for f in files if f.startswith(backend + "/")]
        if len(inside) > 1:
            found.append(f"{len(inside)} modules in {backend}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the target holds for every task type")
    args = parser.parse_args(argv)
    found = namers()
    held = 0
    for task, files in found.items():
        missed = misses(files)
        held += not missed
        print(f"{task}: {len(files)} file(s){'' if missed else ', target holds'}")
        for path in files:
            print(f"    {path}")
    counts = sorted(len(files) for files in found.values())
    print(f"\n{len(found)} task types; files naming one: median {counts[len(counts) // 2]}, "
          f"most {counts[-1]}; the target holds for {held} of {len(found)}")
    return 1 if args.check and held < len(found) else 0


if __name__ == "__main__":
    sys.exit(main())
