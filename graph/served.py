"""The graph that ``langgraph.json`` names (``hugginggpt.graph.served:graph``).

Compiled when this module is imported, without a checkpointer (the LangGraph server and
``langgraph dev`` bring their own), and with :class:`ServedContext`: callers set only
their own settings, the rest are the deployment's. langgraph-api reads the module's
namespace, so ``graph`` is a plain attribute built at import.

It lives apart from :mod:`~hugginggpt.graph.builder` so that the CLI and the Python API,
which build their own graph with a checkpointer, do not compile this one too.
"""

from __future__ import annotations

from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.callers import ServedContext

__all__ = ["graph"]

graph = build_graph(context_schema=ServedContext)
"""The graph without a checkpointer, for ``langgraph dev`` and the LangGraph server."""
