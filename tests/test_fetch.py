"""URL inputs: fetched into the artifact store within limits, never from local addresses
unless the run allows it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.tools.addresses import check_url
from hugginggpt.tools.experts import ArgumentError, ArtifactStore, register_tool
from hugginggpt.tools.experts.dry_run import _png
from hugginggpt.tools.fetch import FetchLimits, fetch_url
from tests.conftest import run

PNG = _png()
ROUTES: dict[str, tuple[int, str, bytes, dict[str, str]]] = {
    "/cat.png": (200, "image/png", PNG, {}),
    "/page.html": (200, "text/html", b"<html>not an image</html>", {}),
    "/hop": (302, "text/plain", b"", {"Location": "/cat.png"}),
    "/down": (503, "text/plain", b"busy", {}),
}


@pytest.fixture
def files_server():
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            status, ctype, body, headers = ROUTES.get(self.path, (404, "text/plain", b"", {}))
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/x.png", "http://localhost/x.png", "http://10.1.2.3/x.png",
    "http://169.254.169.254/latest/meta-data", "http://[::1]/x.png", "http://0.0.0.0/x",
])
def test_local_and_private_addresses_are_refused(url):
    with pytest.raises(ArgumentError, match="private or local address"):
        check_url(url, allow_private=False)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/a.png", "http:///x"])
def test_only_http_urls_with_a_host(url):
    with pytest.raises(ArgumentError, match="only http and https"):
        check_url(url, allow_private=True)


def test_fetch_follows_redirects_and_stores_by_content(files_server, tmp_path):
    store = ArtifactStore(tmp_path, "t")
    limits = FetchLimits(allow_private=True)
    direct = fetch_url(f"{files_server}/cat.png", "image", store, limits)
    redirected = fetch_url(f"{files_server}/hop", "image", store, limits)
    assert direct["artifact_id"] == redirected["artifact_id"]  # same bytes, one artifact
    assert store.resolve(direct).read_bytes() == PNG
    assert direct["path"].endswith(".png") and direct["origin"].endswith("/cat.png")


@pytest.mark.parametrize(("path", "limits", "message"), [
    ("/page.html", FetchLimits(allow_private=True), "is text/html, not image"),
    ("/cat.png", FetchLimits(allow_private=True, max_bytes=10), "the limit is 10"),
    ("/missing.png", FetchLimits(allow_private=True), "HTTP 404"),
])
def test_fetch_refusals(files_server, tmp_path, path, limits, message):
    with pytest.raises(ArgumentError, match=message):
        fetch_url(f"{files_server}{path}", "image", ArtifactStore(tmp_path, "t"), limits)
    assert not list((tmp_path / "artifacts" / "t").glob("*"))  # nothing half-written kept


def test_url_inputs_through_the_graph(compiled, make_context, llm_server, files_server,
                                      test_tools):
    seen: list[Path] = []

    def caption(image: Path) -> str:
        seen.append(image)
        return f"{image.stat().st_size} bytes of picture"

    test_tools.append(register_tool(caption, "image-to-text", backend="test",
                                    models=["test/captioner"]))
    plan = {"tool_args": {"subtasks": [
        {"id": 0, "task": "image-to-text", "dep": [], "args": {"image": f"{files_server}/cat.png"}},
        {"id": 1, "task": "image-to-text", "dep": [], "args": {"image": f"{files_server}/down"}},
    ]}}
    llm_server.script("planner", plan, plan)

    refused = run(compiled, make_context(backend="test"), thread="refused")
    assert refused["results"][0].status == "failed"
    assert "private or local address" in refused["results"][0].error and seen == []

    allowed = run(compiled, make_context(backend="test", allow_private_urls=True),
                  thread="allowed")
    assert allowed["results"][0].status == "done"
    assert allowed["results"][0].outputs["text"] == f"{len(PNG)} bytes of picture"
    assert seen[0].read_bytes() == PNG and seen[0].is_relative_to(make_context().workspace)
    # a 503 is retried (transient), then the subtask fails with the reason
    assert allowed["results"][1].status == "failed"
    assert "TransientToolError" in allowed["results"][1].error
    assert "HTTP 503" in allowed["results"][1].error
