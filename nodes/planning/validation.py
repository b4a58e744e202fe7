"""Reading and checking plans in code: the planner LLM proposes, this module disposes.

:func:`parse_plan_text` finds a plan in whatever an LLM wrote (bare JSON, JSON in a
code fence or in prose). :func:`validate_plan` checks the DAG against the task-type
registry and returns every problem it finds, worded so that the LLM can repair them.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import ValidationError

from hugginggpt.graph.state import Subtask
from hugginggpt.tools.errors import Control, Fix
from hugginggpt.tools.experts.tasks import Arg, get_task_type, task_types
from hugginggpt.tools.kinds import (
    generated_ref,
    generated_refs,
    is_text_file,
    is_url,
    kind_of_literal,
)
from hugginggpt.tools.llm.replies import json_candidates
from hugginggpt.tools.text import clip

__all__ = [
    "PlanParseError", "parse_plan_text", "plan_items", "plan_from_json", "plan_object",
    "PLAN_FORMAT", "validate_plan", "limit_fix", "MAX_ARG_CHARS", "MAX_PROBLEMS",
]

MAX_ARG_CHARS = 100_000
"""The longest argument value a plan may carry (state, checkpoints and prompts hold it)."""
MAX_PROBLEMS = 20
"""Problems listed for one plan; the rest are counted (they go back to the LLM)."""

PLAN_FORMAT = 'a JSON list of subtasks or {"subtasks": [...]}'
"""What a plan given by a person or a program is (HuggingGPT's format)."""


class PlanParseError(ValueError):
    """No plan could be read: from an LLM reply (kept in ``reply``), or from a plan
    given as data."""

    reply: str = ""


def _described(data: Any) -> str:
    if isinstance(data, dict):
        return f"an object with keys {sorted(map(str, data))[:8]}"
    if isinstance(data, str):
        return "text"
    return "null" if data is None else f"a {type(data).__name__}"


def plan_object(data: Any, what: str) -> list[Any]:
    """The subtasks of a plan given as data: a list, or an object whose ``subtasks`` is
    a list. Nothing else is taken for a plan (not JSON text, not a lone subtask).

    Args:
        what: how the message names the plan ("the edited plan").

    Raises:
        PlanParseError: ``data`` is not a plan; the message says what it is instead.
    """
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and "subtasks" in data:
        if isinstance(data["subtasks"], list):
            return data["subtasks"]
        raise PlanParseError(f"{what} is not a plan: its 'subtasks' holds "
                             f"{_described(data['subtasks'])}, not a list of subtasks")
    hint = " (give the plan itself, not JSON text)" if isinstance(data, str) else ""
    raise PlanParseError(f"{what} is not a plan: expected {PLAN_FORMAT}, not "
                         f"{_described(data)}{hint}")


def plan_from_json(text: str, what: str) -> list[Any]:
    """The subtasks of a plan written as JSON (a plan file): strict JSON, then
    :func:`plan_object`. A file cut short is refused, not run in part.

    Raises:
        PlanParseError: not JSON (the message gives the line and column) or not a plan.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        ended = exc.pos >= len(text.rstrip())
        raise PlanParseError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            + (" (the text ends there: is it cut short?)" if ended and text.strip() else "")
            + f"; a plan is {PLAN_FORMAT}"
        ) from None
    return plan_object(data, what)


def plan_items(data: Any) -> list[Any]:
    """The list of subtasks in a decoded reply: a list, or an object holding one under
    ``subtasks``/``tasks``/``plan``, or a single subtask object."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("subtasks", "tasks", "plan", "task_nodes"):
            if isinstance(data.get(key), list):
                return data[key]
        if "task" in data:
            return [data]
    raise PlanParseError(
        "the reply is JSON but not a plan: expected a list of subtasks or "
        '{"subtasks": [...]}'
    )


def parse_plan_text(text: str) -> list[Any]:
    """Find the plan in an LLM reply.

    Raises:
        PlanParseError: nothing in the text decodes to a plan.
    """
    if not text or not text.strip():
        raise PlanParseError("the reply was empty")
    last_error: PlanParseError | None = None
    for candidate in json_candidates(text):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        try:
            return plan_items(data)
        except PlanParseError as exc:
            last_error = exc
    raise last_error or PlanParseError(
        "the reply contains no JSON: answer with a JSON list of subtasks only"
    )


def _format_pydantic_error(position: int, exc: ValidationError) -> list[str]:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "subtask"
        problems.append(f"subtask #{position}: {where}: {err['msg']}")
    return problems


def _find_cycle(deps: dict[int, list[int]]) -> list[int] | None:
    """A cycle in the dependency graph, as a path that returns to its start; None if
    there is none. Iterative, so a long chain cannot exhaust the recursion limit."""
    state: dict[int, int] = {}  # 1: on the current path, 2: finished
    for start in deps:
        if start in state:
            continue
        path: list[int] = [start]
        pending = [iter(deps[start])]
        state[start] = 1
        while pending:
            nxt = next(pending[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                pending.pop()
            elif nxt in deps and state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            elif nxt in deps and nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                pending.append(iter(deps[nxt]))
    return None


def limit_fix(items: list[Any], max_subtasks: int) -> Fix | None:
    """What to do about a plan of more subtasks than ``max_subtasks`` (its only problem
    then): raise the limit; None for a plan within it."""
    if len(items) <= max_subtasks:
        return None
    return Fix(say="raise the limit with {}", controls=[Control(kind="limit",
                                                                name="max_subtasks")])


def validate_plan(
    items: list[Any], *, max_subtasks: int, max_arg_chars: int = MAX_ARG_CHARS
) -> tuple[list[Subtask], list[str]]:
    """Check a plan; return the normalised subtasks and the list of problems.

    A plan is valid when the problem list is empty. Checks: the number of subtasks (a
    plan over the limit is not examined further), each subtask's shape, unique ids, known
    task types, dependencies that exist, precede and form no cycle, ``<GENERATED>-k``
    only for declared dependencies and only where subtask k produces the kind the
    argument needs (a whole value), or has a text form (embedded, any number of times,
    in a text argument; never in a file argument or a parameter), argument names the
    task type knows, required arguments present, argument values without NUL bytes and
    at most ``max_arg_chars`` long, and literal values of the right kind. At most
    :data:`MAX_PROBLEMS` problems are listed.
    """
    problems: list[str] = []
    if len(items) > max_subtasks:  # not examined further: bounded work on any input
        return [], [
            f"the plan has {len(items)} subtasks but at most {max_subtasks} are allowed: "
            f"merge or drop steps (limit max_subtasks={max_subtasks})"
        ]
    subtasks: list[Subtask] = []
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            problems.append(f"subtask #{position} is not an object: {clip(repr(item), 80)}")
            continue
        try:
            subtasks.append(Subtask.model_validate(item))
        except ValidationError as exc:
            problems.extend(_format_pydantic_error(position, exc))

    position_of: dict[int, int] = {}
    for position, st in enumerate(subtasks):
        if st.id in position_of:
            problems.append(f"subtask id {st.id} is used twice: ids must be unique")
        position_of.setdefault(st.id, position)

    known = [t.name for t in task_types()]
    task_of: dict[int, str] = {}
    for st in subtasks:
        task_type = get_task_type(st.task)
        if task_type is None:
            problems.append(
                f"subtask {st.id}: unknown task type {clip(repr(st.task), 60)}"
                f" ({_closest(st.task, known)})")
        else:
            st.task = task_type.name
            task_of[st.id] = task_type.name

    deps = {st.id: st.dep for st in subtasks}
    cycle = _find_cycle(deps)
    if cycle:
        problems.append("the dependencies form a cycle: " + " -> ".join(map(str, cycle)))
    for st in subtasks:
        for dep in st.dep:
            if dep == st.id:
                continue  # reported as a cycle
            if dep not in position_of:
                problems.append(f"subtask {st.id} depends on subtask {dep}, which does not exist")
            elif not cycle and position_of[dep] > position_of[st.id]:
                problems.append(
                    f"subtask {st.id} depends on subtask {dep}, which comes after it: "
                    "list dependencies first"
                )

    for st in subtasks:
        task_type = get_task_type(st.task)
        if task_type is None:
            continue
        for name, value in st.args.items():
            arg = task_type.arg(name)
            if arg is None:
                names = ", ".join(a.name for a in task_type.args)
                problems.append(f"subtask {st.id} ({st.task}): unknown argument "
                                f"{clip(repr(name), 60)} (expected: {names})")
                continue
            if "\x00" in value:
                problems.append(f"subtask {st.id}: argument {name!r} contains a NUL byte: "
                                "remove it")
                continue
            if len(value) > max_arg_chars:
                problems.append(
                    f"subtask {st.id}: argument {name!r} is {len(value)} characters long, "
                    f"over the limit of {max_arg_chars}: shorten it, or put the text in a "
                    "file"
                )
                continue
            ref = generated_ref(value)
            refs = generated_refs(value)
            if refs and ref is None:
                problems.extend(_embedded_problems(st, name, arg, refs, task_of))
            elif ref is not None:
                if ref not in st.dep:
                    problems.append(
                        f"subtask {st.id}: argument {name!r} uses <GENERATED>-{ref} but {ref} "
                        f"is not in its dep list {st.dep}"
                    )
                    continue
                source_task = get_task_type(task_of.get(ref, ""))
                if source_task is None:
                    continue
                if not arg.is_data:
                    problems.append(
                        f"subtask {st.id}: argument {name!r} is a parameter and cannot be "
                        f"<GENERATED>-{ref}"
                    )
                elif source_task.output_for(str(arg.kind)) is None:
                    outs = ", ".join(sorted(source_task.output_kinds))
                    problems.append(
                        f"subtask {st.id} ({st.task}): argument {name!r} needs {arg.kind}, but "
                        f"subtask {ref} ({source_task.name}) produces {outs}"
                    )
            elif (arg.is_data and (literal := kind_of_literal(value)) != arg.kind
                  and not (is_url(value) and literal == "text")  # typed when fetched
                  and not (arg.kind == "text" and is_text_file(value))):  # a CSV's text
                problems.append(
                    f"subtask {st.id} ({st.task}): argument {name!r} needs {arg.kind}, but "
                    f"{clip(repr(value), 60)} is {'an' if literal[0] in 'aeiou' else 'a'} {literal}"
                    + (" value" if literal == "text" else " file")
                )
        for arg in task_type.args:
            if arg.required and arg.name not in st.args:
                problems.append(
                    f"subtask {st.id} ({st.task}): missing required argument {arg.name!r}"
                )
    if len(problems) > MAX_PROBLEMS:
        problems[MAX_PROBLEMS:] = [f"... and {len(problems) - MAX_PROBLEMS} more problems"]
    return subtasks, problems


def _embedded_problems(st: Subtask, name: str, arg: Arg, refs: list[int],
                       task_of: dict[int, str]) -> list[str]:
    """What is wrong with references embedded in the text of argument ``name``.

    Only a text argument may combine outputs with text: a file cannot be spliced into a
    sentence, and a parameter (a language code, labels) is the planner's to write. Each
    reference must be a declared dependency whose task has an output with a text form
    (text, labels, a number), so that it can be filled in where it stands.
    """
    where = f"subtask {st.id} ({st.task}): argument {name!r}"
    if not arg.is_data:
        return [f"{where} is a parameter and cannot contain <GENERATED>-{refs[0]}: "
                "write its value out"]
    if arg.kind != "text":
        return [f"{where} needs {arg.kind} and embeds <GENERATED>-{refs[0]} in other text; a "
                f"reference to {'an' if str(arg.kind)[0] in 'aeiou' else 'a'} {arg.kind} "
                f"must be the whole value (\"<GENERATED>-{refs[0]}\")"]
    problems = []
    for ref in refs:
        if ref not in st.dep:
            problems.append(f"{where} embeds <GENERATED>-{ref} but {ref} is not in its dep "
                            f"list {st.dep}")
            continue
        source = get_task_type(task_of.get(ref, ""))
        if source is not None and source.output_for("text") is None:
            outs = ", ".join(sorted(source.output_kinds))
            problems.append(
                f"{where} embeds <GENERATED>-{ref}, but subtask {ref} ({source.name}) "
                f"produces {outs}, which has no text form to fill in; only text, labels "
                "or a number can be combined with text")
    return problems


def _closest(task: str, known: list[str]) -> str:
    """The known task types nearest to ``task`` by spelling, and where to find them all
    (the planner's prompt lists them; a message stays short however many there are)."""
    near = difflib.get_close_matches(task.lower()[:200], known, n=3, cutoff=0.6)
    where = f"one of the {len(known)} task types the planner prompt lists"
    if near:
        return f"did you mean {' or '.join(near)}? It must be {where}"
    return f"it must be {where}"
