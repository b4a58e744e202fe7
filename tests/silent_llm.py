"""A local LLM endpoint that accepts connections and never answers: a hung server.

It reads each HTTP request (so the client's request is sent in full and counted) and
then holds the connection open without a byte of reply until it is stopped. This is the
endpoint of issue 25 that held a run for six minutes: not refused (that fails at once),
not slow (that answers late), but silent.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

__all__ = ["SilentLLMServer"]


class SilentLLMServer:
    """Accepts, reads each request, never answers. ``requests`` counts the requests
    received (their first lines: ``POST /v1/chat/completions HTTP/1.1``)."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        self.requests: list[str] = []
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def start(self) -> SilentLLMServer:
        self._thread.start()
        return self

    def __enter__(self) -> SilentLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self._held.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        """Read requests off one connection and answer none of them."""
        buffer = b""
        while not self._stopped.is_set():
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\r\n\r\n" in buffer:
                head, _, rest = buffer.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                length = next((int(line.split(":", 1)[1]) for line in lines[1:]
                               if line.lower().startswith("content-length:")), 0)
                if len(rest) < length:
                    break
                buffer = rest[length:]
                with self._lock:
                    self.requests.append(lines[0])

    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def stop(self) -> None:
        self._stopped.set()
        self._sock.close()
        with self._lock:
            for conn in self._held:
                conn.close()
            self._held.clear()
