"""Which URLs a run may fetch, and at which addresses: the checks made before any
connection (see :mod:`hugginggpt.tools.fetch` for the download itself).

Only ``http``/``https`` URLs with a host and without credentials. The host's addresses
are resolved, and unless the run allows it every one of them must be a global unicast
address: private, loopback, link-local (cloud metadata at 169.254.169.254), shared
(100.64.0.0/10), unspecified, reserved and multicast addresses are refused, also when
they hide inside an IPv6 address (``::ffff:127.0.0.1``, NAT64, 6to4, Teredo).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

from hugginggpt.tools.errors import ArgumentError, Fix, setting

__all__ = ["check_url", "checked_addresses", "is_hf_host", "is_public_address", "parse_url"]

HF_HOSTS = (".huggingface.cloud", ".huggingface.co", "huggingface.co", ".hf.space")
"""Hugging Face's own hosts: the Hub, Inference Endpoints, Spaces."""


def is_hf_host(url: str) -> bool:
    """Whether ``url`` points at one of Hugging Face's own hosts (where a user's token and
    billing header may go)."""
    return (urlsplit(url).hostname or "").endswith(HF_HOSTS)


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))




def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4, Teredo)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if any(address in net for net in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def is_public_address(text: str) -> bool:
    """Whether an address is global unicast, including the IPv4 address an IPv6 one
    embeds. A scoped IPv6 address (``fe80::1%eth0``) is never public."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return False
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return is_public_address(str(embedded))
    return address.is_global and not address.is_multicast


def checked_addresses(host: str, port: int, url: str, allow_private: bool) -> list[str]:
    """Resolve ``host`` and return its addresses, refusing when any one is not public
    (unless ``allow_private``).

    Raises:
        ArgumentError: the host cannot be resolved, or has a non-public address.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise ArgumentError(f"URL {url!r:.200}: cannot resolve {host!r}; check the host "
                            "name") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise ArgumentError(f"URL {url!r:.200}: {host!r} has no address")
    if not allow_private:
        for address in addresses:
            if not is_public_address(address):
                raise ArgumentError(
                    f"URL {url!r:.200} refused: {host} is a private or local address "
                    f"({address})", fix=Fix(say="allow it for this run with {} if you trust it",
                                            controls=[setting("allow_private_urls")]))
    return addresses


def parse_url(url: str) -> Any:
    """The URL as httpx parses it (one parser for checking and connecting).

    Raises:
        ArgumentError: not http(s), no host, credentials, or unparsable.
    """
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise ArgumentError(f"URL {url!r:.200} refused: it cannot be parsed ({exc}); "
                            "give an http or https URL") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ArgumentError(f"URL {url!r:.200} refused: only http and https URLs with a host")
    if parsed.userinfo:
        raise ArgumentError(f"URL {url!r:.200} refused: it carries a user name or password, "
                            "which would be stored in the run's state; give a URL without "
                            "credentials")
    return parsed


def check_url(url: str, allow_private: bool) -> list[str]:
    """Refuse what this module never fetches; return the addresses to connect to.

    Raises:
        ArgumentError: not http(s), no host, credentials, an unresolvable host, or
            (unless allowed) a host with a non-public address.
    """
    parsed = parse_url(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return checked_addresses(parsed.host, port, url, allow_private)


