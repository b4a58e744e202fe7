"""A Ray started on this machine that talks to nothing but the loopback address.

By default Ray finds its node address by a UDP connect to 8.8.8.8, talks to the machine's
external interface, and its dashboard probes the cloud metadata address and a usage URL
(even with usage stats off). :func:`loopback_environment` is every setting that keeps it
on 127.0.0.1 and unix sockets, checked with strace (``DESIGN.md``); :func:`start_local_ray`
applies them and starts Ray. ``hugginggpt experts serve --local``, the tests and the
benchmark all start Ray through it; a graph worker joins such a Ray with
:func:`driver_environment`. Importing this module does not import Ray.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path
from typing import Any

__all__ = ["loopback_environment", "driver_environment", "start_local_ray", "stop_local_ray"]

_BOOTSTRAP = "provider: {type: local}\n"
"""Ray reads ``~/ray_bootstrap_config.yaml`` to learn its cloud; a local provider means
no metadata probe."""


def loopback_environment(home: Path, *, auth: bool = True) -> dict[str, str]:
    """The environment variables that keep a local Ray on the loopback address, with
    ``home`` as Ray's home folder (it holds the bootstrap file that stops the cloud probe
    and, with ``auth``, Ray's cluster token, made here; without it Ray's processes
    accept any local caller). The Hugging Face and hugginggpt caches stay where
    they were before ``HOME`` moved, so the replicas find the models already downloaded."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "ray_bootstrap_config.yaml").write_text(_BOOTSTRAP)
    if auth:
        _token(home / ".ray" / "auth_token")
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return {
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/",
        "RAY_AUTH_MODE": "token" if auth else "disabled",
        # the token made here, whatever path the environment named before
        "RAY_AUTH_TOKEN_PATH": str(home / ".ray" / "auth_token"),
        "HF_HOME": os.environ.get("HF_HOME") or str(user_cache / "huggingface"),
        "HUGGINGGPT_CACHE_DIR": os.environ.get("HUGGINGGPT_CACHE_DIR")
        or str(user_cache / "hugginggpt"),
        "HOME": str(home),
    }


SERVING_PRIORITY = {"RAY_worker_niceness": "0"}
"""Ray starts its workers at nice 15, below every other process of the machine, for
batch jobs. A tier's replicas and HTTP proxy serve the graph workers beside them: at 15
they waited behind those workers for the CPU (a warm tier call took 40-60 ms instead of
about 25 ms with 4 busy graph workers on 2 cores)."""


def _token(path: Path) -> None:
    """Ray's cluster token, made once (readable by this user only): with
    ``RAY_AUTH_MODE=token`` Ray's processes refuse to start without one."""
    if path.is_file():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32))


def start_local_ray(home: Path, *, num_cpus: int | None = None, auth: bool = True) -> Any:
    """Start a Ray of this process on 127.0.0.1 with :func:`loopback_environment` and
    :data:`SERVING_PRIORITY` (set in this process's environment, which Ray's processes
    inherit) and no dashboard.

    ``address="local"`` always starts a new one: a stale ``ray_current_cluster`` file left
    in Ray's temp folder makes a plain ``ray.init()`` wait for a cluster that is gone.
    Call it before anything imports Ray: Ray reads some of these settings (its auth
    mode) when it is imported. Returns Ray's context (its ``address_info`` names the
    processes' sockets)."""
    os.environ.update(loopback_environment(home, auth=auth) | SERVING_PRIORITY)
    import ray

    return ray.init(address="local", include_dashboard=False, num_cpus=num_cpus,
                    log_to_driver=False)


def driver_environment(home: Path) -> dict[str, str]:
    """:func:`loopback_environment` for a process that joins the local Ray whose home is
    ``home`` as a driver (a graph worker with ``ray_address``): it presents that Ray's
    token, read by path, and keeps its own ``HOME`` (its ``~`` paths)."""
    settings = loopback_environment(home)
    settings.pop("HOME")
    return settings


def stop_local_ray(grace_s: float = 2.0) -> None:
    """Stop the Serve applications and the Ray this process started, then any of its
    processes still there after ``grace_s`` (Ray 2.60 leaves its dashboard and runtime
    environment agents running after ``ray.shutdown()``, for a minute or more), by their
    process ids: never ``ray stop``, which kills every Ray process of the machine by name.
    """
    import psutil
    import ray
    from ray import serve

    started = psutil.Process().children(recursive=True)
    if ray.is_initialized():
        serve.shutdown()
        ray.shutdown()
    deadline = time.monotonic() + grace_s
    while (alive := [p for p in started if _running(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    for process in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()  # they do not stop on SIGTERM


def _running(process: Any) -> bool:
    """Whether a process is still there (a zombie is not: only its exit status is)."""
    import psutil

    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
