"""The expert tier's settings: a TOML file (``hugginggpt experts serve --config FILE``),
every key optional, with defaults that fit a laptop (one replica of half a core holding
two models, on 127.0.0.1:8000).

Example::

    [tier]
    host = "127.0.0.1"          # "0.0.0.0" only behind a network you trust, with a key
    port = 8000
    replicas = 2
    max_models_per_replica = 2
    num_cpus = 0.5
    num_gpus = 0.25             # a fractional GPU: four replicas share one
    download = "no"             # "yes": fetch models missing from the Hugging Face cache
    remote_code = []            # models allowed to run code shipped with them
    inline_max_mb = 1.0         # larger inputs go through shared_dir when it is set
    shared_dir = "/mnt/shared"  # a folder the graph workers and the replicas both see

    [tier.autoscaling]          # instead of a fixed number of replicas
    min_replicas = 1
    max_replicas = 4
    target_ongoing_requests = 2
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["TierConfig", "Autoscaling", "read_config", "APP_NAME"]

APP_NAME = "hugginggpt-experts"
"""The Serve application's name (``serve.get_app_handle(APP_NAME)``)."""


class Autoscaling(BaseModel):
    """Ray Serve's autoscaling, by requests in flight per replica."""

    model_config = ConfigDict(extra="forbid")
    min_replicas: Annotated[int, Field(ge=0)] = 1
    max_replicas: Annotated[int, Field(ge=1)] = 2
    target_ongoing_requests: Annotated[float, Field(gt=0)] = 2.0


class TierConfig(BaseModel):
    """How the tier runs; see the module's example."""

    model_config = ConfigDict(extra="forbid")
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 8000
    replicas: Annotated[int, Field(ge=1)] = 1
    max_models_per_replica: Annotated[int, Field(ge=1)] = 2
    num_cpus: Annotated[float, Field(ge=0)] = 0.5
    num_gpus: Annotated[float, Field(ge=0)] = 0.0
    autoscaling: Autoscaling | None = None
    download: Literal["yes", "no"] = "no"
    remote_code: list[str] = []
    catalog: str | None = None
    inline_max_mb: Annotated[float, Field(ge=0)] = 1.0
    shared_dir: str | None = None
    max_request_mb: Annotated[float, Field(gt=0)] = 64.0
    """The largest request body the tier reads (inline inputs included)."""
    graceful_shutdown_s: Annotated[float, Field(ge=0)] = 10.0
    """How long a stopping replica lets its calls in flight finish."""


def read_config(path: Path | None) -> TierConfig:
    """The tier's settings from ``path``'s ``[tier]`` table (defaults without a file).

    Raises:
        ValueError: the file is missing, is not TOML, or a setting is unknown or out of
            range; the message names the file and the setting.
    """
    if path is None:
        return TierConfig()
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("tier", {})
        return TierConfig.model_validate(table)
    except OSError as exc:
        raise ValueError(f"cannot read the tier's settings {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not TOML: {exc}") from None
    except ValidationError as exc:
        found = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{path}: {found}") from None
