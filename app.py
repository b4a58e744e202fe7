"""HuggingGPT's web UI as a Hugging Face Space, or on any host that runs ``python app.py``.

A Space of the Gradio SDK runs this file; the Space's README.md header says so
(``space/README.md`` holds it; the README's "Web UI" section says how to deploy). It
serves the same page as ``hugginggpt ui``, embedded: the graph in this process, with
the settings of the environment (``HUGGINGGPT_BACKEND``, ``HUGGINGGPT_APPROVAL``,
``OPENAI_API_KEY`` for an LLM, ...), offline without them.

The package need not be installed: from a plain checkout (a Space's files) the folders
are mapped to their import names here, as ``pyproject.toml``'s ``package-dir`` does.
``demo`` is the page (Gradio's reload mode and Spaces look for it); it is served only
when the file is run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def _importable() -> None:
    """Import ``hugginggpt`` installed, or else from this checkout: ``hugginggpt/`` is
    the front door and ``graph/``, ``nodes/``, ``tools/`` beside it are
    ``hugginggpt.graph``, ``.nodes`` and ``.tools``, so the package's search path gets
    this folder too."""
    try:
        import hugginggpt.graph.context  # noqa: F401
        return
    except ModuleNotFoundError:
        pass
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import hugginggpt

    if str(ROOT) not in hugginggpt.__path__:
        hugginggpt.__path__.append(str(ROOT))


_importable()

from hugginggpt.graph.context import Context  # noqa: E402  (after the mapping above)
from hugginggpt.ui import quiet_gradio  # noqa: E402

quiet_gradio()  # analytics off and a temporary folder, before Gradio is imported

from hugginggpt.ui.app import build_app, serve  # noqa: E402
from hugginggpt.ui.runners import EmbeddedRunner  # noqa: E402

runner = EmbeddedRunner(Context(caller="ui"))
demo = build_app(runner, approval=Context().approval)

if __name__ == "__main__":
    # a Space sets GRADIO_SERVER_NAME=0.0.0.0; elsewhere this machine only
    serve(demo, runner, host=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
          port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
