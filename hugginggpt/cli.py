"""The ``hugginggpt`` command: run a request, resume, trace or replay a thread.

    hugginggpt run "REQUEST" [--file PATH ...] [--thread ID] [--json] [--dry-run --plan FILE]
    hugginggpt resume --thread ID [--json]
    hugginggpt trace --thread ID [--full | --json]
    hugginggpt replay --thread ID [--json]

Progress goes to stderr; the answer (or, with ``--json``, one JSON document) to stdout.
The settings of a run are saved beside its checkpoints
(``<workspace>/threads/<thread>.json``, never secrets) so that ``resume`` continues
with the same ones.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import json
import sys
import uuid
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from hugginggpt.graph.context import Context
from hugginggpt.tools.env import env
from hugginggpt.tools.llm.records import usage_totals

__all__ = ["main", "document"]

EXIT_OK, EXIT_ABORTED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad input from the user: printed as is, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hugginggpt",
        description="HuggingGPT on LangGraph: an LLM plans, Hugging Face experts execute.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--thread", help="thread id (run: new if omitted)")
        p.add_argument("--json", action="store_true", help="print one JSON document")
        p.add_argument("--workspace", help="folder for artifacts, checkpoints and settings")
        p.add_argument("--checkpoint-url",
                       help="memory | sqlite:///FILE | postgresql://... "
                            "(default: <workspace>/checkpoints.sqlite)")
        p.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                       help="import MODULE first (it may register tools); repeatable")

    run = sub.add_parser("run", help="run a request through plan, select, execute, respond")
    run.add_argument("request")
    run.add_argument("--file", action="append", default=[], metavar="PATH_OR_URL",
                     help="attach an input file or URL; repeatable")
    run.add_argument("--approval", choices=["never", "plan", "risky"],
                     help="ask a human before running: the plan, or only risky tools")
    run.add_argument("--planner", choices=["auto", "llm", "offline"],
                     help="auto (default): the LLM when configured, else the built-in one")
    run.add_argument("--dry-run", action="store_true",
                     help="simulated experts: check a plan without loading models")
    run.add_argument("--plan", metavar="FILE.json", help="run this plan instead of planning")
    run.add_argument("--backend",
                     help="auto|hybrid (default), local, hf-inference, lite, dry-run, a "
                          "plugin's backend, or an order such as lite,hf-inference")
    run.add_argument("--llm", help="LLM for every role: MODEL or hf:REPO_OR_URL")
    run.add_argument("--llm-base-url", help="OpenAI-compatible endpoint (vLLM, Ollama, ...)")
    run.add_argument("--planner-llm")
    run.add_argument("--selector-llm")
    run.add_argument("--responder-llm")
    run.add_argument("--llm-config", metavar="FILE",
                     help="several LLM endpoints with tiers, routed per call (TOML or YAML)")
    run.add_argument("--llm-routing", choices=["router", "round-robin", "strongest"],
                     help="how calls are spread over the endpoints (default: router)")
    run.add_argument("--hf-endpoint", action="append", default=[], metavar="MODEL=URL",
                     help="hf-inference: serve MODEL from this Inference Endpoint or TGI URL")
    run.add_argument("--hf-provider", help="hf-inference: the Inference Provider to use")
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
                     help="megabytes all URL inputs of the run may download together")
    run.add_argument("--max-loaded-models", type=int,
                     help="local models held in memory at once")
    run.add_argument("--latency-scale", type=float,
                     help="dry-run: multiply simulated latencies by this")
    common(run)

    resume = sub.add_parser("resume", help="continue a thread from its last checkpoint")
    decision = resume.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="approve the pending plan")
    decision.add_argument("--reject", metavar="REASON", help="reject it, with a reason")
    decision.add_argument("--plan", metavar="FILE.json", help="replace it with this plan")
    common(resume)

    trace = sub.add_parser("trace", help="show a thread's runs: LLM calls, tool calls, "
                                         "why each stopped")
    trace.add_argument("--full", action="store_true", help="whole prompts and replies")
    common(trace)

    replay = sub.add_parser("replay", help="re-run a thread's latest run with its recorded "
                                           "LLM replies (no LLM is called)")
    common(replay)

    evaluation = sub.add_parser("eval", help="measure the planner on a labelled set")
    evaluation.add_argument("dataset", help="JSON lines: this project's plans or TaskBench's")
    evaluation.add_argument("--planner", choices=["offline", "llm"], default="offline")
    evaluation.add_argument("--llm", help="the planner LLM: MODEL or hf:REPO_OR_URL")
    evaluation.add_argument("--llm-base-url")
    evaluation.add_argument("--llm-config", metavar="FILE", help="several routed endpoints")
    evaluation.add_argument("--limit", type=int, help="only the first N samples")
    evaluation.add_argument("--max-subtasks", type=int, default=10)
    evaluation.add_argument("--output", help="write the JSON report here")
    evaluation.add_argument("--json", action="store_true", help="print the JSON report")

    demo = sub.add_parser("demo", help="run canned requests offline on sample inputs")
    demo.add_argument("--workspace", help="where inputs and outputs go")

    models = sub.add_parser("models", help="the model catalog")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    listing = models_sub.add_parser("list", help="models with their availability per backend")
    listing.add_argument("--task", help="only this task type")
    listing.add_argument("--catalog", help="a catalog file (default: the shipped one)")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--plugin", action="append", default=[], metavar="MODULE")
    refresh = models_sub.add_parser("refresh", help="rebuild the catalog from the Hub")
    refresh.add_argument("--task", action="append", default=[], help="only these task types")
    refresh.add_argument("--per-task", type=int, default=5, help="models per task type")
    refresh.add_argument("--catalog", help="the catalog to start from (default: shipped)")
    refresh.add_argument("--output", help="where to write (default: the --catalog file)")
    refresh.add_argument("--endpoint", help="Hub URL (default: huggingface.co or HF_ENDPOINT)")
    refresh.add_argument("--plugin", action="append", default=[], metavar="MODULE")
    return parser


def _load_plugins(modules: list[str]) -> None:
    for name in [*modules, *(env("HUGGINGGPT_PLUGINS") or "").split(",")]:
        if name.strip():
            try:
                importlib.import_module(name.strip())
            except ImportError as exc:
                raise UsageError(f"cannot import plugin {name!r}: {exc}") from exc


def _read_plan(path: str) -> list[dict[str, Any]]:
    from hugginggpt.nodes.planning.validation import PlanParseError, parse_plan_text

    try:
        return parse_plan_text(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the plan file {path}: {exc.strerror}") from exc
    except PlanParseError as exc:
        raise UsageError(f"the plan file {path} holds no plan: {exc}") from exc


def _context(args: argparse.Namespace) -> Context:
    overrides: dict[str, Any] = {
        "llm": args.llm, "llm_base_url": args.llm_base_url,
        "planner_llm": args.planner_llm, "selector_llm": args.selector_llm,
        "responder_llm": args.responder_llm, "backend": args.backend,
        "max_subtasks": args.max_subtasks, "subtask_timeout_s": args.subtask_timeout,
        "subtask_retries": args.subtask_retries, "max_run_s": args.max_run_time,
        "max_download_total_mb": args.max_download_total_mb,
        "max_loaded_models": args.max_loaded_models,
        "dry_run_latency_scale": args.latency_scale, "workspace": args.workspace,
        "hf_provider": args.hf_provider, "latency_budget_s": args.latency_budget,
        "allow_private_urls": args.allow_private_urls or None, "planner": args.planner,
        "approval": args.approval, "llm_config": args.llm_config,
        "llm_routing": args.llm_routing,
    }
    if args.hf_endpoint:
        pairs = [item.partition("=") for item in args.hf_endpoint]
        if any(not model or not url for model, _, url in pairs):
            raise UsageError("--hf-endpoint takes MODEL=URL")
        overrides["hf_endpoints"] = {model: url for model, _, url in pairs}
    if args.dry_run:
        overrides["backend"] = "dry-run"
    if args.plan:
        overrides["plan"] = _read_plan(args.plan)
    return _checked(Context(**{k: v for k, v in overrides.items() if v is not None}))


def _checked(context: Context) -> Context:
    """The context, once its LLM configuration is known to be valid."""
    from hugginggpt.tools.llm.config import ConfigError, routing_config

    try:
        routing_config(context)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    return context


def _files(paths: list[str]) -> list[str]:
    files = []
    for item in paths:
        if item.startswith(("http://", "https://")):
            files.append(item)
            continue
        path = Path(item)
        if not path.is_file():
            raise UsageError(f"--file {item}: no such file")
        files.append(str(path.resolve()))
    return files


def _settings_path(workspace: str, thread_id: str) -> Path:
    return Path(workspace) / "threads" / f"{thread_id}.json"


def document(
    thread_id: str, values: dict[str, Any], status: str, workspace: str
) -> dict[str, Any]:
    """The ``--json`` document of a run; artifact paths are relative to ``workspace``."""
    selections = values.get("selections") or {}
    results = values.get("results") or {}
    return {
        "thread_id": thread_id,
        "status": status,
        "workspace": workspace,
        "request": values.get("request"),
        "plan": [s.model_dump(mode="json") for s in values.get("plan") or []],
        "selections": {str(k): v.model_dump(mode="json") for k, v in selections.items()},
        "results": {str(k): v.model_dump(mode="json") for k, v in results.items()},
        "response": values.get("response", ""),
        "abort_reason": values.get("abort_reason"),
        "plan_errors": values.get("plan_errors") or [],
        "approvals": [a.model_dump(mode="json") for a in values.get("approvals") or []],
        # prompts and replies are in the trace (hugginggpt trace --json)
        "llm_calls": [c.model_dump(mode="json", exclude={"request", "reply"})
                      for c in values.get("llm_calls") or []],
        "usage": usage_totals(values.get("llm_calls") or []),
        "planner": values.get("planner", ""),
        "selector": values.get("selector", ""),
        "responder": values.get("responder", ""),
    }


async def _drive(
    graph_input: Any, thread_id: str, context: Context, url: str, as_json: bool
) -> int:
    from hugginggpt.graph.builder import build_graph
    from hugginggpt.graph.checkpoint import aopen_checkpointer
    from hugginggpt.progress import Progress

    config: RunnableConfig = {"configurable": {"thread_id": thread_id}, "recursion_limit": 50}
    progress = Progress()
    async with aopen_checkpointer(url) as saver:
        compiled = build_graph(checkpointer=saver)
        if graph_input is None or isinstance(graph_input, Command):
            snapshot = await compiled.aget_state(config)
            if not snapshot.values:
                raise UsageError(f"thread {thread_id!r} has no checkpoint in {url}")
            if isinstance(graph_input, Command) and not snapshot.interrupts:
                raise UsageError(f"thread {thread_id!r} is not waiting for an approval")
        interrupted = False
        while True:
            try:
                async for mode, chunk in compiled.astream(
                    graph_input, config, context=context, stream_mode=["updates", "custom"]
                ):
                    progress.handle(mode, chunk)
            except (KeyboardInterrupt, asyncio.CancelledError):
                interrupted = True
            snapshot = await compiled.aget_state(config)
            if interrupted or not snapshot.interrupts or not _interactive(as_json):
                break
            progress.close()
            graph_input = Command(resume=_ask(snapshot.interrupts[0].value))
            progress = Progress()
        progress.close()
    values = dict(snapshot.values)
    pending = snapshot.interrupts[0].value if snapshot.interrupts else None
    status = "interrupted" if interrupted or snapshot.next else values.get("status", "running")
    if as_json:
        doc = document(thread_id, values, status, context.workspace) | {"interrupt": pending}
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif pending is not None:
        print(_describe_approval(pending))
    else:
        print(values.get("response") or f"(no response; status {status})")
    used = [f"{role}: {values[role]}" for role in ("planner", "selector", "responder")
            if values.get(role)]
    if used:
        print("; ".join(used), file=sys.stderr)
    if values.get("llm_calls"):
        print(_usage_line(values["llm_calls"]), file=sys.stderr)
    if pending is not None:
        print(f"thread {thread_id}: waiting for approval; answer with: hugginggpt resume "
              f"--thread {thread_id} --approve | --reject REASON | --plan EDITED.json",
              file=sys.stderr)
    else:
        print(f"thread {thread_id}: {status}"
              + (f" (resume with: hugginggpt resume --thread {thread_id})"
                 if status == "interrupted" else ""), file=sys.stderr)
    return {"completed": EXIT_OK, "aborted": EXIT_ABORTED}.get(status, EXIT_INTERRUPTED)


def _usage_line(calls: list[Any]) -> str:
    totals = usage_totals(calls)
    roles = ", ".join(f"{role} {n}" for role, n in totals["by_role"].items())
    endpoints = ", ".join(f"{name} {n}" for name, n in totals["by_endpoint"].items())
    cost = f", estimated cost {totals['cost']:.6f}" if totals["cost"] else ""
    return (f"LLM calls: {totals['calls']} ({roles}; {totals['failed']} failed; "
            f"endpoints: {endpoints}), tokens: {totals['prompt_tokens']} in, "
            f"{totals['completion_tokens']} out{cost}, {totals['latency_s']:.2f}s waiting")


def _interactive(as_json: bool) -> bool:
    return not as_json and sys.stdin.isatty() and sys.stderr.isatty()


def _describe_approval(pending: dict[str, Any]) -> str:
    lines = [f"Approval needed ({pending.get('policy')} policy) for: {pending.get('request')}"]
    for step in pending.get("plan", []):
        chosen = pending.get("selections", {}).get(str(step["id"]), {})
        lines.append(f"  #{step['id']} {step['task']} {json.dumps(step['args'])} "
                     f"dep={step['dep']} -> {chosen.get('model')} ({chosen.get('backend')})")
    for risky in pending.get("risky", []):
        lines.append(f"  risk: #{risky['id']} {risky['model']} is {risky['risk']}")
    lines += [f"  problem: {p}" for p in pending.get("problems", [])]
    return "\n".join(lines)


def _ask(pending: dict[str, Any]) -> dict[str, Any]:
    """Ask on the terminal: approve, reject with a reason, or edit (a plan file)."""
    import getpass

    print(_describe_approval(pending), file=sys.stderr)
    who = getpass.getuser()
    while True:
        choice = input("[a]pprove, [r]eject, [e]dit with a plan file? ").strip().lower()
        if choice.startswith("a"):
            return {"action": "approve", "who": who}
        if choice.startswith("r"):
            return {"action": "reject", "who": who, "reason": input("reason: ").strip()}
        if choice.startswith("e"):
            try:
                return {"action": "edit", "who": who, "plan": _read_plan(input("plan file: "))}
            except UsageError as exc:
                print(exc, file=sys.stderr)


def _warm_up() -> None:
    """Load the sentence-embedding model (used to rank models) while planning runs."""
    import threading

    from hugginggpt.tools.experts.lite import minilm

    threading.Thread(target=minilm, name="warm-up", daemon=True).start()


def _run(args: argparse.Namespace) -> int:
    from hugginggpt.tools.llm.config import NOT_CONFIGURED_HELP, has_llm

    if not args.request.strip():
        raise UsageError("the request is empty: say what you want done")
    context = _context(args)
    # an absolute workspace, so that resume works from any folder
    context = dataclasses.replace(context, workspace=str(Path(context.workspace).resolve()))
    if context.plan is None and context.planner == "llm" and not has_llm(context, "planner"):
        raise UsageError(NOT_CONFIGURED_HELP)
    thread_id = args.thread or uuid.uuid4().hex[:12]
    url = args.checkpoint_url or f"sqlite:///{context.workspace}/checkpoints.sqlite"
    settings = _settings_path(context.workspace, thread_id)
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({
        "context": dataclasses.asdict(context), "checkpoint_url": url, "plugins": args.plugin,
    }, indent=2))
    graph_input = {"request": args.request, "files": _files(args.file)}
    _warm_up()
    return asyncio.run(_drive(graph_input, thread_id, context, url, args.json))


def _saved(args: argparse.Namespace) -> tuple[Context, str]:
    """The settings and checkpoint URL a thread's run was started with."""
    if not args.thread:
        raise UsageError(f"{args.command} needs --thread ID")
    workspace = args.workspace or Context().workspace
    settings_file = _settings_path(workspace, args.thread)
    if not settings_file.is_file():
        if args.checkpoint_url:  # e.g. a thread of the server, traced from its database
            return Context(workspace=str(Path(workspace).resolve())), args.checkpoint_url
        raise UsageError(
            f"no saved settings for thread {args.thread!r} in {Path(workspace).resolve()}: "
            "pass the --workspace the run used (or its --checkpoint-url)"
        )
    saved = json.loads(settings_file.read_text())
    _load_plugins(saved.get("plugins", []))
    return Context(**saved["context"]), args.checkpoint_url or saved["checkpoint_url"]


def _resume(args: argparse.Namespace) -> int:
    context, url = _saved(args)
    import getpass

    who = getpass.getuser()
    answer: dict[str, Any] | None = (
        {"action": "approve", "who": who} if args.approve else
        {"action": "reject", "who": who, "reason": args.reject} if args.reject else
        {"action": "edit", "who": who, "plan": _read_plan(args.plan)} if args.plan else None
    )
    return asyncio.run(_drive(Command(resume=answer) if answer else None,
                              args.thread, context, url, args.json))


async def _trace(args: argparse.Namespace) -> int:
    from hugginggpt.graph.builder import build_graph
    from hugginggpt.graph.checkpoint import aopen_checkpointer
    from hugginggpt.trace import render, thread_runs

    _, url = _saved(args)
    async with aopen_checkpointer(url) as saver:
        compiled = build_graph(checkpointer=saver)
        runs = await thread_runs(compiled, {"configurable": {"thread_id": args.thread}})
    if not runs:
        raise UsageError(f"thread {args.thread!r} has no checkpoint in {url}")
    if args.json:
        print(json.dumps({"thread_id": args.thread, "runs": runs}, indent=2,
                         ensure_ascii=False, default=str))
    else:
        print(render(args.thread, runs, full=args.full))
    return EXIT_OK


async def _replay(args: argparse.Namespace) -> int:
    from hugginggpt.graph.builder import build_graph
    from hugginggpt.graph.checkpoint import aopen_checkpointer
    from hugginggpt.replay import differences, replay_setup

    _, url = _saved(args)
    source: RunnableConfig = {"configurable": {"thread_id": args.thread}}
    target_id = f"{args.thread}-replay-{uuid.uuid4().hex[:6]}"
    target: RunnableConfig = {"configurable": {"thread_id": target_id}, "recursion_limit": 50}
    async with aopen_checkpointer(url) as saver:
        compiled = build_graph(checkpointer=saver)
        recorded = dict((await compiled.aget_state(source)).values)
        if not recorded:
            raise UsageError(f"thread {args.thread!r} has no checkpoint in {url}")
        try:
            graph_input, context, recording = replay_setup(recorded)
        except ValueError as exc:
            raise UsageError(f"cannot replay thread {args.thread!r}: {exc}") from exc
        await compiled.ainvoke(cast(Any, graph_input), target, context=context)
        replayed = dict((await compiled.aget_state(target)).values)
    found = differences(recorded, replayed)
    if args.json:
        print(json.dumps({"thread_id": args.thread, "replay_thread_id": target_id,
                          "same": not found, "differences": found,
                          "divergences": recording.divergences,
                          "unused_recorded_calls": recording.unused,
                          "status": replayed.get("status"),
                          "response": replayed.get("response")}, indent=2,
                         ensure_ascii=False))
    else:
        print(replayed.get("response") or f"(no response; status {replayed.get('status')})")
    print(f"replayed thread {args.thread} as {target_id} with "
          f"{len(recording.calls)} recorded LLM call(s), no LLM called", file=sys.stderr)
    for note in [*recording.divergences, *found]:
        print(f"  differs: {note}", file=sys.stderr)
    if recording.unused:
        print(f"  {recording.unused} recorded call(s) were not asked for", file=sys.stderr)
    print("  same plan, selections and response as recorded" if not found else
          f"  {len(found)} difference(s) from the recording", file=sys.stderr)
    return EXIT_OK if not found else EXIT_ABORTED


def _availability(task: str, model: str) -> dict[str, bool]:
    from hugginggpt.tools.experts.registry import ANY_TASK, registered_tools

    tools = [t for t in registered_tools() if t.task in (task, ANY_TASK) and not t.simulated]
    backends = sorted({t.backend for t in tools})
    return {b: any(t.backend == b and t.serves(task, model) and t.can_run(model)
                   for t in tools) for b in backends}


def _models(args: argparse.Namespace) -> int:
    from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
    from hugginggpt.tools.experts.tasks import get_task_type, task_types

    catalog_path = Path(args.catalog or Context().catalog or DEFAULT_CATALOG)
    if not catalog_path.is_file():
        raise UsageError(f"no catalog file at {catalog_path}")
    catalog = load_catalog(catalog_path)
    wanted = args.task if isinstance(args.task, list) else [args.task] if args.task else []
    found = {t: get_task_type(t) for t in wanted}
    unknown = [t for t, task_type in found.items() if task_type is None]
    if unknown:
        raise UsageError(f"unknown task type(s): {', '.join(unknown)}")
    task_names = [t.name for t in found.values() if t] or [t.name for t in task_types()]
    if args.models_command == "refresh":
        from hugginggpt.tools.experts.hub import HubUnavailableError, refresh_catalog, write_catalog

        tasks = task_names
        try:
            cards = refresh_catalog(catalog, tasks, per_task=args.per_task,
                                    endpoint=args.endpoint)
        except HubUnavailableError as exc:
            raise UsageError(str(exc)) from exc
        untouched = [c for t in task_types() if t.name not in tasks
                     for c in catalog.for_task(t.name)]
        output = Path(args.output or catalog_path)
        write_catalog(cards + untouched, output)
        print(f"wrote {len(cards) + len(untouched)} models for {len(tasks)} task type(s) "
              f"to {output}", file=sys.stderr)
        return EXIT_OK

    from hugginggpt.tools.experts.availability import model_cards

    rows = [
        {**card.model_dump(), "available": _availability(task, card.id)}
        for task in task_names for card in model_cards(task, catalog)
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for row in rows:
        where = ", ".join(f"{b}: {'yes' if ok else 'no'}" for b, ok in row["available"].items())
        print(f"{row['task']:<28} {row['id']:<55} downloads={row['downloads']:<10} "
              f"latency={row['expected_latency_s']}s  [{where or 'no backend'}]")
    return EXIT_OK


def _evaluate(args: argparse.Namespace) -> int:
    from hugginggpt.evaluation import DatasetError, Sample, evaluate, read_samples

    try:
        samples = read_samples(args.dataset, limit=args.limit)
    except (OSError, DatasetError) as exc:
        raise UsageError(f"cannot read {args.dataset}: {exc}") from exc
    overrides = {"llm": args.llm, "llm_base_url": args.llm_base_url,
                 "llm_config": args.llm_config}
    context = _checked(Context(max_subtasks=args.max_subtasks,
                               **{k: v for k, v in overrides.items() if v is not None}))
    if args.planner == "llm":
        from hugginggpt.graph.state import State
        from hugginggpt.nodes.plan import ask_planner
        from hugginggpt.tools.llm.config import NOT_CONFIGURED_HELP, has_llm

        if not has_llm(context, "planner"):
            raise UsageError(NOT_CONFIGURED_HELP)

        def planner(sample: Sample) -> list[dict[str, Any]]:
            state = State(request=sample.request, files=sample.files)
            return ask_planner(state, context)[0]
    else:
        from hugginggpt.nodes.planning.bank import DEFAULT_BANK, load_bank
        from hugginggpt.nodes.planning.offline import offline_plan

        bank = load_bank(context.plan_bank or DEFAULT_BANK)

        def planner(sample: Sample) -> list[dict[str, Any]]:
            return offline_plan(sample.request, sample.files, bank,
                                max_subtasks=context.max_subtasks).items

    report = evaluate(samples, planner, max_subtasks=context.max_subtasks)
    document = report.to_json() | {"dataset": str(args.dataset), "planner": args.planner}
    if args.output:
        Path(args.output).write_text(json.dumps(document, indent=2))
    print(json.dumps(document, indent=2) if args.json else report.format())
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _load_plugins(getattr(args, "plugin", []))
        if args.command == "models":
            return _models(args)
        if args.command == "eval":
            return _evaluate(args)
        if args.command == "demo":
            from hugginggpt.demo import run_demo

            return run_demo(Path(args.workspace or Context().workspace).resolve())
        if args.command == "trace":
            return asyncio.run(_trace(args))
        if args.command == "replay":
            return asyncio.run(_replay(args))
        return _run(args) if args.command == "run" else _resume(args)
    except UsageError as exc:
        print(f"hugginggpt: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hugginggpt: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
