"""The served graph's additions to the LangGraph server: auth (``auth.py``, the
``auth.path`` of ``langgraph.json``) and HTTP routes (``webapp.py``, its ``http.app``):
artifact downloads and the OpenAI-compatible chat API."""
