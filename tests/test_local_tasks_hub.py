"""The catalog's local defaults as a user gets them: tiny models of the same
architectures, served by the mini-hub under the catalog's own repo ids, downloaded with
the real ``snapshot_download``, then run by the local tools from the Hugging Face cache
with the server stopped and offline mode on (hub ids, not directories)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import test_local_tasks as checks
from tests.mini_hub import MiniHub

_DOWNLOAD = textwrap.dedent("""
    import json, sys
    from huggingface_hub import snapshot_download
    repos = json.loads(sys.argv[1])
    print(json.dumps({repo: snapshot_download(repo) for repo in repos}))
""")
_RUN = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import hugginggpt.tools.experts.local as local
    from hugginggpt.tools.experts import ArtifactStore, ToolContext
    from hugginggpt.tools.experts.outputs import normalize_outputs
    from hugginggpt.tools.experts.registry import registered_tools
    from hugginggpt.tools.experts.tasks import get_task_type
    from tests.test_local_tasks import _args, _media

    defaults, folder = json.loads(sys.argv[1]), Path(sys.argv[2])
    media = _media(folder)
    report = {}
    for task, repo in defaults.items():
        [tool] = [t for t in registered_tools() if t.backend == "local" and t.task == task]
        if not local.is_available(repo):
            report[task] = "not available"
            continue
        store = ArtifactStore(folder / task)
        ctx = ToolContext(subtask_id=0, task=task, model=repo, artifacts=store)
        try:
            value = tool.fn(**tool.call_kwargs(_args(task, media), repo, ctx))
            outputs = normalize_outputs(get_task_type(task), value, store)
            report[task] = sorted(outputs)
        except Exception as exc:
            report[task] = f"{type(exc).__name__}: {exc}"[:300]
        local.clear_loaded()
    print(json.dumps(report))
""")


def test_the_catalog_defaults_download_from_the_mini_hub_and_run_from_the_cache(
    monkeypatch, tmp_path, tmp_path_factory
):
    defaults = {task: card for task, card in checks.local_defaults(monkeypatch).items()
                if card is not None}
    assert set(defaults) == set(checks.local.TOOLS)  # every local tool has a default
    root = tmp_path_factory.getbasetemp() / "tiny-archs"
    built: dict[tuple[str, str], Path] = {}
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"),
           "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PYTHONPATH": str(Path.cwd())}
    env.pop("HF_HUB_OFFLINE", None)
    with MiniHub() as hub:
        for card in defaults.values():
            builder = checks._TINY_ARCHITECTURES.get(card.architecture or "") or \
                checks._library_builder(card.library_name)
            assert builder is not None, card.id
            folder = checks._build(built, *builder, root)
            if card.id not in hub.repos:
                hub.add_model(card.id, folder, info={"library_name": card.library_name})
        env["HF_ENDPOINT"] = hub.url
        repos = sorted({card.id for card in defaults.values()})
        done = subprocess.run([sys.executable, "-c", _DOWNLOAD, json.dumps(repos)], env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        assert {p.split("/resolve/")[0].lstrip("/") for p in hub.downloads()} == set(repos)
    # the server is gone; offline mode on: every default loads from the cache by its id
    env["HF_HUB_OFFLINE"] = "1"
    work = tmp_path / "work"
    work.mkdir()
    ran = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps({t: c.id for t, c in defaults.items()}),
         str(work)], env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-2000:]
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    failed = {task: why for task, why in report.items() if not isinstance(why, list)}
    assert failed == {}
    assert set(report) == set(defaults)


pytestmark = pytest.mark.timeout(1800)
