"""``hugginggpt run REQUEST``: plan, select, execute and respond to one request."""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import uuid
from pathlib import Path
from typing import Any

from hugginggpt.api import attached_files
from hugginggpt.cli.common import (
    UsageError,
    absolute_checkpoint_url,
    add_common,
    checked,
    index_thread,
    read_plan,
    saved_checkpoint_url,
    settings_path,
)
from hugginggpt.cli.exits import NOT_CONFIGURED_HELP
from hugginggpt.cli.session import (
    add_download,
    add_verbose,
    asking_downloads,
    llm_weights,
    run_session,
)
from hugginggpt.graph.callers import flag_of
from hugginggpt.graph.context import Context, SettingsError
from hugginggpt.graph.recorded import settings_of
from hugginggpt.nodes.plan import uses_llm_planner
from hugginggpt.tools.errors import ArgumentError
from hugginggpt.tools.llm.config import STRATEGIES, has_llm

__all__ = ["add_parser", "context_from"]


def add_parser(sub: Any) -> None:
    run = sub.add_parser("run", help="run a request through plan, select, execute, respond")
    run.add_argument("request")
    run.add_argument("--file", action="append", default=[], metavar="PATH_OR_URL",
                     help="attach an input file or URL; repeatable")
    run.add_argument("--approval", choices=["never", "plan", "risky"],
                     help="ask a human before running: the plan, or only risky tools")
    run.add_argument("--planner", choices=["auto", "llm", "offline"],
                     help="auto (default): the LLM when configured, else (also when it "
                          "cannot be called) the built-in one; llm: abort without it")
    run.add_argument("--dry-run", action="store_true",
                     help="simulated experts: check a plan without loading models")
    run.add_argument("--plan", metavar="FILE.json", help="run this plan instead of planning")
    run.add_argument("--backend",
                     help="auto|hybrid (default), local, hf-inference, llm, lite, dry-run, "
                          "a plugin's backend, or an order such as llm,local")
    run.add_argument("--llm", help="LLM for every role: MODEL (OpenAI-compatible), "
                     "PROVIDER:MODEL (anthropic:claude-sonnet-4-5, ollama:qwen3:4b, ...) "
                     "or hf:REPO_OR_URL")
    run.add_argument("--llm-base-url", help="the LLM's server: an OpenAI-compatible endpoint "
                     "(vLLM, Ollama, ...), or a provider's own API at another address")
    run.add_argument("--planner-llm")
    run.add_argument("--selector-llm")
    run.add_argument("--responder-llm")
    run.add_argument("--expert-llm", help="the LLM the llm backend does text subtasks "
                     "with (default: the responder's)")
    run.add_argument("--llm-config", metavar="FILE",
                     help="several LLM endpoints with tiers, routed per call (TOML or YAML)")
    run.add_argument("--llm-routing", choices=STRATEGIES,
                     help="how calls are spread over the endpoints (default: peak-ewma)")
    run.add_argument("--hf-endpoint", action="append", default=[], metavar="MODEL=URL",
                     help="hf-inference: serve MODEL from this Inference Endpoint or TGI URL")
    run.add_argument("--hf-provider",
                     help="the Inference Provider for hf-inference experts and hf: LLMs")
    run.add_argument("--hf-bill-to", metavar="ORG",
                     help="bill hf-inference and hf: LLM requests to this Hugging Face "
                          "organisation")
    run.add_argument("--allow-private-urls", action="store_true",
                     help="let URL inputs point at private or local addresses")
    run.add_argument("--latency-budget", type=float,
                     help="seconds per subtask that model selection aims for")
    run.add_argument("--max-subtasks", type=int)
    run.add_argument("--subtask-timeout", type=float, help="seconds per model call")
    run.add_argument("--subtask-retries", type=int, help="retries of transient errors")
    run.add_argument("--max-run-time", type=float, metavar="SECONDS",
                     help="wall time of the execution: unfinished subtasks are abandoned")
    run.add_argument("--max-download-total-mb", type=float,
                     help="megabytes the run's URL inputs and model downloads may take "
                          "together")
    run.add_argument("--max-loaded-models", type=int,
                     help="local models held in memory at once")
    run.add_argument("--no-cache", action="store_true",
                     help="run every subtask, neither reading nor storing results in the "
                          "workspace's result cache")
    run.add_argument("--no-stream-execution", action="store_true",
                     help="wait for the whole plan before running subtasks (by default "
                          "each starts while the planner's reply streams)")
    add_download(run)
    add_verbose(run)
    run.add_argument("--latency-scale", type=float,
                     help="dry-run: multiply simulated latencies by this")
    add_common(run)
    run.set_defaults(handler=_run)


def context_from(args: argparse.Namespace) -> Context:
    """The run's settings: the flags given, the environment for the rest."""
    overrides: dict[str, Any] = {
        "llm": args.llm, "llm_base_url": args.llm_base_url,
        "planner_llm": args.planner_llm, "selector_llm": args.selector_llm,
        "responder_llm": args.responder_llm, "expert_llm": args.expert_llm,
        "backend": args.backend,
        "max_subtasks": args.max_subtasks, "subtask_timeout_s": args.subtask_timeout,
        "subtask_retries": args.subtask_retries, "max_run_s": args.max_run_time,
        "max_download_total_mb": args.max_download_total_mb,
        "max_loaded_models": args.max_loaded_models,
        "dry_run_latency_scale": args.latency_scale, "workspace": args.workspace,
        "hf_provider": args.hf_provider, "hf_bill_to": args.hf_bill_to,
        "latency_budget_s": args.latency_budget,
        "allow_private_urls": args.allow_private_urls or None, "planner": args.planner,
        "approval": args.approval, "llm_config": args.llm_config,
        "llm_routing": args.llm_routing, "download": args.download,
        "cache": False if args.no_cache else None,
        "stream_execution": False if args.no_stream_execution else None, "caller": "cli",
    }
    if args.hf_endpoint:
        pairs = [item.partition("=") for item in args.hf_endpoint]
        if any(not model or not url for model, _, url in pairs):
            raise UsageError("--hf-endpoint takes MODEL=URL")
        overrides["hf_endpoints"] = {model: url for model, _, url in pairs}
    if args.dry_run:
        overrides["backend"] = "dry-run"
    if args.plan:
        overrides["plan"] = read_plan(args.plan)
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return checked(Context(**given))
    except SettingsError as exc:
        raise UsageError(str(exc.entered_as({k: flag_of(k)
                                             for k in given}))) from None


def _warm_up(context: Context) -> None:
    """Load the sentence-embedding model while the graph is built, when the LLM planner
    will run: it always embeds the request (to choose the few-shot examples). The
    offline planner embeds only a request that no cue word covers, and the ranking only
    when several described models compete, so for them the model loads when first used
    (loading it in a thread for nothing cost a request it did not serve CPU time that
    the imports and the run wanted)."""
    if context.plan is not None or not uses_llm_planner(context):
        return
    import numpy  # noqa: F401  (here first: two threads importing it at once can fail)

    from hugginggpt.tools.experts.lite.engines import minilm_missing, text_encoder

    if minilm_missing() is not None:  # the planner goes without examples
        return

    threading.Thread(target=text_encoder, name="warm-up", daemon=True).start()


def _run(args: argparse.Namespace) -> int:
    if not args.request.strip():
        raise UsageError("the request is empty: say what you want done")
    context = context_from(args)
    # an absolute workspace, so that resume works from any folder
    context = context.replace(workspace=str(Path(context.workspace).resolve()))
    context = asking_downloads(context, args.json)
    llm_weights(context, args.json)
    if context.plan is None and context.planner == "llm" and not has_llm(context, "planner"):
        raise UsageError(NOT_CONFIGURED_HELP)
    try:
        files = attached_files(args.file)
    except ArgumentError as exc:
        raise UsageError(f"--file {exc}") from exc
    thread_id = args.thread or uuid.uuid4().hex[:12]
    url = absolute_checkpoint_url(
        args.checkpoint_url or f"sqlite:///{context.workspace}/checkpoints.sqlite")
    settings = settings_path(context.workspace, thread_id)
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({
        "context": settings_of(context), "checkpoint_url": saved_checkpoint_url(url),
        "plugins": args.plugin,
    }, indent=2))
    index_thread(thread_id, settings)
    _warm_up(context)
    graph_input = {"request": args.request, "files": files}
    return asyncio.run(run_session(graph_input, thread_id, context, url, args.json,
                                   args.verbose))
