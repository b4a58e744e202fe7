"""Coverage: how many task types a new user can run, in four set-ups, through the stubs.

Each set-up is a fresh process with an empty Hugging Face cache (a new ``HF_HOME``) and
the environment a user would have:

1. ``offline``: no network (``HF_HUB_OFFLINE=1``), no LLM key, no Hugging Face token;
2. ``llm``: an LLM key (``HUGGINGGPT_LLM`` at a local OpenAI-compatible server,
   ``tests/llm_server.py``), the Hub reachable (the mini-hub, ``tests/mini_hub.py``, via
   ``HF_ENDPOINT``) but no token;
3. ``llm+hf``: the same and an ``HF_TOKEN``;
4. ``downloads``: the same and downloads allowed (``HUGGINGGPT_DOWNLOAD=yes``).

The mini-hub serves every catalog model: its library, pipeline tag, gating, licence and
the inference providers the catalog records for it (what ``models refresh`` read from the
Hub), so that hf-inference asks it which providers serve a model as it would ask the Hub.
Nothing is counted by hand: in each process a task type counts when
:func:`hugginggpt.nodes.ranking.rank_candidates` (selection's ranking over
:func:`hugginggpt.tools.experts.availability.runnable`, the one test of "can run now")
finds a candidate for it in the default ``auto`` mode (for a task type whose only
candidates are specialists, such as the face detector for object-detection, in a request
that uses their words), so new backends, task types and catalog models show up by
themselves.

Targets (issue 13, of the 30 task types planned): at least 10 task types offline, 16 with
an LLM key only and 28 with downloads allowed; a set-up without a target has none. The
script prints a markdown table, then the task types of each set-up, and exits 1 when a
target is missed.

Usage: ``python benchmarks/coverage.py [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.llm_server import ScriptedLLMServer  # noqa: E402
from tests.mini_hub import MiniHub  # noqa: E402


@dataclass(frozen=True)
class Setup:
    """One user's situation: what is configured, and the target for it."""

    name: str
    label: str
    llm: bool = False
    hub: bool = False
    token: bool = False
    download: bool = False
    cached: bool = False
    """The catalog's models are in the cache first (fetched from the mini-hub by the real
    ``snapshot_download``, their ``config.json`` only), then the set-up runs offline."""
    target: int | None = None
    counted: bool = True
    """One of the four set-ups the coverage count reports (else: only the
    what-runs-where table uses it)."""


SETUPS = (
    Setup("offline", "offline, no key", target=10),
    Setup("llm", "an LLM key only", llm=True, hub=True, target=16),
    Setup("llm+hf", "an LLM key and an HF token", llm=True, hub=True, token=True),
    Setup("downloads", "an LLM key, an HF token and downloads allowed", llm=True, hub=True,
          token=True, download=True, target=28),
)
CACHED = Setup("cached", "offline, no key, weights cached", cached=True, counted=False)
"""What a user whose cache holds the catalog's models runs with no network."""

_CLEARED = ("HF_TOKEN", "HUGGINGFACEHUB_API_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE",
            "OPENAI_API_KEY", "OPENAI_BASE_URL", "HF_HOME", "HF_HUB_CACHE")


@dataclass
class Found:
    """What one set-up can run: task type -> the backends (most preferred first) and the
    model ``auto`` would choose, as (model, backend)."""

    setup: Setup
    backends: dict[str, list[str]] = field(default_factory=dict)
    default: dict[str, tuple[str, str]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    """Every task type, runnable or not."""
    llm_configured: bool = False

    @property
    def total(self) -> int:
        return len(self.names)

    @property
    def tasks(self) -> list[str]:
        return sorted(self.backends)

    @property
    def verdict(self) -> str:
        if self.setup.target is None:
            return "-"
        return "PASS" if len(self.backends) >= self.setup.target else "FAIL"


# ----------------------------------------------------------------------------- the child


def _child() -> None:
    """In the set-up's own process: every task type, ranked as selection ranks it."""
    from hugginggpt.graph.context import Context
    from hugginggpt.nodes.ranking import Query, rank_candidates
    from hugginggpt.tools.experts.availability import model_cards
    from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
    from hugginggpt.tools.experts.registry import run_settings
    from hugginggpt.tools.experts.tasks import task_types
    from hugginggpt.tools.llm.config import has_llm

    context = Context()
    catalog = load_catalog(context.catalog or DEFAULT_CATALOG)
    found: dict[str, Any] = {"names": [t.name for t in task_types()], "tasks": {},
                             "llm_configured": has_llm(context, "planner")}
    with run_settings(context.backend_settings()):
        for task in task_types():
            ranked = rank_candidates(task.name, catalog, context.backend, Query())
            if not ranked:  # a specialist (the face detector) runs for requests about it
                subjects = sorted({word for card in model_cards(task.name, catalog)
                                   for word in card.subjects})
                ranked = rank_candidates(task.name, catalog, context.backend,
                                         Query(text=" ".join(subjects)))
            if ranked:
                found["tasks"][task.name] = {
                    "backends": list(dict.fromkeys(c.backend for c in ranked)),
                    "default": [ranked[0].model, ranked[0].backend]}
    print(json.dumps(found))


def _prepare() -> None:
    """Fill this process's (fresh) Hugging Face cache from the mini-hub: each catalog
    model's ``config.json``, which is what tells a backend that weights are here."""
    from huggingface_hub import snapshot_download

    from hugginggpt.tools.experts.catalog import load_catalog

    for model in sorted({card.id for card in load_catalog().cards()}):
        snapshot_download(model, allow_patterns=["config.json"])


# ----------------------------------------------------------------------------- the stubs


def _publish_catalog(hub: MiniHub) -> None:
    """Every catalog model on the mini-hub, with the facts the catalog records (and the
    providers it records as serving it, per task)."""
    sys.path.insert(0, str(ROOT))
    from hugginggpt.tools.experts.catalog import load_catalog

    infos: dict[str, dict[str, Any]] = {}
    for card in load_catalog().cards():
        info = infos.setdefault(card.id, {
            "library_name": card.library_name, "pipeline_tag": card.pipeline_tag or card.task,
            "gated": card.gated, "cardData": {"license": card.license},
            "downloads": card.downloads, "likes": card.likes, "inferenceProviderMapping": []})
        info["inferenceProviderMapping"] += [
            {"provider": p, "providerId": f"{p}/{card.id}", "task": card.task, "status": "live"}
            for p in card.providers]
    for repo_id, info in infos.items():
        hub.add_model(repo_id, files={"config.json": b"{}"}, info=info)


def _environment(setup: Setup, home: Path, hub: MiniHub, llm: ScriptedLLMServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in _CLEARED and not k.startswith("HUGGINGGPT_")}
    env |= {"HF_HOME": str(home / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
            "HUGGINGGPT_WORKSPACE": str(home / "workspace"),
            "HUGGINGGPT_STATE_DIR": str(home / "state"), "PYTHONPATH": str(ROOT)}
    env["HF_ENDPOINT"] = hub.url
    if not setup.hub:
        env["HF_HUB_OFFLINE"] = "1"
    if setup.llm:
        env |= {"HUGGINGGPT_LLM": "scripted-model", "HUGGINGGPT_LLM_BASE_URL": llm.url,
                "OPENAI_API_KEY": "sk-stub"}
    if setup.token:
        env["HF_TOKEN"] = "hf_stub_token"
    if setup.download:
        env["HUGGINGGPT_DOWNLOAD"] = "yes"
    return env


def _child_run(setup: Setup, mode: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), mode], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"set-up {setup.name} failed ({mode}):\n{done.stderr[-3000:]}")
    return done.stdout


def _run(setup: Setup, hub: MiniHub, llm: ScriptedLLMServer) -> Found:
    with tempfile.TemporaryDirectory(prefix=f"coverage-{setup.name}-") as home:
        env = _environment(setup, Path(home), hub, llm)
        if setup.cached:
            _child_run(setup, "--prepare", {k: v for k, v in env.items()
                                            if k != "HF_HUB_OFFLINE"})
        stdout = _child_run(setup, "--child", env)
    data = json.loads(stdout.strip().splitlines()[-1])
    found = Found(setup, names=data["names"], llm_configured=data["llm_configured"])
    for task, entry in data["tasks"].items():
        found.backends[task] = entry["backends"]
        found.default[task] = (entry["default"][0], entry["default"][1])
    return found


def measure(setups: tuple[Setup, ...] = SETUPS) -> list[Found]:
    """Each set-up in its own process, at most two at once, against one mini-hub and one
    LLM server."""
    llm = ScriptedLLMServer().start()
    hub = MiniHub().start()
    try:
        _publish_catalog(hub)
        with ThreadPoolExecutor(max_workers=2) as pool:
            return list(pool.map(lambda s: _run(s, hub, llm), setups))
    finally:
        hub.stop()
        llm.stop()


# ----------------------------------------------------------------------------- the report


def _per_backend(found: Found) -> str:
    counts: dict[str, int] = {}
    for backends in found.backends.values():
        for b in backends:
            counts[b] = counts.get(b, 0) + 1
    return ", ".join(f"{b} {n}" for b, n in sorted(counts.items(), key=lambda i: -i[1])) or "-"


def report(results: list[Found]) -> str:
    """The markdown table of the counted set-ups, then each one's task types."""
    results = [f for f in results if f.setup.counted]
    total = results[0].total if results else 0
    lines = [f"| set-up | task types it can run (of {total}) | target | verdict "
             "| backends (task types each) |", "| --- | --- | --- | --- | --- |"]
    for found in results:
        target = "-" if found.setup.target is None else f">= {found.setup.target}"
        lines.append(f"| {found.setup.label} | {len(found.backends)} | {target} "
                     f"| {found.verdict} | {_per_backend(found)} |")
    lines.append("")
    for found in results:
        lines.append(f"- {found.setup.label} ({len(found.backends)}): "
                     + (", ".join(found.tasks) or "none"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="the counts as JSON")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child or args.prepare:
        _child() if args.child else _prepare()
        return 0
    results = measure()
    if args.json:
        print(json.dumps([{"setup": f.setup.name, "count": len(f.backends), "tasks": f.tasks,
                           "target": f.setup.target, "verdict": f.verdict} for f in results],
                         indent=2))
    else:
        print(report(results))
    for found in results:
        if found.setup.llm and not found.llm_configured:
            print(f"set-up {found.setup.name}: the LLM was not configured", file=sys.stderr)
            return 1
    return 1 if any(f.verdict == "FAIL" for f in results) else 0


if __name__ == "__main__":
    sys.exit(main())
