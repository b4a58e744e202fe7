"""Makes ``old_thread.sqlite``: a thread of two runs checkpointed by the code before
issue 16 (main's commit a8304c7), whose ``llm_calls`` hold every run's records with
their prompts and replies inline. ``tests/test_checkpoint_growth.py`` traces and replays
it with today's code.

    git archive a8304c7 | tar -x -C /tmp/old && python /tmp/old/scripts/installed_tree.py true
    PYTHONPATH=/tmp/old/build/installed-tree python tests/data/make_old_thread.py
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from llm_server import ScriptedLLMServer  # noqa: E402

from hugginggpt.cli import main  # noqa: E402

PLAN = {"subtasks": [{"id": 0, "task": "translation", "dep": [],
                      "args": {"text": "hello", "tgt_lang": "fr"}}]}

with tempfile.TemporaryDirectory() as folder:
    server = ScriptedLLMServer().start()
    try:
        for n, answer in enumerate(("Bonjour.", "Salut.")):
            server.script("planner", {"tool_args": PLAN})
            server.script("responder", {"content": answer})
            code = main(["run", f"Translate hello into French ({n})", "--llm", "scripted",
                         "--llm-base-url", server.url, "--dry-run", "--latency-scale",
                         "0.01", "--planner", "llm", "--thread", "old", "--workspace",
                         folder])
            assert code == 0
    finally:
        server.stop()
    target = HERE / "old_thread.sqlite"
    shutil.copy(Path(folder) / "checkpoints.sqlite", target)
    with sqlite3.connect(target) as conn:
        conn.execute("VACUUM")
