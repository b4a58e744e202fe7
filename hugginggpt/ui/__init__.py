"""``hugginggpt ui``: the web UI, a Gradio app over the graph (in-process) or a server.

- :mod:`hugginggpt.ui.view`: what the page shows of a run (its plan, each subtask's
  progress, the answer, the outputs, a pending approval), built from the graph's stream
  and from a thread's state;
- :mod:`hugginggpt.ui.plan_picture`: the plan's DAG drawn as SVG (no script, no CDN);
- :mod:`hugginggpt.ui.runners`: one small interface, two ways to run: embedded
  (:mod:`hugginggpt.api`, offline-capable) or a LangGraph server (``langgraph_sdk``);
- :mod:`hugginggpt.ui.app`: the Gradio page.

Importing this package switches Gradio's analytics and version check off and gives it a
temporary folder of its own, before Gradio is imported (it reads both at import): the UI
works with no internet and tells nobody it ran. Values the user set are kept.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["quiet_gradio"]


def quiet_gradio() -> None:
    """Analytics and version checks off, uploads in a temporary folder of the UI's own
    (``GRADIO_TEMP_DIR``); a value set in the environment wins."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    user = getattr(os, "getuid", lambda: 0)()  # one folder per user: others' are not ours
    folder = Path(tempfile.gettempdir()) / f"hugginggpt-ui-{user}"
    os.environ.setdefault("GRADIO_TEMP_DIR", str(folder))


quiet_gradio()
