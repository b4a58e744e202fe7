"""Wires the stages into a graph and compiles it.

    START -> plan -(valid)-> select -(anything to run)-> approve -> execute -> respond -> END
              |  \\-(invalid, retries left)-> plan
              |   \\-(empty plan: no tools needed)-> respond
              \\-(invalid, no retries left / no LLM / LLM down)-> abort -> END
    select -(no subtask has a model)-> execute (each fails with the reason) -> respond
    approve -(policy satisfied)-> execute, -(plan edited)-> select, -(rejected)-> abort,
            -(approval needed)-> approve (the state says ``waiting``, then it asks)

While the plan streams, the plan node hands each complete subtask to the execute stage's
:class:`~hugginggpt.nodes.execute.StreamedExecution`, given to it here: the stages do not
import each other.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from hugginggpt.graph.checkpoint import register_state_types, store_of
from hugginggpt.graph.context import Context
from hugginggpt.graph.state import InputState, OutputState, State
from hugginggpt.nodes import (
    StreamedExecution,
    abort,
    aexecute,
    approve,
    execute,
    plan,
    respond,
    route_after_plan,
    route_after_select,
    select,
)

__all__ = ["build_graph"]

MAX_CONCURRENCY = 64
"""Upper bound on subtasks running at once (the plan size limit is far lower)."""


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None, *,
    context_schema: type[Context] = Context, **compile_kwargs: Any
) -> CompiledStateGraph[State, Context, InputState, OutputState]:
    """Build and compile the HuggingGPT graph.

    Args:
        checkpointer: where to save checkpoints; needed to resume a thread. None for the
            LangGraph server, which brings its own.
        context_schema: what a run's ``context`` becomes: :class:`Context` (every
            setting), or :class:`ServedContext` for the server (a caller's settings
            only, the rest the deployment's).
        **compile_kwargs: passed to ``StateGraph.compile`` (``store``,
            ``interrupt_before``, ...).
    """
    builder = StateGraph(
        State, context_schema=context_schema, input_schema=InputState, output_schema=OutputState
    )
    # the plan stage hands each subtask over to execution while the plan streams
    builder.add_node("plan", partial(plan, handover=StreamedExecution))
    builder.add_node("select", select)
    builder.add_node("approve", approve,
                     destinations=("approve", "execute", "select", "abort"))
    # one node, two bodies: invoke/stream run execute, ainvoke/astream and the server aexecute
    builder.add_node("execute", RunnableLambda(execute, afunc=aexecute, name="execute"))
    builder.add_node("respond", respond)
    builder.add_node("abort", abort)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", route_after_plan, ["select", "respond", "plan", "abort"])
    builder.add_conditional_edges("select", route_after_select, ["approve", "execute"])
    builder.add_edge("execute", "respond")
    builder.add_edge("respond", END)
    builder.add_edge("abort", END)
    # the store opened beside the checkpointer keeps the LLM calls' prompts and replies
    compile_kwargs.setdefault("store", store_of(checkpointer))
    compiled = builder.compile(checkpointer=checkpointer, name="hugginggpt", **compile_kwargs)
    return compiled.with_config(max_concurrency=MAX_CONCURRENCY)


register_state_types()
