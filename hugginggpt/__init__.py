"""HuggingGPT on LangGraph: an LLM plans, Hugging Face experts execute.

The public Python API::

    import hugginggpt

    result = hugginggpt.run("Summarise this: ...", backend="lite")   # or await arun(...)
    print(result.status, result.response, result.artifacts)

    from hugginggpt import build_graph, Context, open_checkpointer, tool   # the parts

Names are imported on first use (PEP 562), so ``import hugginggpt`` stays cheap and a
module deep in the package can be imported without building the graph.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# ``graph`` (the compiled graph) is left out here: ``hugginggpt.graph`` also names the
# subpackage, and static readers (mypy, the docs' Griffe) would take one for the other.
if TYPE_CHECKING:
    from hugginggpt.api import RunResult, aresume, arun, resume, run
    from hugginggpt.graph.builder import build_graph
    from hugginggpt.graph.checkpoint import aopen_checkpointer, open_checkpointer
    from hugginggpt.graph.context import Context, SettingsError
    from hugginggpt.graph.state import InputState, OutputState, State
    from hugginggpt.tools.experts.as_langchain import langchain_tools
    from hugginggpt.tools.experts.registry import ToolContext, register_tool, tool

_EXPORTS = {
    "run": "hugginggpt.api",
    "arun": "hugginggpt.api",
    "resume": "hugginggpt.api",
    "aresume": "hugginggpt.api",
    "RunResult": "hugginggpt.api",
    "build_graph": "hugginggpt.graph.builder",
    "graph": "hugginggpt.graph.served",
    "Context": "hugginggpt.graph.context",
    "SettingsError": "hugginggpt.graph.context",
    "State": "hugginggpt.graph.state",
    "InputState": "hugginggpt.graph.state",
    "OutputState": "hugginggpt.graph.state",
    "open_checkpointer": "hugginggpt.graph.checkpoint",
    "aopen_checkpointer": "hugginggpt.graph.checkpoint",
    "tool": "hugginggpt.tools.experts.registry",
    "register_tool": "hugginggpt.tools.experts.registry",
    "ToolContext": "hugginggpt.tools.experts.registry",
    "langchain_tools": "hugginggpt.tools.experts",
}

__all__ = [
    "Context",
    "RunResult",
    "SettingsError",
    "InputState",
    "OutputState",
    "State",
    "ToolContext",
    "aopen_checkpointer",
    "aresume",
    "arun",
    "build_graph",
    "graph",
    "langchain_tools",
    "open_checkpointer",
    "register_tool",
    "resume",
    "run",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hugginggpt' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
