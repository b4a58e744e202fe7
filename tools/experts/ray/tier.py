"""The expert tier: a Ray Serve application that runs the local backend's adapters (the
code ``--backend local`` runs) for every graph worker that points at it.

Its deployments:

- ``Experts``: the replicas that hold models, multiplexed by model id (``TASK|MODEL``):
  each keeps ``max_num_models_per_replica`` models and evicts the least recently used
  (the local backend's own cache is bounded the same, so both drop the same model), and
  Serve routes a request to a replica that already holds its model. A load goes through
  the local backend: the Hugging Face cache, downloads only where the tier's settings say
  ``download = "yes"``, and a model that runs its own code only when ``remote_code``
  names it. Each group of the settings (``[tier.groups.NAME]``) is one more such
  deployment, ``Experts-NAME``, for its task types, with its own replicas and resources.
- ``Front``: the ingress. Its :meth:`run` forwards a request to the deployment of its
  task type (a replica that dies mid-call becomes a transient error, which the worker
  retries, landing on another replica) and its :meth:`status` says which models can run
  here and which are warm on which replica. Over HTTP (``POST /run``, ``POST /status``)
  it checks the shared key on every call and bounds the body; a worker inside the Ray
  cluster calls the same two methods through a ``DeploymentHandle`` (:mod:`.handle`),
  where access to the cluster is the trust boundary.

This module imports Ray; only ``hugginggpt experts serve``, the tests and the benchmark
import it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any, cast

import ray
from ray import serve
from ray.exceptions import RayError
from ray.serve import Deployment
from ray.serve.handle import DeploymentHandle
from starlette.requests import Request
from starlette.responses import JSONResponse

from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.env import env
from hugginggpt.tools.errors import (
    Control,
    Fix,
    HuggingGPTError,
    ToolExecutionError,
    TransientToolError,
)
from hugginggpt.tools.experts import local
from hugginggpt.tools.experts.local.hub_cache import card_for
from hugginggpt.tools.experts.outputs import normalize_outputs
from hugginggpt.tools.experts.ray.client import KEY_VARIABLE
from hugginggpt.tools.experts.ray.config import APP_NAME, TierConfig
from hugginggpt.tools.experts.ray.wire import (
    KEY_HEADER,
    decode_inputs,
    encode_outputs,
    error_document,
    inline_size,
    model_key,
    split_key,
)
from hugginggpt.tools.experts.registry import ToolContext, find_tools, run_settings
from hugginggpt.tools.experts.tasks import get_task_type

__all__ = ["build_app", "app_builder", "key_digest", "deploy"]


def key_digest(key: str | None) -> str | None:
    """What the tier keeps of its key: its SHA-256, never the key itself."""
    return hashlib.sha256(key.encode()).hexdigest() if key else None


def _settings(config: TierConfig) -> dict[str, dict[str, Any]]:
    """The local backend's run settings on the tier: its model bound, download mode,
    the models allowed to run their own code, its catalog."""
    settings: dict[str, Any] = {"max_loaded": config.max_models_per_replica,
                                "download": config.download,
                                "consented": list(config.remote_code)}
    if config.catalog:
        settings["catalog"] = config.catalog
    return {local.LOCAL_BACKEND: settings}


class _Held:
    """A model a replica holds (Serve's multiplexed value): its key and its load time."""

    def __init__(self, key: str, load_s: float) -> None:
        self.key, self.load_s, self.calls = key, load_s, 0


def _refuse_remote_code(config: TierConfig, task: str, model: str) -> None:
    card = card_for(model, task)
    if card is not None and card.trust_remote_code and model not in config.remote_code:
        raise ToolExecutionError(
            f"{model} runs code shipped with it (trust_remote_code): the expert tier runs it "
            "only when its settings name it in remote_code")


def _run_tool(config: TierConfig, task: str, model: str, request: dict[str, Any]
              ) -> dict[str, Any]:
    """Run the local backend's tool in a scratch folder; outputs with their bytes."""
    task_type = get_task_type(task)
    tools = find_tools(task, model, [local.LOCAL_BACKEND])
    if task_type is None or not tools:
        raise ToolExecutionError(f"the expert tier does not run {task}")
    shared = Path(config.shared_dir) if config.shared_dir else None
    with tempfile.TemporaryDirectory(prefix="hugginggpt-tier-") as folder:
        store = ArtifactStore(folder)
        args = {**request.get("args", {}),
                **decode_inputs(request.get("files", {}), Path(folder), shared)}
        context = ToolContext(subtask_id=int(request.get("subtask", 0)), task=task,
                              model=model, artifacts=store)
        value = tools[0].fn(**tools[0].call_kwargs(args, model, context))
        outputs = normalize_outputs(task_type, value, store)
        confidence = context.confidence.model_dump(mode="json") if context.confidence else None
        return {"outputs": encode_outputs(outputs, store), "confidence": confidence}


def build_app(config: TierConfig, digest: str | None) -> Any:
    """The Serve application for ``config``, its key checked against ``digest``."""

    class Experts:
        """One deployment's replicas: the default's, or a group's (``config_doc`` is
        its own settings, :meth:`TierConfig.deployments`)."""

        def __init__(self, config_doc: dict[str, Any]) -> None:
            self.config = TierConfig.model_validate(config_doc)
            self.settings = _settings(self.config)
            local.set_max_loaded(self.config.max_models_per_replica)
            local.import_libraries()  # not in the first call, which every other waits behind
            context = serve.get_replica_context()
            self.replica = f"{context.deployment}#{context.replica_id.unique_id}"
            self.held: weakref.WeakValueDictionary[str, _Held] = weakref.WeakValueDictionary()

            async def hold(key: str) -> _Held:
                started = time.monotonic()
                await asyncio.to_thread(self._load, key)
                held = self.held[key] = _Held(key, round(time.monotonic() - started, 4))
                return held

            # multiplexed here, not on the class: each deployment holds its own number of
            # models (a function, since Serve keeps its models on what it wraps)
            self.get_model = serve.multiplexed(
                max_num_models_per_replica=self.config.max_models_per_replica)(hold)

        def _load(self, key: str) -> None:
            task, model = split_key(key)
            with run_settings(self.settings):
                _refuse_remote_code(self.config, task, model)
                local.load(task, model)

        async def run(self, request: dict[str, Any]) -> dict[str, Any]:
            key = serve.get_multiplexed_model_id()
            started = time.monotonic()
            try:
                held = await self.get_model(key)
                held.calls += 1
                loaded_here = held.calls == 1  # the call that waited for the load
                task, model = split_key(key)

                def call() -> dict[str, Any]:
                    with run_settings(self.settings):
                        return _run_tool(self.config, task, model, request)

                reply = await asyncio.to_thread(call)
                reply |= {"load_s": held.load_s if loaded_here else 0.0,
                          "warm": not loaded_here}
            except HuggingGPTError as exc:
                reply = error_document(exc)
            except Exception as exc:  # a model's own failure: said, as the local backend says it
                reply = error_document(ToolExecutionError(f"{type(exc).__name__}: {exc}"))
            return reply | {"replica": self.replica, "pid": os.getpid(),
                            "loaded": sorted(self.held.keys()),
                            "run_s": round(time.monotonic() - started, 4)}

    class Front:
        def __init__(self, experts: dict[str, DeploymentHandle], config_doc: dict[str, Any],
                     digest: str | None) -> None:
            self.experts, self.digest = experts, digest
            """Each deployment's handle, by name (:meth:`TierConfig.deployment_of`)."""
            self.config = TierConfig.model_validate(config_doc)
            self.settings = _settings(self.config)
            self.warm: dict[str, list[str]] = {}
            """Replica -> the models it said it held after its last call."""

        def _allowed(self, request: Request) -> bool:
            if self.digest is None:
                return True
            given = key_digest(request.headers.get(KEY_HEADER, "")) or ""
            return hmac.compare_digest(given, self.digest)

        async def __call__(self, request: Request) -> JSONResponse:
            """The HTTP front: the key, the body's bound, then :meth:`run` or
            :meth:`status`, their error documents answered with 503 (a retry may pass)
            or 422."""
            if not self._allowed(request):
                return JSONResponse(error_document(ToolExecutionError(
                    "the expert tier refused the call: its key is missing or wrong")), 401)
            path = request.url.path.rstrip("/")
            if request.method == "POST" and path.endswith("/status"):
                return JSONResponse(self.status(json.loads(await request.body())))
            if request.method == "POST" and path.endswith("/run"):
                body = await request.body()
                if len(body) > self.config.max_request_mb * 2**20:  # before reading it
                    return JSONResponse(self._too_large(), 413)
                reply = await self.run(json.loads(body))
                error = reply.get("error")
                return JSONResponse(reply, 200 if error is None else
                                    503 if error["transient"] else 422)
            return JSONResponse({"error": {"message": "POST /run or /status"}}, 404)

        def _too_large(self) -> dict[str, Any]:
            return error_document(ToolExecutionError(
                f"the request is over the tier's {self.config.max_request_mb:g} MB: "
                "large inputs go through its shared folder", fix=Fix(
                    say="name the folder the tier shares (its shared_dir) with {}",
                    controls=[Control(kind="setting", name="experts_shared_dir")])))

        def status(self, asked: dict[str, Any]) -> dict[str, Any]:
            """For one task type's models: whether each can run here (and why not), and
            which are warm. ``POST /status``, or a ``DeploymentHandle``'s call."""
            task, warm = str(asked.get("task")), set().union(*self.warm.values())
            with run_settings(self.settings):
                return {"models": {
                    model: {"reason": local.unavailable_reason(model, task),
                            "warm": model_key(task, model) in warm}
                    for model in asked.get("models", [])[:500]},
                    "replicas": self.warm}

        async def run(self, request: dict[str, Any]) -> dict[str, Any]:
            """Run a request (:mod:`.wire`) on a replica that holds its model: the reply,
            or an error document. ``POST /run``, or a ``DeploymentHandle``'s call (whose
            request is bounded here, as an HTTP body is before it is read)."""
            if inline_size(request) > self.config.max_request_mb * 2**20:
                return self._too_large()
            key = model_key(str(request["task"]), str(request["model"]))
            experts = self.experts[self.config.deployment_of(str(request["task"]))]
            try:
                reply: dict[str, Any] = await experts.run.options(
                    multiplexed_model_id=key).remote(request)
            except RayError as exc:  # the replica died or went away mid-call
                return error_document(TransientToolError(
                    "a replica of the expert tier stopped during the call "
                    f"({type(exc).__name__})"))
            self.warm[reply["replica"]] = reply.pop("loaded")
            return reply

    experts = {name: _experts(_deployment(Experts), name, settings)
               for name, settings in config.deployments().items()}
    front = _deployment(Front).options(
        ray_actor_options={"num_cpus": 0},
        graceful_shutdown_timeout_s=config.graceful_shutdown_s)
    return front.bind(experts, config.model_dump(mode="json"), digest)


def _experts(deployment: Deployment, name: str, settings: TierConfig) -> Any:
    """The deployment ``name`` of ``Experts``, bound to its own settings."""
    replicas: dict[str, Any] = (
        {"autoscaling_config": settings.autoscaling.model_dump()} if settings.autoscaling
        else {"num_replicas": settings.replicas})
    return deployment.options(
        name=name, ray_actor_options={"num_cpus": settings.num_cpus,
                                      "num_gpus": settings.num_gpus},
        graceful_shutdown_timeout_s=settings.graceful_shutdown_s, **replicas,
    ).bind(settings.model_dump(mode="json"))


def _deployment(cls: type) -> Deployment:
    """``serve.deployment`` of a class (its type hints say a decorator is returned)."""
    return cast(Deployment, serve.deployment(cls))


def app_builder(args: dict[str, Any]) -> Any:
    """The application as Serve's config files name it (``import_path:
    hugginggpt.tools.experts.ray.tier:app_builder``, its ``args`` the ``[tier]`` table's
    keys): how KubeRay's ``RayService`` runs the tier. The key comes from the replicas'
    environment, ``HUGGINGGPT_EXPERTS_KEY``."""
    return build_app(TierConfig.model_validate(args), key_digest(env(KEY_VARIABLE)))


def deploy(config: TierConfig, key: str | None, address: str | None = None) -> None:
    """Start Serve's HTTP proxy on the configured address and run the application, on
    the Ray cluster at ``address`` (None: the Ray this process started,
    :func:`.loopback.start_local_ray`)."""
    if address is not None:
        ray.init(address=address, log_to_driver=False)
    serve.start(http_options={"host": config.host, "port": config.port})
    serve.run(build_app(config, key_digest(key)), name=APP_NAME, route_prefix="/",
              blocking=False)
