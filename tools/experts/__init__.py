"""Adapters to Hugging Face models and other engines, the task-type registry and the
model catalog. Nothing here imports from ``nodes`` or ``graph``.

Every registered expert is also a LangChain tool (:func:`langchain_tools`).

Registering a tool for a task type::

    from hugginggpt.tools.experts import tool

    @tool("text-classification", backend="mine", models=["me/my-classifier"])
    def classify(text: str) -> list[dict]:
        ...
"""

from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.errors import (
    ArgumentError,
    HuggingGPTError,
    LimitExceededError,
    LLMCallError,
    LLMNotConfiguredError,
    ToolDefinitionError,
    ToolExecutionError,
    ToolOutputError,
    ToolTimeoutError,
    TransientToolError,
)
from hugginggpt.tools.experts import (  # noqa: F401  (register the tools)
    dry_run,
    hf_inference,
    lite,
    llm,
    local,
    ray,
)
from hugginggpt.tools.experts.as_langchain import langchain_tools
from hugginggpt.tools.experts.catalog import Catalog, ModelCard, load_catalog
from hugginggpt.tools.experts.registry import (
    Tool,
    ToolContext,
    find_tools,
    register_tool,
    registered_tools,
    tool,
    unregister_tool,
)
from hugginggpt.tools.experts.tasks import (
    Arg,
    Output,
    TaskType,
    get_task_type,
    register_task_type,
    task_types,
)

__all__ = [
    "Arg",
    "ArgumentError",
    "ArtifactStore",
    "Catalog",
    "HuggingGPTError",
    "LimitExceededError",
    "LLMCallError",
    "LLMNotConfiguredError",
    "ModelCard",
    "Output",
    "TaskType",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolOutputError",
    "ToolTimeoutError",
    "TransientToolError",
    "find_tools",
    "get_task_type",
    "is_artifact_ref",
    "langchain_tools",
    "load_catalog",
    "register_task_type",
    "register_tool",
    "registered_tools",
    "task_types",
    "tool",
    "unregister_tool",
]
