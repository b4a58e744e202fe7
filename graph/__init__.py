"""The graph: typed state, per-run settings, checkpointers, and the builder.

``hugginggpt.graph.served:graph`` is the compiled graph that ``langgraph.json`` names.
This package's ``__init__`` imports nothing, so that ``hugginggpt.graph.state`` can be
read by the nodes without building the graph.
"""
