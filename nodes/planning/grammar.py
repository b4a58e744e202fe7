"""The plan as a grammar: a bounded JSON schema every reply under it is a valid plan of.

A local model (``transformers:REPO``) plans under this schema, token by token
(:mod:`hugginggpt.tools.llm.grammar`), so even a small model's plan parses and passes
:func:`~.validation.validate_plan` every time:

- subtask ``i`` has ``"id": i``, and its ``dep`` lists earlier ids only (at most
  :data:`MAX_DEPS`);
- its ``task`` is one of the task types whose required file arguments the run's files
  can fill; its ``args`` are exactly the task type's arguments (the required ones
  always), closed to any other name;
- a file argument is one of the run's files of its kind; a text or parameter value is
  short printable ASCII text (no quotes to escape, no control characters);
- at most :data:`MAX_PLAN` subtasks (or ``max_subtasks`` when lower).

What the grammar cannot say is how one subtask's output feeds another
(``<GENERATED>-k``): whether k's output has the kind the argument needs depends on the
task chosen for k earlier in the same reply. Under the grammar, arguments are literal
values; ``dep`` still orders the subtasks.
"""

from __future__ import annotations

from typing import Any

from hugginggpt.tools.experts.tasks import TaskType, task_types
from hugginggpt.tools.kinds import DATA_KINDS, is_text_file, kind_of_literal
from hugginggpt.tools.llm.grammar import text_pattern

__all__ = ["plan_grammar", "MAX_PLAN", "MAX_DEPS", "MAX_TEXT"]

MAX_PLAN = 5
"""Subtasks a plan under the grammar may have."""
MAX_DEPS = 3
"""Dependencies a subtask under the grammar may list."""
MAX_TEXT = 60
"""Characters of a text argument under the grammar."""


def _value(kind: str, files: list[str]) -> dict[str, Any] | None:
    """The values an argument of ``kind`` may take (None: none the run can give)."""
    if kind in DATA_KINDS and kind != "text":
        mine = [f for f in files if kind_of_literal(f) == kind]
        return {"type": "string", "enum": mine} if mine else None
    text = {"type": "string", "pattern": text_pattern(MAX_TEXT)}
    if kind == "text" and (notes := [f for f in files if is_text_file(f)]):
        return {"anyOf": [text, {"type": "string", "enum": notes}]}
    return text


def _args(task: TaskType, files: list[str]) -> dict[str, Any] | None:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg in task.args:
        value = _value(str(arg.kind), files)
        if value is None:
            if arg.required:
                return None  # the run has no file this task type needs
            continue
        properties[arg.name] = value
        if arg.required:
            required.append(arg.name)
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def _subtask(position: int, task: str, args: dict[str, Any]) -> dict[str, Any]:
    dep: dict[str, Any] = {"type": "array", "maxItems": min(position, MAX_DEPS)}
    if position:
        dep["items"] = {"type": "integer", "enum": list(range(position))}
    return {"type": "object",
            "properties": {"id": {"type": "integer", "enum": [position]},
                           "task": {"type": "string", "enum": [task]},
                           "dep": dep, "args": args},
            "required": ["id", "task", "dep", "args"], "additionalProperties": False}


def plan_grammar(files: list[str], max_subtasks: int) -> dict[str, Any]:
    """The bounded plan schema for a run with these attached ``files``."""
    offered = {t.name: args for t in task_types() if (args := _args(t, files)) is not None}
    length = min(MAX_PLAN, max_subtasks)
    positions = [{"anyOf": [_subtask(i, name, args) for name, args in offered.items()]}
                 for i in range(length)]
    return {"type": "object",
            "properties": {"subtasks": {"type": "array", "prefixItems": positions,
                                        "items": False, "maxItems": length}},
            "required": ["subtasks"], "additionalProperties": False}
