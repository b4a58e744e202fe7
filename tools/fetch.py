"""Fetching URL inputs into the artifact store, within limits.

Only ``http``/``https`` URLs with a host and without credentials. The host's addresses
are resolved first, and unless the run allows it every one of them must be a global
unicast address: private, loopback, link-local (cloud metadata at 169.254.169.254),
shared (100.64.0.0/10), unspecified, reserved and multicast addresses are refused, also
when they hide inside an IPv6 address (``::ffff:127.0.0.1``, NAT64, 6to4, Teredo), so a
plan cannot make the machine read its own services. The connection then goes to an
address that was checked, never to a fresh DNS answer (no DNS rebinding between check
and connect): a custom ``httpcore`` network backend connects to the checked address,
while TLS still verifies the certificate against the host name. Redirects are followed by
hand and every hop is checked again. The whole download, headers included, must finish
within the time limit; the body is read in chunks up to the size limit and is not
decompressed. The declared content type must fit the argument's kind (an HTML page is
not an image), and so must the first bytes of the body (a PNG starts like a PNG).
Environment proxies and ``.netrc`` credentials are never used.
A :class:`DownloadBudget` bounds what all the URL inputs of one run download together.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from hugginggpt.tools.addresses import checked_addresses, parse_url
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.errors import (
    ArgumentError,
    Control,
    Fix,
    LimitExceededError,
    TransientToolError,
)
from hugginggpt.tools.kinds import media_type_suffix

__all__ = ["FetchLimits", "DownloadBudget", "fetch_url", "sniff"]

_CONTENT_TYPES = {
    "image": ("image/",),
    "audio": ("audio/", "application/ogg"),
    "video": ("video/",),
    "table": ("text/csv", "text/tab-separated-values", "text/plain",
              "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    "text": ("text/",),
}
_SNIFF_BYTES = 512
_HTML_MARKERS = (b"<!doctype", b"<html", b"<head", b"<body", b"<script", b"<?xml", b"<svg",
                 b"<iframe", b"<a ", b"<p>", b"<div", b"<meta", b"<title", b"<!--")
_SNIFFED_FITS = {"image": ("image/",), "video": ("video/",),
                  "audio": ("audio/", "video/mp4", "video/webm")}  # m4a, webm audio
"""Media types the first bytes may show for each kind of argument."""
@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 50 * 1024 * 1024
    timeout_s: float = 30.0
    """For the whole download: connecting, every redirect, headers and body."""
    allow_private: bool = False
    max_redirects: int = 5

    def too_big(self) -> str:
        return f"the limit is {self.max_bytes} bytes per URL (max_download_mb)"

    RAISE = Fix(say="raise it with {}", controls=[Control(kind="limit", name="max_download_mb")])


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
            value=round(self.max_bytes / 1024 / 1024, 3), unit=" MB")

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


class _DeadlineStream:
    """A network stream whose every read and write ends by a deadline."""

    def __init__(self, inner: Any, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def _timeout(self, timeout: float | None, error: type[Exception]) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise error("the time limit for this download is over")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        import httpcore

        return bytes(self._inner.read(max_bytes, self._timeout(timeout, httpcore.ReadTimeout)))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        import httpcore

        self._inner.write(buffer, self._timeout(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> _DeadlineStream:
        import httpcore

        inner = self._inner.start_tls(ssl_context, server_hostname,
                                      self._timeout(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _pinned_backend(addresses: list[str] | None, deadline: float) -> Any:
    """A network backend that connects only to ``addresses`` (the checked ones, tried in
    order; None: the host as given) and bounds every operation by ``deadline``."""
    import httpcore

    class PinnedBackend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore.SyncBackend()

        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None,
                        socket_options: Iterable[Any] | None = None) -> Any:
            last: Exception | None = None
            for address in addresses or [host]:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise httpcore.ConnectTimeout("the time limit for this download is over")
                try:
                    stream = self._inner.connect_tcp(
                        address, port, timeout=left if timeout is None else min(timeout, left),
                        local_address=local_address, socket_options=socket_options)
                except httpcore.ConnectError as exc:
                    last = exc
                    continue
                return _DeadlineStream(stream, deadline)
            raise last or httpcore.ConnectError(f"no address to connect to for {host}")

    return PinnedBackend()


def sniff(head: bytes) -> str | None:
    """The media type the first bytes of a body show, or None when they show none."""
    signatures: list[tuple[bytes, int, str]] = [
        (b"\x89PNG\r\n\x1a\n", 0, "image/png"), (b"\xff\xd8\xff", 0, "image/jpeg"),
        (b"GIF87a", 0, "image/gif"), (b"GIF89a", 0, "image/gif"), (b"BM", 0, "image/bmp"),
        (b"II*\x00", 0, "image/tiff"), (b"MM\x00*", 0, "image/tiff"),
        (b"fLaC", 0, "audio/flac"), (b"OggS", 0, "audio/ogg"), (b"ID3", 0, "audio/mpeg"),
        (b"\x1aE\xdf\xa3", 0, "video/webm"), (b"ftyp", 4, "video/mp4"),
        (b"PK\x03\x04", 0, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        (b"PAR1", 0, "application/vnd.apache.parquet"),
    ]
    for magic, offset, media in signatures:
        if head[offset:offset + len(magic)] == magic:
            return media
    if head[:4] == b"RIFF":
        return {b"WEBP": "image/webp", b"WAVE": "audio/wav",
                b"AVI ": "video/x-msvideo"}.get(head[8:12])
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        return "audio/mpeg"  # an MPEG audio frame
    return None


def _looks_like_markup(head: bytes) -> bool:
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return start.startswith(_HTML_MARKERS)


def _check_body(url: str, kind: str, head: bytes) -> str | None:
    """Refuse a body whose first bytes do not fit ``kind``; return the sniffed type."""
    found = sniff(head)
    if kind == "table":
        binary = b"\x00" in head
        if _looks_like_markup(head) or (binary and found is None):
            raise ArgumentError(f"{url} refused: its content is not a table (it starts like "
                                f"{'an HTML or XML page' if not binary else 'a binary file'}); "
                                "give the URL of a CSV file")
        return found
    if kind in _SNIFFED_FITS and (found is None or not found.startswith(_SNIFFED_FITS[kind])):
        what = "an HTML or XML page" if _looks_like_markup(head) else (found or "unknown data")
        raise ArgumentError(f"{url} refused: the server says it is {kind}, but its content is "
                            f"{what}; give the URL of the {kind} file itself")
    return found


def fetch_url(url: str, kind: str, store: ArtifactStore, limits: FetchLimits,
              budget: DownloadBudget | None = None) -> dict[str, Any]:
    """Download ``url`` into the store and return its artifact reference; the bytes read
    count against ``budget`` (the run's total) when one is given.

    Raises:
        ArgumentError: the URL, an address, the size or the content is refused.
        LimitExceededError: the run's download budget is spent.
        TransientToolError: the server could not be reached in time or answered 5xx
            (retryable).
    """
    import httpcore

    deadline = time.monotonic() + limits.timeout_s
    current = url
    for _ in range(limits.max_redirects + 1):
        parsed = parse_url(current)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        addresses = checked_addresses(parsed.host, port, current, limits.allow_private)
        target = httpcore.URL(scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port,
                              target=parsed.raw_path)
        headers = [(b"Host", parsed.netloc), (b"Accept-Encoding", b"identity"),
                   (b"User-Agent", b"hugginggpt")]
        pinned = None if limits.allow_private else addresses
        try:
            with httpcore.ConnectionPool(network_backend=_pinned_backend(pinned, deadline),
                                         max_connections=1) as pool, \
                    pool.stream("GET", target, headers=headers, extensions={"timeout": {
                        "connect": limits.timeout_s, "read": limits.timeout_s,
                        "write": limits.timeout_s, "pool": limits.timeout_s}}) as response:
                status = response.status
                fields = {k.decode("latin-1").lower(): v.decode("latin-1")
                          for k, v in response.headers}
                if status in (301, 302, 303, 307, 308):
                    current = urljoin(current, fields.get("location", ""))
                    continue
                if status >= 500:
                    raise TransientToolError(f"{url}: HTTP {status}")
                if status != 200:
                    raise ArgumentError(f"{url}: HTTP {status}")
                return _save(url, kind, fields, response.iter_stream(), store, limits,
                             deadline, budget)
        except httpcore.TimeoutException as exc:
            raise TransientToolError(
                f"{url}: no answer within the time limit of {limits.timeout_s:g}s") from exc
        except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
            if (bad := _certificate_error(exc)) is not None:
                raise ArgumentError(
                    f"{url} refused: the server's TLS certificate is not valid for "
                    f"{parsed.host} ({bad.verify_message}); give a URL of a server with a "
                    "valid certificate") from exc
            raise TransientToolError(f"{url}: {type(exc).__name__}: {exc}") from exc
    raise ArgumentError(f"{url}: more than {limits.max_redirects} redirects")


def _certificate_error(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate failure behind a connection error, if that is what it was: not
    worth retrying."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _save(url: str, kind: str, fields: dict[str, str], body: Iterable[bytes],
          store: ArtifactStore, limits: FetchLimits, deadline: float,
          budget: DownloadBudget | None) -> dict[str, Any]:
    content_type = fields.get("content-type", "").split(";")[0].strip().lower()
    if kind in _CONTENT_TYPES and not content_type.startswith(_CONTENT_TYPES[kind]):
        raise ArgumentError(f"{url} is {content_type or 'of no stated type'}, not {kind}: "
                            f"give the URL of the {kind} file itself")
    try:
        declared = int(fields.get("content-length") or 0)
    except ValueError:
        declared = 0
    if declared > limits.max_bytes:
        raise ArgumentError(f"{url} is {declared} bytes; {limits.too_big()}",
                            fix=limits.RAISE)
    metering = budget.download(url, declared) if budget is not None else nullcontext(None)
    with metering as count:
        _, scratch = store.new_path(".part")
        size = 0
        head = b""
        sniffed: str | None = None
        try:
            with scratch.open("wb") as out:
                for chunk in body:
                    size += len(chunk)
                    if count is not None:
                        count(len(chunk))
                    if size > limits.max_bytes:
                        raise ArgumentError(f"{url} is over {limits.max_bytes} bytes; "
                                            f"{limits.too_big()}", fix=limits.RAISE)
                    if time.monotonic() > deadline:
                        raise TransientToolError(
                            f"{url}: download took over {limits.timeout_s:g}s")
                    if len(head) < _SNIFF_BYTES:
                        head += chunk[: _SNIFF_BYTES - len(head)]
                        if len(head) >= _SNIFF_BYTES:
                            sniffed = _check_body(url, kind, head)
                    out.write(chunk)
            if len(head) < _SNIFF_BYTES:
                sniffed = _check_body(url, kind, head)
            suffix = media_type_suffix(sniffed or "") or media_type_suffix(content_type)
            final = scratch.with_name(scratch.name.removesuffix(".part") + suffix)
            scratch.rename(final)
            scratch = final
            return store.add_file(scratch, kind, origin=url)
        finally:
            scratch.unlink(missing_ok=True)
