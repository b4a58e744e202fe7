"""The expert tier through a Ray Serve ``DeploymentHandle``: for a graph worker inside the
Ray cluster (``ray_address``, ``HUGGINGGPT_RAY_ADDRESS``), which joins it as a driver and
calls the tier's ``Front`` (its ``run`` and ``status``) without HTTP.

The same documents travel as over HTTP (:mod:`.wire`), with no key: whoever can join the
cluster can run anything on it, so access to the cluster is the trust boundary. Joining
costs a second or two (mostly ``import ray``), once per process, and is bounded
(:data:`JOIN_TIMEOUT_S`), in a thread of its own, which also keeps Ray from replacing
this process's SIGTERM handler. On a loopback address
the driver keeps to the loopback as the local Ray does
(:func:`.loopback.driver_environment`). This module imports Ray, when it first joins.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import queue
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from hugginggpt.tools.env import cache_dir
from hugginggpt.tools.errors import (
    Control,
    Fix,
    NotInstalledError,
    ToolExecutionError,
    TransientToolError,
)
from hugginggpt.tools.experts.ray.config import APP_NAME
from hugginggpt.tools.experts.ray.loopback import driver_environment
from hugginggpt.tools.experts.ray.wire import raise_error
from hugginggpt.tools.extras import install_command

if TYPE_CHECKING:
    from ray.serve.handle import DeploymentHandle

__all__ = ["app_handle", "run", "status", "check_ray_address", "NOT_INSTALLED", "OVER_HTTP"]

NOT_INSTALLED = "Ray, which the expert tier's Ray address needs,"
OVER_HTTP = Fix(say="or reach the tier over HTTP with {}",
                controls=[Control(kind="variable", name="HUGGINGGPT_EXPERTS_URL")])
"""The other way to the tier, for a worker without Ray."""
PROBE_TIMEOUT_S = 3.0
"""How long the cluster's address may take to accept a connection before joining."""
JOIN_TIMEOUT_S = 30.0
"""How long joining may take (2-3 s here): ``ray.init`` waits without end for a cluster
that will not take this worker (a stale address, another cluster's token)."""
STATUS_TIMEOUT_S = 5.0

_HANDLES: dict[str, DeploymentHandle] = {}
_STUCK: dict[str, TransientToolError] = {}
"""Addresses whose join did not finish: Ray joins once per process, so this one will not."""
_JOINING = threading.Lock()


def _host_port(address: str) -> tuple[str, int] | None:
    """The host and port a ``HOST:PORT`` or ``ray://HOST:PORT`` address names; ``auto``
    names ``RAY_ADDRESS``'s, as Ray reads it (None without it: Ray looks for a cluster
    started on this node)."""
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS", "")
    host, _, port = address.removeprefix("ray://").rpartition(":")
    return (host.strip("[]"), int(port)) if host and port.isdigit() else None


def check_ray_address(address: str) -> str:
    """The ``ray_address`` setting, checked: a running cluster's address (``local`` would
    start a new Ray inside the worker)."""
    if address != "auto" and _host_port(address) is None:  # auto: resolved when joined
        raise ValueError("expected a Ray cluster's address: HOST:PORT (its GCS, 6379), "
                         "ray://HOST:PORT (Ray Client) or auto")
    return address


def _is_loopback(host: str) -> bool:
    """``localhost``, or a loopback address (``::ffff:127.0.0.1`` too, which
    ``is_loopback`` alone does not count)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost"
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return (mapped or ip).is_loopback


def _unreachable(address: str, exc: BaseException) -> TransientToolError:
    return TransientToolError(f"the Ray cluster at {address} is not answering "
                              f"({type(exc).__name__})")


def app_handle(address: str) -> DeploymentHandle:
    """The tier's application on the cluster at ``address``, joined once per process.

    Raises:
        NotInstalledError: Ray is not installed here.
        TransientToolError: the cluster does not answer, or the tier is not on it.
        ToolExecutionError: this process already joined another cluster.
    """
    with _JOINING:
        if address in _HANDLES:
            return _HANDLES[address]
        where = _host_port(address)
        if where is not None and _is_loopback(where[0]):  # read by Ray as it is imported
            os.environ.update(driver_environment(cache_dir() / "ray-home"))
        try:
            import ray
            from ray import serve
        except ImportError:
            error = NotInstalledError(NOT_INSTALLED, extra="ray", install=install_command("ray"))
            error.fix = OVER_HTTP
            raise error from None
        if where is not None:  # fail in a moment, not after Ray's own minute of retries
            try:
                socket.create_connection(where, timeout=PROBE_TIMEOUT_S).close()
            except OSError as exc:
                raise _unreachable(address, exc) from None
        if address in _STUCK:
            raise _STUCK[address]
        if ray.is_initialized():
            raise ToolExecutionError(f"this process already joined a Ray cluster, not the "
                                     f"one at {address}")
        try:
            _HANDLES[address] = _bounded(lambda: _join(ray, serve, address), address)
        except (ConnectionError, ray.exceptions.RayError, serve.exceptions.RayServeException
                ) as exc:
            if ray.is_initialized():
                ray.shutdown()
            raise TransientToolError(
                f"the expert tier is not on the Ray cluster at {address} "
                f"({type(exc).__name__}: {str(exc)[:200]})") from None
        return _HANDLES[address]


def _bounded(join: Callable[[], DeploymentHandle], address: str) -> DeploymentHandle:
    """``join()`` in a thread of its own, waited for :data:`JOIN_TIMEOUT_S` (a daemon,
    left behind when it does not finish: nothing stops ``ray.init``)."""
    done: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def joining() -> None:
        try:
            done.put((True, join()))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller
            done.put((False, exc))

    threading.Thread(target=joining, name="ray-join", daemon=True).start()
    try:
        ok, value = done.get(timeout=JOIN_TIMEOUT_S)
    except queue.Empty:
        _STUCK[address] = TransientToolError(
            f"joining the Ray cluster at {address} took over {JOIN_TIMEOUT_S:g} s: it "
            "answers but does not take this worker (its address may be stale, or its "
            "token not the one this worker has)")
        raise _STUCK[address] from None
    if not ok:
        raise value
    return cast("DeploymentHandle", value)


def _join(ray: Any, serve: Any, address: str) -> DeploymentHandle:
    """``ray.init`` as a quiet driver, then the tier's handle. It runs in a thread of its
    own, where Ray leaves this process's SIGTERM handling alone."""
    logging.getLogger("ray").setLevel(logging.ERROR)
    ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    logging.getLogger("ray.serve").setLevel(logging.WARNING)  # its handle's chatter
    return cast("DeploymentHandle", serve.get_app_handle(APP_NAME))


def _failures() -> tuple[type[BaseException], ...]:
    """What a call through the handle raises when the cluster or a replica goes away."""
    import ray
    from ray.serve.exceptions import RayServeException

    return ConnectionError, TimeoutError, ray.exceptions.RayError, RayServeException


async def run(address: str, request: dict[str, Any]) -> dict[str, Any]:
    """``Front.run`` on the cluster at ``address``: the tier's reply.

    Raises:
        TransientToolError: the cluster or the tier went away, or the tier said a retry
            may pass.
        ToolExecutionError: the tier said the call failed.
    """
    handle = await asyncio.to_thread(app_handle, address)  # joining: not on the loop
    try:
        reply: dict[str, Any] = await handle.run.remote(request)
    except _failures() as exc:
        raise TransientToolError(f"the expert tier on the Ray cluster at {address} stopped "
                                 f"during the call ({type(exc).__name__})") from None
    if "error" in reply:
        raise_error(reply, "the expert tier failed")
    return reply


def status(address: str, asked: dict[str, Any]) -> dict[str, Any]:
    """``Front.status`` on the cluster at ``address``, or ``{"reason": ...}`` when it
    cannot be asked."""
    try:
        handle = app_handle(address)
        return dict(handle.status.remote(asked).result(timeout_s=STATUS_TIMEOUT_S))
    except ToolExecutionError as exc:
        return {"reason": str(exc), "warm": False}
    except _failures() as exc:
        return {"reason": str(_unreachable(address, exc)), "warm": False}
