"""``hugginggpt experts serve``: the expert tier, a Ray Serve application of the local
backend's adapters that every graph worker shares (``--backend ray`` with
``HUGGINGGPT_EXPERTS_URL`` pointing at it, or ``HUGGINGGPT_RAY_ADDRESS`` at its Ray).

``--local`` starts a Ray of this process on 127.0.0.1 (every setting that keeps Ray on
the loopback address: :mod:`hugginggpt.tools.experts.ray.loopback`), serves until Ctrl-C
or SIGTERM, then stops Serve and that Ray. ``--address`` deploys the application on a
running cluster and leaves it there. The tier's settings come from ``--config`` (TOML;
see :mod:`hugginggpt.tools.experts.ray.config`); its key from ``HUGGINGGPT_EXPERTS_KEY``,
which every call must carry (without a key the tier listens only on a loopback address).
"""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from hugginggpt.cli.exits import EXIT_OK, UsageError
from hugginggpt.tools.env import cache_dir, env
from hugginggpt.tools.experts.ray.client import KEY_VARIABLE
from hugginggpt.tools.experts.ray.config import TierConfig, read_config
from hugginggpt.tools.extras import install_command, missing

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    experts = sub.add_parser("experts", help="the shared expert tier on Ray Serve")
    experts_sub = experts.add_subparsers(dest="experts_command", required=True)
    serve = experts_sub.add_parser(
        "serve", help="serve the local backend's models on Ray Serve for every graph worker",
        description="Start the expert tier: the local backend's adapters as a Ray Serve "
                    "application, multiplexed by model. Point workers at it with "
                    "HUGGINGGPT_EXPERTS_URL and --backend ray.")
    where = serve.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", action="store_true",
                       help="start a Ray on this machine (127.0.0.1 only) and serve until "
                            "Ctrl-C")
    where.add_argument("--address", help="deploy on this running Ray cluster and return")
    serve.add_argument("--config", type=Path,
                       help="the tier's settings, TOML (default: one replica, two models)")
    serve.add_argument("--port", type=int, help="HTTP port (default: the config's, 8000)")
    serve.set_defaults(handler=_serve)


def _checked(args: argparse.Namespace) -> tuple[TierConfig, str | None]:
    for extra in ("ray", "local"):
        if missing(extra):
            raise UsageError(f"the expert tier needs the {extra} extra: "
                             f"{install_command(extra)}")
    try:
        config = read_config(args.config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.port is not None:
        config = config.model_copy(update={"port": args.port})
    key = env(KEY_VARIABLE)
    if key is None and not _loopback(config.host):
        raise UsageError(f"the tier would listen on {config.host} with no key: set "
                         f"{KEY_VARIABLE}, or keep host = \"127.0.0.1\"")
    return config, key


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _serve(args: argparse.Namespace) -> int:
    config, key = _checked(args)
    from hugginggpt.tools.experts.ray import loopback

    if args.address:
        from hugginggpt.tools.experts.ray import tier

        tier.deploy(config, key, address=args.address)
        print(_serving(config, "deployed on the cluster"), flush=True)
        return EXIT_OK
    local_ray = loopback.start_local_ray(cache_dir() / "ray-home")  # before Ray is imported
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # after Ray's own handlers: it aborts
        signal.signal(signum, lambda *_: stop.set())
    try:
        from hugginggpt.tools.experts.ray import tier

        tier.deploy(config, key)
        gcs = local_ray.address_info["gcs_address"]
        print(_serving(config, "Ctrl-C stops it", gcs), flush=True)
        stop.wait()
    finally:
        print("hugginggpt: stopping the expert tier", file=sys.stderr, flush=True)
        loopback.stop_local_ray()
    return EXIT_OK


def _serving(config: TierConfig, then: str, ray_address: str | None = None) -> str:
    replicas = (f"{config.autoscaling.min_replicas}-{config.autoscaling.max_replicas}"
                if config.autoscaling else str(config.replicas))
    groups = f"; groups: {', '.join(config.groups)}" if config.groups else ""
    return (f"expert tier on http://{config.host}:{config.port} ({replicas} replica(s), "
            f"{config.max_models_per_replica} model(s) each{groups}); workers: "
            f"HUGGINGGPT_EXPERTS_URL=http://{config.host}:{config.port} --backend ray"
            + (f" (or, on this machine, HUGGINGGPT_RAY_ADDRESS={ray_address})"
               if ray_address else "") + f"; {then}")
