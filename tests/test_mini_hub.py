"""The mini-hub is a faithful enough Hub for huggingface_hub's real download code: a
snapshot downloads, loads with the server gone, and a missing repo is a typed error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests import tiny_models
from tests.mini_hub import MiniHub

_CLIENT = textwrap.dedent("""
    import json, sys
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import RepositoryNotFoundError
    info = HfApi().model_info("tiny/clf", files_metadata=True)
    sizes = {s.rfilename: s.size for s in info.siblings}
    planned = {f.filename: f.file_size for f in snapshot_download("tiny/clf", dry_run=True)}
    path = snapshot_download("tiny/clf", revision=info.sha)
    try:
        HfApi().model_info("tiny/nothing")
        missing = "no error"
    except RepositoryNotFoundError:
        missing = "RepositoryNotFoundError"
    print(json.dumps({"sha": info.sha, "library": info.library_name, "sizes": sizes,
                      "planned": planned, "path": path, "missing": missing}))
""")
_OFFLINE = textwrap.dedent("""
    from transformers import pipeline
    print(pipeline("text-classification", model="tiny/clf")("a good movie")[0]["label"])
""")


def test_a_snapshot_downloads_from_the_mini_hub_and_loads_offline(tmp_path):
    folder = tiny_models.build("text-classification", tmp_path / "built")
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    env.pop("HF_HUB_OFFLINE", None)
    with MiniHub() as hub:
        repo = hub.add_model("tiny/clf", folder, info={"library_name": "transformers"})
        env["HF_ENDPOINT"] = hub.url
        done = subprocess.run([sys.executable, "-c", _CLIENT], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout.strip().splitlines()[-1])
        assert hub.downloads("tiny/clf"), "no file was fetched"
    assert (got["sha"], got["library"], got["missing"]) == (
        repo.sha, "transformers", "RepositoryNotFoundError")
    assert got["sizes"] == got["planned"] == {p: len(d) for p, d in repo.files.items()}
    assert Path(got["path"]).name == repo.sha
    # the server is gone: the cached snapshot loads with no request
    env["HF_HUB_OFFLINE"] = "1"
    loaded = subprocess.run([sys.executable, "-c", _OFFLINE], env=env, capture_output=True,
                            text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() in ("POSITIVE", "NEGATIVE")
