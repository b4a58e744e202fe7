"""The HuggingGPT graph: state, settings, checkpointers and the compiled graph.

``from graph import build_graph, graph``: the two are loaded on first access so that
importing ``graph.state`` from a node does not build the graph.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_graph", "graph", "Context", "State", "InputState", "OutputState"]


def __getattr__(name: str) -> Any:
    if name in ("build_graph", "graph"):
        from graph import builder

        return getattr(builder, name)
    if name == "Context":
        from graph.context import Context

        return Context
    if name in ("State", "InputState", "OutputState"):
        from graph import state

        return getattr(state, name)
    raise AttributeError(f"module 'graph' has no attribute {name!r}")
