"""Routing benchmark: end-to-end latency under load, and who served the calls that needed
a strong model, for three ways of spreading LLM calls over three endpoints.

Three local OpenAI-compatible servers (``tests/llm_server.py``, streaming over real
HTTP) stand in for a heterogeneous fleet:

- ``fast``: small tier; 0.05 s to the first token, 400 tokens/s, 16 requests at once.
  Weak: asked to plan, it answers a plan the validator rejects (an unknown task type).
- ``strong``: large tier; 0.2 s to the first token, 100 tokens/s, 4 requests at once
  (more wait in its queue, as on a busy GPU server). Always answers well.
- ``flaky``: medium tier; 0.1 s, 200 tokens/s, 8 at once, but 30% of its requests fail
  with HTTP 500.

Each run is the project's real graph (plan, select, execute on the dry-run backend,
respond) with every LLM call going through :func:`hugginggpt.tools.llm.client.complete`:
one planner call (plus a repair call when the plan is rejected), two selector calls (the
catalog makes every choice a close call) and one responder call. Half the requests have
two steps (planning them needs the large tier), half one step (medium). Replies are 60
tokens for plans, 20 for choices and 150 for answers.

Strategies, each on fresh router statistics, in one run of the script:

- ``router``: capability filter, then the lowest expected latency from measured time to
  first token, tokens/s and the work in flight; failing endpoints are taken out and
  probed back in;
- ``round-robin``: the next endpoint for every call, whatever it is;
- ``strongest``: the strongest endpoint for every call.

All fall back to the next endpoint when a call fails. ``--runs`` runs per strategy
(default 48) at ``--concurrency`` (default 16) concurrent runs on one compiled graph.
Reported per strategy: p50 and p95 of a run's end-to-end latency, runs completed, plan
repairs, the share of LLM calls answered by an endpoint at least as capable as the call
needed, and the share of calls that needed the large tier answered by it. Target: the
router's p95 at least 1.5x lower than both others', with every large-tier call served by
the large tier.

Usage: ``python benchmarks/routing.py [--runs N] [--concurrency N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from hugginggpt import build_graph  # noqa: E402
from hugginggpt.graph.checkpoint import serializer  # noqa: E402
from hugginggpt.graph.context import Context  # noqa: E402
from hugginggpt.tools.llm.router import ROUTER
from tests.llm_server import ScriptedLLMServer  # noqa: E402

GOOD_PLAN = {"subtasks": [
    {"id": 0, "task": "summarization", "dep": [], "args": {"text": "The quarterly report."}},
    {"id": 1, "task": "translation", "dep": [0],
     "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}},
]}
BAD_PLAN = {"subtasks": [{"id": 0, "task": "summarize-and-translate", "dep": [],
                          "args": {"text": "The quarterly report."}}]}
REQUESTS = [
    "Summarize the quarterly report and then translate the summary into French",
    "Summarize the quarterly report",
]
STRATEGIES = ("router", "round-robin", "strongest")


def start_servers() -> dict[str, ScriptedLLMServer]:
    servers = {
        "fast": ScriptedLLMServer(ttft_s=0.05, tokens_per_s=400, slots=16, seed=1),
        "strong": ScriptedLLMServer(ttft_s=0.2, tokens_per_s=100, slots=4, seed=2),
        "flaky": ScriptedLLMServer(ttft_s=0.1, tokens_per_s=200, slots=8,
                                   failure_rate=0.3, seed=3),
    }
    for name, server in servers.items():
        plan = BAD_PLAN if name == "fast" else GOOD_PLAN
        server.defaults.update({
            "planner": {"tool_args": plan, "tokens": 60},
            "selector": {"tool_args": {"model": "m/two", "reason": "fits"}, "tokens": 20},
            "responder": {"content": "The summary, in French.", "tokens": 150},
        })
        server.start()
    return servers


def write_files(folder: Path, servers: dict[str, ScriptedLLMServer]) -> tuple[str, str]:
    tiers = {"fast": "small", "strong": "large", "flaky": "medium"}
    config = folder / "llms.toml"
    config.write_text("".join(
        f'[[endpoints]]\nname = "{name}"\nmodel = "{name}-model"\n'
        f'base_url = "{server.url}"\ntier = "{tiers[name]}"\n\n'
        for name, server in servers.items()
    ) + "[routing]\ncooldown_s = 5\n")
    catalog = folder / "catalog.json"
    catalog.write_text(json.dumps({"version": 1, "models": [
        {"id": f"{prefix}/{n}", "task": task, "downloads": 1000, "likes": 1,
         "expected_latency_s": 0.01}
        for task, prefix in (("summarization", "s"), ("translation", "m"))
        for n in ("one", "two")
    ]}))
    return str(config), str(catalog)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(strategy: str, config: str, catalog: str, workspace: str, runs: int,
            concurrency: int) -> dict[str, Any]:
    ROUTER.reset()
    graph = build_graph(checkpointer=InMemorySaver(serde=serializer()))
    context = Context(llm_config=config, llm_routing=strategy,  # type: ignore[arg-type]
                      backend="dry-run", dry_run_latency_scale=0.01, catalog=catalog,
                      workspace=workspace, llm_timeout_s=30)

    def one(n: int) -> tuple[float, dict[str, Any]]:
        started = time.monotonic()
        out = graph.invoke({"request": REQUESTS[n % 2]},
                           {"configurable": {"thread_id": f"{strategy}-{n}"}}, context=context)
        return time.monotonic() - started, out

    with ThreadPoolExecutor(concurrency) as pool:
        started = time.monotonic()
        done = list(pool.map(one, range(runs)))
        wall = time.monotonic() - started
    latencies = [t for t, _ in done]
    calls = [c for _, out in done for c in out["llm_calls"] if c.ok]
    strong_needed = [c for c in calls if c.need == 3]
    return {
        "strategy": strategy,
        "p50": statistics.median(latencies),
        "p95": percentile(latencies, 0.95),
        "wall": wall,
        "completed": sum(out["status"] == "completed" for _, out in done),
        "repairs": sum(sum(c.role == "planner" for c in out["llm_calls"] if c.ok) - 1
                       for _, out in done),
        "failed_attempts": sum(not c.ok for _, out in done for c in out["llm_calls"]),
        "capable": sum(c.tier >= c.need for c in calls) / len(calls),
        "strong_by_strong": (sum(c.tier == 3 for c in strong_needed) / len(strong_needed)
                             if strong_needed else 1.0),
        "strong_calls": len(strong_needed),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    servers = start_servers()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config, catalog = write_files(Path(tmp), servers)
            # one run first, not counted: it loads the embedding model that finds the
            # planner's few-shot examples and ranks models (seconds, once per process)
            warm = Context(llm_config=config, backend="dry-run", dry_run_latency_scale=0.01,
                           workspace=tmp, catalog=catalog)
            build_graph(checkpointer=InMemorySaver()).invoke(
                {"request": REQUESTS[0]}, {"configurable": {"thread_id": "warm"}},
                context=warm)
            rows = [measure(s, config, catalog, tmp, args.runs, args.concurrency)
                    for s in STRATEGIES]
    finally:
        for server in servers.values():
            server.stop()

    print(f"{args.runs} runs per strategy, {args.concurrency} at once; endpoints: fast "
          "(small, weak planner), strong (large, 4 slots), flaky (medium, 30% errors)\n")
    print(f"{'strategy':<12} {'p50 s':>7} {'p95 s':>7} {'wall s':>7} {'done':>6} "
          f"{'repairs':>8} {'failed':>7} {'capable':>8} {'large by large':>15}")
    for r in rows:
        print(f"{r['strategy']:<12} {r['p50']:>7.2f} {r['p95']:>7.2f} {r['wall']:>7.1f} "
              f"{r['completed']:>3}/{args.runs:<2} {r['repairs']:>8} {r['failed_attempts']:>7} "
              f"{r['capable']:>7.0%} {r['strong_by_strong']:>8.0%} of {r['strong_calls']:<3}")
    router = rows[0]
    print()
    ok = True
    for other in rows[1:]:
        ratio = other["p95"] / router["p95"]
        passed = ratio >= 1.5
        ok &= passed
        print(f"p95 {other['strategy']} / router: {ratio:.2f}x (target >= 1.5x) "
              f"{'PASS' if passed else 'FAIL'}")
    served = router["strong_by_strong"] == 1.0
    ok &= served
    print(f"router: every call needing the large tier served by it: "
          f"{'PASS' if served else 'FAIL'} ({router['strong_by_strong']:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
