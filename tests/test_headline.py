"""The README's headline request for a new user, end to end: "caption this photo,
translate the caption to French and read it aloud", with nothing cached, an LLM (the
local OpenAI-compatible test server) and the Hub (the mini-hub).

The CLI runs in subprocesses whose ``HF_ENDPOINT`` is the mini-hub and whose
``HF_HOME`` starts empty: the first run downloads the tiny captioning model (with
``--download yes``) and captions locally, the ``llm`` expert translates, eSpeak NG
(lite) speaks and a WAV is written; the second run downloads nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import wave
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests import tiny_models
from tests.llm_server import ScriptedLLMServer
from tests.mini_hub import MiniHub

REQUEST = "Caption photo.jpg, translate the caption to French and read it aloud"
CAPTIONER = "tiny-org/captioner"
PLAN = [
    {"id": 0, "task": "image-to-text", "dep": [], "args": {"image": "photo.jpg"}},
    {"id": 1, "task": "translation", "dep": [0],
     "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}},
    {"id": 2, "task": "text-to-speech", "dep": [1], "args": {"text": "<GENERATED>-1"}},
]
FRENCH = "un chat est assis sur le tapis"


@pytest.fixture(scope="module")
def captioner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny captioner, made to say "cat" whatever the picture (a random one says
    nothing at all): the decoder's last norm outputs a constant along the word's
    (enlarged) embedding, which the tied output layer turns into that word's logit."""
    import torch
    from transformers import AutoTokenizer, VisionEncoderDecoderModel

    folder = tiny_models.build("image-to-text", tmp_path_factory.mktemp("built"))
    model = VisionEncoderDecoderModel.from_pretrained(folder)
    word = AutoTokenizer.from_pretrained(folder).convert_tokens_to_ids("cat")
    with torch.no_grad():
        embeddings = model.decoder.transformer.wte.weight
        embeddings[word] *= 50
        model.decoder.transformer.ln_f.weight.zero_()
        model.decoder.transformer.ln_f.bias.copy_(embeddings[word])
    model.save_pretrained(folder)
    return folder


def _script(llm: ScriptedLLMServer) -> None:
    llm.script("planner", {"tool_args": {"subtasks": PLAN}})
    llm.script("expert", {"content": FRENCH})
    llm.script("responder", {"content": f"The photo's caption in French: {FRENCH}."})


def _run(env: dict[str, str], workspace: Path, llm: ScriptedLLMServer) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "hugginggpt", "run", REQUEST, "--file",
         str(workspace / "photo.jpg"), "--download", "yes", "--llm", "scripted",
         "--llm-base-url", llm.url, "--json", "--workspace", str(workspace)],
        env=env, capture_output=True, text=True, timeout=600)
    # (the status is read from the document, which has its own exit code: see
    # tests/test_downloads.py on an abort at interpreter exit after the result is out)
    assert done.stdout.strip(), done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    assert doc["status"] == "completed", (json.dumps(doc.get("results"))[:3000], done.stderr[-2000:])
    return doc


def test_caption_translate_and_read_aloud_for_a_new_user(tmp_path, captioner, llm_server):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    Image.new("RGB", (64, 48), (200, 120, 40)).save(workspace / "photo.jpg")
    size_mb = round(sum(p.stat().st_size for p in captioner.rglob("*") if p.is_file()) / 2**20, 3)
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"version": 1, "models": [
        {"id": CAPTIONER, "task": "image-to-text", "downloads": 1000, "license": "mit",
         "size_mb": size_mb, "library_name": "transformers", "expected_latency_s": 0.1,
         "description": "a tiny captioner"}]}))
    with MiniHub() as hub:
        hub.add_model(CAPTIONER, captioner, info={"library_name": "transformers",
                                                  "pipeline_tag": "image-to-text",
                                                  "cardData": {"license": "mit"}})
        env = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"), "HF_ENDPOINT": hub.url,
               "HUGGINGGPT_CATALOG": str(catalog), "HF_HUB_DISABLE_TELEMETRY": "1"}
        for name in ("HF_HUB_OFFLINE", "HF_TOKEN", "OPENAI_API_KEY"):
            env.pop(name, None)

        _script(llm_server)
        first = _run(env, workspace, llm_server)
        fetched = hub.downloads(CAPTIONER)
        assert fetched, "the captioner was not downloaded"
        results = first["results"]
        assert [results[str(i)]["backend"] for i in range(3)] == ["local", "llm", "lite"]
        assert results["0"]["model"] == CAPTIONER
        caption = results["0"]["outputs"]["text"]
        assert "cat" in caption.split()
        assert results["1"]["outputs"]["text"] == FRENCH
        (translated,) = llm_server.calls("expert")
        assert caption.strip() in translated["messages"][-1]["content"]
        assert results["2"]["model"] == "lite/espeak-ng"
        audio = results["2"]["outputs"]["audio"]
        path = Path(audio["file"] if isinstance(audio, dict) and "file" in audio
                    else workspace / (audio["path"] if isinstance(audio, dict) else audio))
        with wave.open(str(path)) as wav:
            assert wav.getnframes() / wav.getframerate() > 0.5  # speech, not a click

        _script(llm_server)
        second = _run(env, workspace, llm_server)
        assert hub.downloads(CAPTIONER) == fetched  # the second run downloads nothing
        assert second["results"]["0"]["model"] == CAPTIONER
