"""A local HTTP server standing in for a Hugging Face inference endpoint, for tests.

``huggingface_hub.InferenceClient(model="http://127.0.0.1:PORT/name")`` posts to that
exact URL (and to ``.../v1/chat/completions`` below it for chat), so each path below the
server's root can play one dedicated endpoint or TGI server. Replies are scripted per
endpoint name (the first path segment) and served in order; every request is recorded.

Example::

    stub = HFStubServer().start()
    stub.script("sentiment", Reply(status=503, json={"error": "loading"}),
                Reply(json=[{"label": "POSITIVE", "score": 0.9}]))
    url = stub.url_for("sentiment")
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HFStubServer", "Reply", "Request"]


@dataclass(frozen=True)
class Reply:
    """One scripted reply: a JSON body, or raw bytes with a content type, after a delay;
    or, with ``hang``, no reply at all: the request is held until the client closes its
    connection, which the stub records (:meth:`HFStubServer.wait_hangup`)."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    content_type: str = "application/json"
    delay_s: float = 0.0
    hang: bool = False


@dataclass(frozen=True)
class Request:
    """One request the stub received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = field(default=None)


class HFStubServer:
    """A threaded HTTP server on a free loopback port with scripted replies."""

    def __init__(self) -> None:
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.received: list[Request] = []
        self.hangups: list[str] = []
        """Endpoint names whose held (``hang``) request the client gave up on."""
        self._lock = threading.Lock()
        self._hung_up = threading.Condition(self._lock)
        self._closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                self._serve()

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length) if length else b""
                reply = server._record(self.command, self.path, dict(self.headers), body)
                if reply.hang:
                    server._hold(self.connection, _name_of(self.path))
                    self.close_connection = True
                    return
                if reply.delay_s and server._closing.wait(reply.delay_s):
                    self.close_connection = True  # the server is stopping: hang up
                    return
                data = reply.body if reply.body is not None else json.dumps(reply.json).encode()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> HFStubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def url_for(self, name: str) -> str:
        """The endpoint URL whose requests get the replies scripted for ``name``."""
        return f"{self.url}/{name}"

    def script(self, name: str, *replies: Reply) -> None:
        with self._lock:
            self.scripts[name].extend(replies)

    def wait_hangup(self, name: str, timeout_s: float) -> bool:
        """Wait until the client has closed a held request to ``name``."""
        with self._hung_up:
            return self._hung_up.wait_for(lambda: name in self.hangups, timeout_s)

    def _hold(self, connection: socket.socket, name: str) -> None:
        """Answer nothing until the client closes the connection (or the stub stops)."""
        while not self._closing.is_set():
            readable, _, _ = select.select([connection], [], [], 0.05)
            if not readable:
                continue
            try:
                closed = connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:  # reset by the client
                closed = True
            if closed:
                with self._hung_up:
                    self.hangups.append(name)
                    self._hung_up.notify_all()
                return
            self._closing.wait(0.05)  # more data from the client: keep holding

    def requests(self, name: str | None = None) -> list[Request]:
        """The requests received, all or those to one endpoint name."""
        with self._lock:
            return [r for r in self.received if name is None or _name_of(r.path) == name]

    def _record(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        name = _name_of(path)
        with self._lock:
            self.received.append(Request(method, path, headers, body, parsed))
            queue = self.scripts[name]
            if queue:
                return queue.popleft()
        return Reply(status=500, json={"error": f"no scripted reply left for {name!r}"})


def _name_of(path: str) -> str:
    return path.split("?", 1)[0].strip("/").split("/", 1)[0]
