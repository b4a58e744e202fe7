"""The expert tier's settings: a TOML file (``hugginggpt experts serve --config FILE``),
every key optional, with defaults that fit a laptop (one replica of half a core holding
two models, on 127.0.0.1:8000).

By default one deployment (``Experts``) serves every task type: its replicas share their
model slots across task types (``benchmarks/experts_layout.py`` measures why). A group
(``[tier.groups.NAME]``) gives some task types a deployment of their own
(``Experts-NAME``): its own replicas and resources, a GPU for the image generators while
the rest stay on CPU. A key a group does not set is the ``[tier]`` table's (``replicas``
and ``autoscaling`` go together: a group that sets either takes neither from the table).

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

    [tier.groups.images]        # these task types on a deployment of their own
    tasks = ["text-to-image", "image-to-image"]
    replicas = 1
    max_models_per_replica = 1
    num_cpus = 1
    num_gpus = 1
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hugginggpt.tools.experts.tasks import get_task_type

__all__ = ["TierConfig", "Autoscaling", "Group", "read_config", "APP_NAME", "DEFAULT_DEPLOYMENT"]

APP_NAME = "hugginggpt-experts"
"""The Serve application's name (``serve.get_app_handle(APP_NAME)``)."""
DEFAULT_DEPLOYMENT = "Experts"
"""The deployment of every task type no group names; a group's is ``Experts-NAME``."""


class Autoscaling(BaseModel):
    """Ray Serve's autoscaling, by requests in flight per replica."""

    model_config = ConfigDict(extra="forbid")
    min_replicas: Annotated[int, Field(ge=0)] = 1
    max_replicas: Annotated[int, Field(ge=1)] = 2
    target_ongoing_requests: Annotated[float, Field(gt=0)] = 2.0


class Group(BaseModel):
    """Task types served by a deployment of their own; what it leaves unset is the
    ``[tier]`` table's."""

    model_config = ConfigDict(extra="forbid")
    tasks: Annotated[list[str], Field(min_length=1)]
    replicas: Annotated[int, Field(ge=1)] | None = None
    max_models_per_replica: Annotated[int, Field(ge=1)] | None = None
    num_cpus: Annotated[float, Field(ge=0)] | None = None
    num_gpus: Annotated[float, Field(ge=0)] | None = None
    autoscaling: Autoscaling | None = None

    @field_validator("tasks")
    @classmethod
    def _known(cls, tasks: list[str]) -> list[str]:
        """Each task type by its own name (an alias is the task type it names)."""
        found = [get_task_type(task) for task in tasks]
        unknown = [task for task, kind in zip(tasks, found, strict=True) if kind is None]
        if unknown:
            raise ValueError(f"unknown task type(s) {', '.join(unknown)}")
        return list(dict.fromkeys(kind.name for kind in found if kind is not None))


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
    groups: dict[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,30}$")], Group] = {}
    """Task types on deployments of their own, by group name (lower-case letters, digits,
    ``-`` and ``_``); every other task type is served by :data:`DEFAULT_DEPLOYMENT`."""
    download: Literal["yes", "no"] = "no"
    remote_code: list[str] = []
    catalog: str | None = None
    inline_max_mb: Annotated[float, Field(ge=0)] = 1.0
    shared_dir: str | None = None
    max_request_mb: Annotated[float, Field(gt=0)] = 64.0
    """The largest request the tier takes: an HTTP body, or a handle's inline inputs."""
    graceful_shutdown_s: Annotated[float, Field(ge=0)] = 10.0
    """How long a stopping replica lets its calls in flight finish."""

    @field_validator("groups")
    @classmethod
    def _one_group_each(cls, groups: dict[str, Group]) -> dict[str, Group]:
        seen: dict[str, str] = {}
        for name, group in groups.items():
            for task in group.tasks:
                if task in seen:
                    raise ValueError(f"{task} is in two groups, {seen[task]} and {name}")
                seen[task] = name
        return groups

    def deployments(self) -> dict[str, TierConfig]:
        """Each deployment's name and settings: the default's are this table's, a
        group's are this table's with the group's own keys over them."""
        found = {DEFAULT_DEPLOYMENT: self.model_copy(update={"groups": {}})}
        for name, group in self.groups.items():
            own = group.model_dump(include=group.model_fields_set - {"tasks"})
            if own.keys() & {"replicas", "autoscaling"}:
                own = {"replicas": 1, "autoscaling": None} | own
            found[f"{DEFAULT_DEPLOYMENT}-{name}"] = self.model_validate(
                self.model_dump() | own | {"groups": {}})
        return found

    def deployment_of(self, task: str) -> str:
        """The name of the deployment that serves ``task``."""
        kind = get_task_type(task)
        for name, group in self.groups.items():
            if kind is not None and kind.name in group.tasks:
                return f"{DEFAULT_DEPLOYMENT}-{name}"
        return DEFAULT_DEPLOYMENT


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
        found = "; ".join(f"{'.'.join(map(str, e['loc']))}: "
                          f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise ValueError(f"{path}: {found}") from None
