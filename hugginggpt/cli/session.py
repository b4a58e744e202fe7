"""One run (or resumed run) on the terminal: live progress on stderr, approvals asked
interactively when there is someone to ask, the answer (or ``--json``) on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any

from langgraph.types import Command

from hugginggpt.api import RunResult, drive, objects_not_passed_again
from hugginggpt.cli.common import EXIT_CODES, UsageError, read_plan, who
from hugginggpt.cli.interrupts import running
from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.checkpoint import aopen_checkpointer
from hugginggpt.graph.context import Context
from hugginggpt.nodes.responding.answer import details
from hugginggpt.progress import Progress
from hugginggpt.tools.llm.records import usage_totals
from hugginggpt.tools.redact import redact

__all__ = ["run_session", "describe_approval", "add_download", "add_verbose",
           "asking_downloads", "llm_weights"]


def add_download(p: Any) -> None:
    """The ``--download`` option of ``run`` and ``resume``."""
    p.add_argument("--download", choices=["ask", "yes", "no"],
                   help="local models missing from the cache: ask first (the default on a "
                        "terminal), download them (within --max-download-total-mb), or "
                        "never (the default with nobody to ask; HUGGINGGPT_DOWNLOAD)")


def add_verbose(p: Any) -> None:
    """The ``--verbose`` option of ``run`` and ``resume``."""
    p.add_argument("--verbose", "-v", action="store_true",
                   help="after the answer, print each step in full: its arguments, the "
                        "model chosen and why, the candidates with their ranking scores, "
                        "and the attempts")


def asking_downloads(context: Context, as_json: bool) -> Context:
    """The run's download setting: ``ask`` on a terminal when it was not set; elsewhere
    unset means ``no`` (nobody would answer)."""
    if context.download is None and _interactive(as_json):
        return context.replace(download="ask")
    return context


def llm_weights(context: Context, as_json: bool) -> None:
    """Before a run: download its local LLM's weights (``--llm transformers:REPO``) as
    ``--download`` allows, asking on a terminal.

    Raises:
        UsageError: not downloaded (off, refused or failed): the message says how.
    """
    from hugginggpt.llm_weights import LLMWeightsError, fetch_llm_weights, missing_llm_weights

    if not missing_llm_weights(context):
        return

    def ask(line: str) -> bool:
        print(line, file=sys.stderr)
        return input("Download it? [y/N] ").strip().lower() in ("y", "yes")

    progress = Progress()
    try:
        fetch_llm_weights(context, ask if _interactive(as_json) else None,
                          lambda event: progress.handle("custom", event))
    except LLMWeightsError as exc:
        raise UsageError(str(exc)) from None
    finally:
        progress.close()


async def run_session(graph_input: Any, thread_id: str, context: Context, url: str,
                      as_json: bool, verbose: bool = False) -> int:
    """Drive the thread to its end (or to an approval nobody is there to give) and print
    the outcome (``verbose``: with each step in full); returns the exit code."""
    running(thread_id)  # Ctrl-C says how to resume it
    progress = Progress()
    async with aopen_checkpointer(url) as saver:
        app = build_graph(checkpointer=saver)
        if graph_input is None or isinstance(graph_input, Command):
            snapshot = await app.aget_state({"configurable": {"thread_id": thread_id}})
            if not snapshot.values:
                raise UsageError(f"thread {thread_id!r} has no checkpoint in {redact(url)}")
            if isinstance(graph_input, Command) and not snapshot.interrupts:
                raise UsageError(f"thread {thread_id!r} is not waiting for an approval")
            if why := objects_not_passed_again(
                    thread_id, snapshot.values.get("settings") or {}, context):
                raise UsageError(why)
        while True:
            snapshot, interrupted = await drive(app, graph_input, thread_id, context,
                                                progress.handle)
            if interrupted or not snapshot.interrupts or not _interactive(as_json):
                break
            progress.close()
            graph_input = Command(resume=_ask(snapshot.interrupts[0].value))
            progress = Progress()
        progress.close()
    result = RunResult.from_snapshot(thread_id, snapshot, context.workspace, interrupted)
    _print(result, as_json, verbose)
    return EXIT_CODES[result.status][0]


def _print(result: RunResult, as_json: bool, verbose: bool = False) -> None:
    thread_id, pending = result.thread_id, result.approval
    if as_json:
        print(json.dumps(result.document(), indent=2, ensure_ascii=False))
    elif pending is not None:
        print(describe_approval(pending))
    else:
        print(result.response or f"(no response; status {result.status})")
        if verbose:
            print("\nDetails:\n" + details(result.plan, result.selections, result.results))
    used = [f"{role}: {getattr(result, role)}" for role in ("planner", "selector", "responder")
            if getattr(result, role)]
    if used:
        print("; ".join(used), file=sys.stderr)
    if result.llm_calls:
        print(_usage_line(result.llm_calls), file=sys.stderr)
    if pending is not None:
        edit = "" if pending.get("type") == "download" else " | --plan EDITED.json"
        what = "consent to download" if edit == "" else "approval"
        print(f"thread {thread_id}: waiting for {what}; answer with: hugginggpt resume "
              f"--thread {thread_id} --approve | --reject REASON{edit}", file=sys.stderr)
    else:
        print(f"thread {thread_id}: {result.status}{_outcome_note(result)}", file=sys.stderr)


def _outcome_note(result: RunResult) -> str:
    if result.status == "interrupted":
        return f" (resume with: hugginggpt resume --thread {result.thread_id})"
    if result.status in ("partial", "failed"):
        done = sum(r.status == "done" for r in result.results.values())
        return f" ({done} of {len(result.plan)} subtasks done)"
    return ""


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


def describe_approval(pending: dict[str, Any]) -> str:
    """The pending approval question, readably: the plan with its models and risks, or
    the downloads asked for with their sizes, licenses and gating."""
    if pending.get("type") == "download":
        lines = [f"Downloads needed for: {pending.get('request')}"]
        for item in pending.get("downloads", []):
            lines.append(f"  {item['summary']} (for {item['task']})")
        lines += [f"  not downloadable: {why}" for why in pending.get("not_downloadable", [])]
        lines += [f"  problem: {p}" for p in pending.get("problems", [])]
        return "\n".join(lines)
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
    """Ask on the terminal: approve, reject with a reason, or edit (a plan file); for
    downloads, yes or no per model."""
    print(describe_approval(pending), file=sys.stderr)
    user = who()
    if pending.get("type") == "download":
        return {"who": user, "downloads": {
            item["model"]: input(f"download {item['model']} ({item['size_mb']:g} MB)? "
                                 "[y/N] ").strip().lower() in ("y", "yes")
            for item in pending.get("downloads", [])}}
    while True:
        choice = input("[a]pprove, [r]eject, [e]dit with a plan file? ").strip().lower()
        if choice.startswith("a"):
            return {"action": "approve", "who": user}
        if choice.startswith("r"):
            return {"action": "reject", "who": user, "reason": input("reason: ").strip()}
        if choice.startswith("e"):
            try:
                return {"action": "edit", "who": user, "plan": read_plan(input("plan file: "))}
            except UsageError as exc:
                print(exc, file=sys.stderr)
