"""Put on ``PYTHONPATH`` of a test's subprocesses: every Python process they start (a
local Ray's dashboard, its agents, its workers and replicas) records each attempt to
reach past the loopback address, as Python's audit events report it, in the file
``HUGGINGGPT_TEST_CONNECTS`` names: a connect or send to an address that is not
loopback (or a unix socket), and a name lookup of a host that is not local. Ray's C++
processes (GCS, raylet) are not Python; the test samples their sockets instead.
"""

import ipaddress
import os
import socket
import sys

_LOG = os.environ.get("HUGGINGGPT_TEST_CONNECTS")
_LOCAL_NAMES = {"localhost", "", socket.gethostname()}


def _past_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str) or host in _LOCAL_NAMES:
        return False
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return True  # a host name: looked up, then reached
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return not ((mapped or ip).is_loopback or (mapped or ip).is_unspecified)


def _audit(event: str, args: tuple) -> None:
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        address = args[1]
        host = address[0] if isinstance(address, tuple) and address else None
    elif event == "socket.getaddrinfo":
        host = args[0]
    else:
        return
    if _past_loopback(host):
        with open(_LOG, "a") as log:  # type: ignore[arg-type]
            log.write(f"{os.getpid()} {' '.join(sys.argv)[:200]}: {event} {host}\n")


if _LOG:
    sys.addaudithook(_audit)
