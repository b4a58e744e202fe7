"""Fetching URL inputs into the artifact store, within limits.

Only ``http``/``https``; the host's addresses are resolved first and private, loopback,
link-local, reserved and multicast ones are refused unless the run allows them (so a
plan cannot make the machine read its own services or a cloud metadata endpoint);
redirects are followed by hand and each hop is checked again; the body is read in
chunks up to a size limit, within a time limit; the content type must fit the kind the
argument needs (an HTML page is not an image). A :class:`DownloadBudget` bounds what all
the URL inputs of one run download together.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from tools.artifacts import ArtifactStore
from tools.errors import ArgumentError, LimitExceededError, TransientToolError

__all__ = ["FetchLimits", "DownloadBudget", "fetch_url", "check_url"]

_CONTENT_TYPES = {
    "image": ("image/",),
    "audio": ("audio/", "application/ogg"),
    "video": ("video/",),
    "table": ("text/csv", "text/tab-separated-values", "text/plain",
              "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    "text": ("text/",),
}
_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif",
             "image/webp": ".webp", "audio/wav": ".wav", "audio/x-wav": ".wav",
             "audio/mpeg": ".mp3", "audio/flac": ".flac", "video/mp4": ".mp4",
             "text/csv": ".csv", "text/plain": ".txt"}


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 50 * 1024 * 1024
    timeout_s: float = 30.0
    allow_private: bool = False
    max_redirects: int = 5

    def too_big(self) -> str:
        return (f"the limit is {self.max_bytes} bytes per URL (max_download_mb; raise it "
                "with HUGGINGGPT_MAX_DOWNLOAD_MB)")


class DownloadBudget:
    """Bytes that the URL inputs of one run may download together; thread-safe, since
    subtasks download in parallel.

    A download reserves its declared size before it starts (so parallel downloads cannot
    overshoot together, and the one that does not fit is refused before reading), and
    counts what it reads beyond that as it arrives (for servers that declare no size).
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        """Bytes read or reserved so far."""
        self._lock = threading.Lock()

    def _error(self, what: str) -> LimitExceededError:
        return LimitExceededError(
            f"{what}: the run's downloads would exceed their total limit",
            setting="max_download_total_mb",
            value=round(self.max_bytes / 1024 / 1024, 3), unit=" MB",
            env="HUGGINGGPT_MAX_DOWNLOAD_TOTAL_MB", flag="--max-download-total-mb")

    @contextmanager
    def download(self, url: str, declared: int) -> Iterator[Callable[[int], None]]:
        """Reserve ``declared`` bytes for one download; yields the function to call
        with the size of each chunk read. What was reserved and not read is given back.

        Raises:
            LimitExceededError: the declared size does not fit what is left, or the
                bytes read go over it.
        """
        with self._lock:
            if self.used + declared > self.max_bytes:
                raise self._error(f"{url} was not downloaded ({declared} bytes; the run's "
                                  f"URL inputs have already used {self.used} bytes)")
            self.used += declared
        read = 0

        def count(size: int) -> None:
            nonlocal read
            beyond = max(0, read + size - max(declared, read))
            read += size
            with self._lock:
                self.used += beyond
                if beyond and self.used > self.max_bytes:
                    raise self._error(f"the download of {url} was stopped after {read} "
                                      f"bytes (the run's URL inputs have used {self.used})")

        try:
            yield count
        finally:
            if read < declared:
                with self._lock:
                    self.used -= declared - read


def check_url(url: str, allow_private: bool) -> None:
    """Refuse what this module never fetches.

    Raises:
        ArgumentError: not http(s), no host, an unresolvable host, or (unless allowed) a
            host with a private, loopback, link-local, reserved or multicast address.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ArgumentError(f"URL {url!r} refused: only http and https URLs with a host")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise ArgumentError(f"URL {url!r}: cannot resolve {parts.hostname!r}") from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if (address.is_private or address.is_loopback or address.is_link_local
                or address.is_reserved or address.is_multicast or address.is_unspecified):
            raise ArgumentError(
                f"URL {url!r} refused: {parts.hostname} is a private or local address "
                f"({address}); allow it for this run with allow_private_urls"
            )


def fetch_url(url: str, kind: str, store: ArtifactStore, limits: FetchLimits,
              budget: DownloadBudget | None = None) -> dict[str, Any]:
    """Download ``url`` into the store and return its artifact reference; the bytes read
    count against ``budget`` (the run's total) when one is given.

    Raises:
        ArgumentError: the URL, an address, the size or the content type is refused.
        LimitExceededError: the run's download budget is spent.
        TransientToolError: the server could not be reached or answered 5xx (retryable).
    """
    import httpx

    deadline = time.monotonic() + limits.timeout_s
    current = url
    with httpx.Client(follow_redirects=False, timeout=limits.timeout_s) as client:
        for _ in range(limits.max_redirects + 1):
            check_url(current, limits.allow_private)
            try:
                with client.stream("GET", current) as response:
                    if response.is_redirect:
                        current = urljoin(current, response.headers.get("location", ""))
                        continue
                    if response.status_code >= 500:
                        raise TransientToolError(f"{url}: HTTP {response.status_code}")
                    if response.status_code != 200:
                        raise ArgumentError(f"{url}: HTTP {response.status_code}")
                    return _save(url, kind, response, store, limits, deadline, budget)
            except httpx.TimeoutException as exc:
                raise TransientToolError(f"{url}: no answer within {limits.timeout_s:g}s") from exc
            except httpx.TransportError as exc:
                raise TransientToolError(f"{url}: {type(exc).__name__}: {exc}") from exc
    raise ArgumentError(f"{url}: more than {limits.max_redirects} redirects")


def _save(url: str, kind: str, response: Any, store: ArtifactStore, limits: FetchLimits,
          deadline: float, budget: DownloadBudget | None) -> dict[str, Any]:
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind in _CONTENT_TYPES and not content_type.startswith(_CONTENT_TYPES[kind]):
        raise ArgumentError(f"{url} is {content_type or 'of no stated type'}, not {kind}")
    declared = int(response.headers.get("content-length") or 0)
    if declared > limits.max_bytes:
        raise ArgumentError(f"{url} is {declared} bytes; {limits.too_big()}")
    suffix = _SUFFIXES.get(content_type, "")
    metering = budget.download(url, declared) if budget is not None else nullcontext(None)
    with metering as count:
        _, scratch = store.new_path(suffix)
        size = 0
        try:
            with scratch.open("wb") as out:
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if count is not None:
                        count(len(chunk))
                    if size > limits.max_bytes:
                        raise ArgumentError(f"{url} is over {limits.max_bytes} bytes; "
                                            f"{limits.too_big()}")
                    if time.monotonic() > deadline:
                        raise TransientToolError(
                            f"{url}: download took over {limits.timeout_s:g}s")
                    out.write(chunk)
            return store.add_file(scratch, kind, origin=url)
        finally:
            scratch.unlink(missing_ok=True)
