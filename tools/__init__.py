"""What talks to a model or the world: the experts (``tools.experts``), the LLM client
(``tools.llm``) and the I/O helpers (artifacts, inputs, URL fetching, redaction).

Nothing here imports from ``hugginggpt.nodes`` or ``hugginggpt.graph``.
"""
