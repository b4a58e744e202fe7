"""``hugginggpt models list`` and ``models refresh`` (against a local stub of the Hub API)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from hugginggpt.cli import main
from hugginggpt.tools.experts.catalog import load_catalog

HUB_MODELS = {
    "summarization": [
        {"id": "facebook/bart-large-cnn", "downloads": 4_000_000, "likes": 1500,
         "tags": ["transformers", "en", "license:mit"], "pipeline_tag": "summarization",
         "safetensors": {"total": 406_000_000, "parameters": {"F32": 406_000_000}},
         "library_name": "transformers"},
        {"id": "new-org/tiny-summarizer", "downloads": 900_000, "likes": 12,
         "tags": ["transformers", "fr", "de"], "pipeline_tag": "summarization",
         "cardData": {"license": "apache-2.0", "language": ["fr", "de"]},
         "safetensors": {"total": 60_000_000, "parameters": {"F32": 60_000_000}},
         "library_name": "transformers"},
    ],
}


@pytest.fixture
def hub_stub():
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            url = urlparse(self.path)
            query = parse_qs(url.query)
            requests.append({"path": url.path, "query": query})
            body = json.dumps(HUB_MODELS.get(query.get("pipeline_tag", [""])[0], [])).encode()
            self.send_response(200 if url.path == "/api/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", requests
    server.shutdown()
    server.server_close()


def test_refresh_rebuilds_from_the_hub(hub_stub, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    url, requests = hub_stub
    output = tmp_path / "catalog.json"
    code = main(["models", "refresh", "--task", "summarization", "--endpoint", url,
                 "--output", str(output)])
    assert code == 0, capsys.readouterr().err
    assert requests[0]["path"] == "/api/models"
    assert requests[0]["query"]["pipeline_tag"] == ["summarization"]
    assert requests[0]["query"]["sort"] == ["downloads"]

    fresh = load_catalog(output)
    cards = {c.id: c for c in fresh.for_task("summarization")}
    bart = cards["facebook/bart-large-cnn"]
    assert bart.downloads == 4_000_000 and bart.license == "mit" and bart.languages == ["en"]
    # hand-written facts of a known model survive; new models get estimates
    assert bart.description.startswith("Abstractive news") and bart.expected_latency_s == 2.5
    new = cards["new-org/tiny-summarizer"]
    assert new.license == "apache-2.0" and new.languages == ["de", "fr"]
    assert new.size_mb == 240.0 and new.expected_latency_s == 0.6
    # a model the Hub did not list this time stays; other task types are untouched
    assert "sshleifer/distilbart-cnn-12-6" in cards
    assert len(fresh.for_task("translation")) == len(load_catalog().for_task("translation"))


def test_refresh_offline_leaves_the_catalog_alone(tmp_path: Path, capsys):
    output = tmp_path / "catalog.json"
    code = main(["models", "refresh", "--task", "summarization", "--output", str(output)])
    assert code == 2 and not output.exists()
    assert "the catalog was not changed" in capsys.readouterr().err


def test_list_shows_availability_per_backend(capsys):
    code = main(["models", "list", "--task", "sentence-similarity", "--json"])
    assert code == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["sentence-transformers/all-MiniLM-L6-v2"]["available"]["lite"] is True
    assert rows["sentence-transformers/all-mpnet-base-v2"]["available"]["lite"] is False


def test_list_rejects_unknown_task(capsys):
    assert main(["models", "list", "--task", "juggling"]) == 2
    assert "unknown task type" in capsys.readouterr().err
