"""The registered experts as LangChain tools, for a LangGraph ``ToolNode``, an agent from
``create_agent``, or anything else that takes a LangChain ``BaseTool``.

Each registered tool of a real backend becomes one
:class:`~langchain_core.tools.StructuredTool`: its name (backend, task type and, for an
engine with one model, that model), a description from the task type, the tool's
docstring and the model card, and a JSON schema of the arguments it takes (from its
signature, typed and described by the task type's arguments, with ``model`` as an
optional choice among the catalog's models where the tool runs more than one).

What a call does is what a subtask does, without the graph: file arguments are paths
inside the workspace (resolved and checked like a plan's inputs: nothing outside it is
read), the tool runs, and its outputs are checked against the task type and returned as
JSON-able data, with files (images, audio, long texts) as artifact references that name
their ``path`` in the workspace and their absolute ``file``. A failure the tool reports
(bad input, a model that cannot run, an endpoint error) comes back as an error message
(``ToolException``), never as a traceback.

Example::

    from langgraph.prebuilt import ToolNode
    from hugginggpt.tools.experts import langchain_tools

    node = ToolNode(langchain_tools(backend="lite", tasks=["text-classification"]))
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.errors import HuggingGPTError
from hugginggpt.tools.experts.availability import model_cards
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.outputs import normalize_outputs
from hugginggpt.tools.experts.registry import ANY_TASK, Tool, ToolContext, registered_tools
from hugginggpt.tools.experts.tasks import Arg, TaskType, get_task_type
from hugginggpt.tools.inputs import resolve_input_file
from hugginggpt.tools.kinds import FILE_KINDS
from hugginggpt.tools.threads import TOOL_POOL, in_thread

__all__ = ["langchain_tools", "tool_schema"]

_MAX_NAME = 64  # what OpenAI and most providers accept for a tool name
_MB = 1024 * 1024


def _name(tool: Tool) -> str:
    models = tool.models or ()
    which = f"_{models[0].rsplit('/', 1)[-1]}" if len(models) == 1 else ""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{tool.backend}_{tool.task}{which}")[:_MAX_NAME]


def _models(tool: Tool, catalog_path: str | Path) -> list[str]:
    """The models a tool can be asked for, those that can run now first, the catalog's
    most downloaded first among them."""
    if tool.models:
        return list(tool.models)
    cards = sorted(model_cards(tool.task, load_catalog(catalog_path)),
                   key=lambda c: (not tool.can_run(c.id), -c.downloads))
    return [c.id for c in cards]


def _argument(arg: Arg) -> dict[str, Any]:
    if arg.kind in FILE_KINDS:
        what = f"path of {'an' if arg.kind[0] in 'aeiou' else 'a'} {arg.kind} file inside " \
               "the workspace"
    else:
        what = arg.description or arg.name
    return {"type": "string", "description": what}


def tool_schema(tool: Tool, models: list[str]) -> dict[str, Any]:
    """The JSON schema of a tool's arguments: the task type's arguments the tool takes
    (files as paths inside the workspace), and ``model`` where there is a choice."""
    task_type = get_task_type(tool.task)
    assert task_type is not None
    props: dict[str, Any] = {}
    required = []
    for arg in task_type.args:
        if arg.name in tool.arg_names:
            props[arg.name] = _argument(arg)
            if arg.required:
                required.append(arg.name)
    if tool.wants_model and len(models) > 1:
        props["model"] = {"type": "string", "enum": models, "default": models[0],
                          "description": "the model to run (default: the first)"}
    return {"title": _name(tool), "type": "object", "properties": props,
            "required": required}


def _description(tool: Tool, task_type: TaskType, models: list[str],
                 catalog_path: str | Path) -> str:
    outputs = ", ".join(f"{o.name} ({o.kind})" for o in task_type.outputs)
    parts = [f"{task_type.description} Task type {task_type.name} on the {tool.backend} "
             f"backend; returns {outputs}."]
    if tool.description:
        parts.append(tool.description)
    card = next((c for c in model_cards(tool.task, load_catalog(catalog_path))
                 if models and c.id == models[0]), None)
    if card is not None and card.description:
        parts.append(f"Model {card.id}: {card.description}")
    elif models:
        parts.append(f"Model: {models[0]}.")
    return " ".join(parts)[:1024]


def _run_async(fn: Any, kwargs: dict[str, Any]) -> Any:
    """An async tool from sync code: on this thread, or on a pool thread when this one
    already runs a loop (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(fn(**kwargs))
    return TOOL_POOL.submit(asyncio.run, fn(**kwargs)).result()


class _Call:
    """One expert as a LangChain tool's function: arguments checked, files resolved in the
    workspace, the tool run, its outputs checked and returned with artifact paths."""

    def __init__(self, tool: Tool, models: list[str], workspace: Path, thread_id: str,
                 max_file_mb: float) -> None:
        self.tool, self.models = tool, models
        self.workspace, self.thread_id = workspace, thread_id
        self.max_bytes = int(max_file_mb * _MB)
        task_type = get_task_type(tool.task)
        assert task_type is not None
        self.task_type = task_type

    def _prepare(self, given: dict[str, Any]) -> tuple[dict[str, Any], str, ToolContext]:
        args = {k: v for k, v in given.items() if v is not None}
        model = str(args.pop("model", None) or (self.models[0] if self.models else ""))
        if self.models and model not in self.models:
            raise ToolException(f"{_name(self.tool)}: no model {model!r}; choose one of "
                                f"{', '.join(self.models)}")
        unknown = sorted(set(args) - set(self.tool.arg_names))
        if unknown:
            raise ToolException(f"{_name(self.tool)} takes no argument {', '.join(unknown)} "
                                f"(its arguments: {', '.join(self.tool.arg_names)})")
        for arg in self.task_type.args:
            value = args.get(arg.name)
            if arg.name not in self.tool.arg_names or value is None:
                if arg.required and arg.name in self.tool.arg_names:
                    raise ToolException(f"{_name(self.tool)} needs the argument {arg.name}")
                continue
            if not isinstance(value, str):
                raise ToolException(f"{arg.name} must be text, not {type(value).__name__}")
            if arg.kind in FILE_KINDS:
                try:
                    args[arg.name] = resolve_input_file(value, self.workspace, (),
                                                        self.max_bytes)
                except HuggingGPTError as exc:
                    raise ToolException(str(exc)) from exc
        store = ArtifactStore(self.workspace, self.thread_id)
        context = ToolContext(subtask_id=0, task=self.tool.task, model=model, artifacts=store)
        return self.tool.call_kwargs(args, model, context), model, context

    def _result(self, value: Any, model: str, context: ToolContext) -> tuple[str, dict[str, Any]]:
        try:
            outputs = normalize_outputs(self.task_type, value, context.artifacts)
        except HuggingGPTError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc
        for name, out in outputs.items():
            if is_artifact_ref(out):
                outputs[name] = {**out, "file": str(context.artifacts.resolve(out))}
        result = {"task": self.tool.task, "backend": self.tool.backend, "model": model,
                  "outputs": outputs}
        if context.confidence is not None:  # how sure the engine was, as a run keeps it
            result["confidence"] = context.confidence.model_dump(mode="json")
        return json.dumps(result, ensure_ascii=False), result

    def run(self, **given: Any) -> tuple[str, dict[str, Any]]:
        kwargs, model, context = self._prepare(given)
        try:
            value = _run_async(self.tool.fn, kwargs) if self.tool.is_async \
                else self.tool.fn(**kwargs)
        except HuggingGPTError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc
        return self._result(value, model, context)

    async def acall(self, **given: Any) -> tuple[str, dict[str, Any]]:
        kwargs, model, context = await in_thread(self._prepare, given)
        try:
            value = await (self.tool.fn(**kwargs) if self.tool.is_async
                           else in_thread(self.tool.fn, **kwargs))
        except HuggingGPTError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc
        return await in_thread(self._result, value, model, context)


def langchain_tools(
    backend: str | Iterable[str] | None = None,
    tasks: Iterable[str] | None = None,
    *,
    workspace: str | Path = "hugginggpt-workspace",
    catalog: str | Path | None = None,
    thread_id: str = "langchain",
    max_file_mb: float = 100.0,
) -> list[BaseTool]:
    """The registered experts as LangChain tools.

    Args:
        backend: one backend (``"lite"``, ``"hf-inference"``, ``"local"``, a plugin's) or
            several; None for every real backend (the simulated experts are never
            offered).
        tasks: task types (names or aliases) to offer; None for all.
        workspace: where file arguments are read and outputs are written
            (``artifacts/<thread_id>/``).
        catalog: the model catalog that names the models of tools without models of
            their own (None: the shipped one).
        thread_id: the artifact folder's name.
        max_file_mb: the largest input file a call may read.

    Returns:
        One tool per registered expert, in registration order.

    Raises:
        ValueError: a task type is unknown.
    """
    backends = {backend} if isinstance(backend, str) else set(backend) if backend else None
    wanted: set[str] | None = None
    if tasks is not None:
        wanted = set()
        for name in tasks:
            task_type = get_task_type(name)
            if task_type is None:
                raise ValueError(f"no task type named {name!r}")
            wanted.add(task_type.name)
    catalog_path = catalog or DEFAULT_CATALOG
    root = Path(workspace).resolve()
    made: list[BaseTool] = []
    names: set[str] = set()
    for tool in registered_tools():
        if tool.simulated or tool.task == ANY_TASK:
            continue
        if (backends is not None and tool.backend not in backends) or (
                wanted is not None and tool.task not in wanted):
            continue
        task_type = get_task_type(tool.task)
        assert task_type is not None
        models = _models(tool, catalog_path)
        name = _name(tool)
        while name in names:
            name = f"{name[:_MAX_NAME - 2]}_{len(names)}"
        names.add(name)
        call = _Call(tool, models, root, thread_id, max_file_mb)
        made.append(StructuredTool.from_function(
            func=call.run, coroutine=call.acall, name=name,
            description=_description(tool, task_type, models, catalog_path),
            args_schema=tool_schema(tool, models), infer_schema=False,
            response_format="content_and_artifact", handle_tool_error=True,
            metadata={"task": tool.task, "backend": tool.backend, "risk": tool.risk}))
    return made
