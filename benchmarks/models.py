"""Model-reuse benchmark: what a user pays for the model on a first request and on the
next ones, end to end through the path a subtask takes.

The lite engines (``tools/experts/lite/engines.py``) load once per process through
``load_once``; the local backend keeps loaded pipelines in a per-process LRU
(``tools/experts/local/``). Each request here is one subtask run as ``nodes/execute.py``
runs it (``run_job`` under the run's backend settings): find the tool, resolve the
arguments, call the tool in the executor's thread pool, check its outputs. Per engine,
in one process: a first request, then ``--warm`` more with the same input.

*Model management* is timed where the tools get their models: every ``load_once``
loader the lite tools and engines call (a lookup once loaded, else the load), and the
local cache (``_entry``: LRU lookup, locks and bookkeeping, or the load on a miss;
``release``). A load is counted when a loader finds nothing loaded or the local cache
calls its uncached loader. Verdict per engine: a warm request's median management time
is under 5% of what the first request spent loading, and no warm request loads. The
end-to-end times are what a user waits for: for an engine with much work per call (an
OCR pass) reuse saves a small part of a request. MiniLM zero-shot reuses the model that
MiniLM similarity loaded: it is compared with that load and must load nothing.

Self-check (the verdict must be able to fail): after the table each engine's model is
dropped (the loader's store emptied, the local cache cleared) and one more request is
measured as a warm one; the verdict must say FAIL on every engine. The ratio alone
notices a reload wherever reloading costs time, the load count everywhere. The script
exits 1 on a miss or on a self-check that passes.

torch, transformers, sentence-transformers, scipy and PIL are imported before any timing
(times printed), else the first engine would pay them. Wall times, on a machine that may
be busy: the header prints the load average.

Usage: ``python benchmarks/models.py [--warm N]`` (default 9 warm requests per engine).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import hugginggpt.tools.experts.local.models as local_models
from hugginggpt.graph.context import Context
from hugginggpt.nodes.execution.attempts import run_job
from hugginggpt.nodes.execution.board import Board
from hugginggpt.nodes.execution.jobs import Job
from hugginggpt.tools.experts.lite import classifiers as lite_classifiers
from hugginggpt.tools.experts.lite import engines as lite
from hugginggpt.tools.experts.lite import languages as lite_languages
from hugginggpt.tools.experts.lite import tools as lite_tools
from hugginggpt.tools.experts.registry import run_settings

TARGET = 0.05
"""A warm request's model management must cost less than this share of the load."""
ROOT = Path(__file__).resolve().parent.parent
SHARED_IMPORTS = (
    "numpy", "scipy.sparse", "scipy.linalg", "PIL.Image", "torch", "transformers",
    "sentence_transformers", "transformers.models.bert.modeling_bert",
)
"""Imported before any timing, in this order; each time excludes what came before."""
TINY_TASK = "text-classification"

REVIEW = "The film was wonderful: a clever plot, great acting, and I loved the ending."
FRENCH = "Le chat dort sur le canapé pendant que les enfants jouent dans le jardin."
ARTICLE = (
    "The city council approved a new budget for public transport on Monday. "
    "The budget adds three bus lines and extends the tram to the airport. "
    "Council members said the tram extension will cut travel times to the airport by half. "
    "Critics argued that the budget ignores cyclists and pedestrians. "
    "Construction of the tram extension starts in the spring and takes two years. "
    "The council will publish the full budget on its website this week."
)
RECEIPT = ("CORNER BAKERY", "Invoice 1042", "Date: 2024-03-05", "2 x Croissant 4.80",
           "1 x Coffee 3.20", "Total: 8.00 EUR")


# --- what requests spend on their models ---------------------------------------------


def _store(loader: Any) -> list[Any] | None:
    """The list a ``load_once`` loader keeps its object in (None: not such a loader)."""
    if not inspect.isfunction(loader) or not hasattr(loader, "__wrapped__"):
        return None
    store = inspect.getclosurevars(loader).nonlocals.get("loaded")
    return store if isinstance(store, list) else None


LOADERS = {name: store for module in (lite, lite_languages) for name in module.__all__
           if (store := _store(getattr(module, name))) is not None}
"""The lite engines' ``load_once`` loaders by name, with their stores."""


class Management:
    """Times every way a tool gets its model: seconds and loads since the last take."""

    def __init__(self) -> None:
        self.seconds, self.loads = 0.0, 0

    def take(self) -> tuple[float, int]:
        spent = self.seconds, self.loads
        self.seconds, self.loads = 0.0, 0
        return spent

    def _timed(self, call: Callable[..., Any], store: list[Any] | None = None
               ) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            loading = store is not None and not store
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.loads += loading

        return timed

    def _count_load(self, *args: Any, **kwargs: Any) -> Any:
        self.loads += 1
        return self._uncached(*args, **kwargs)

    @contextmanager
    def patched(self) -> Iterator[Management]:
        """Where the tools look their models up: the loader names in the lite tools,
        classifiers and engines modules, and the local cache's entry point, release and
        uncached loader."""
        self._uncached = local_models._load_uncached
        timed = {name: self._timed(getattr(lite_languages, name, None)
                                   or getattr(lite, name), store)
                 for name, store in LOADERS.items()}
        with ExitStack() as stack:
            for module in (lite, lite_tools, lite_classifiers, lite_languages):
                for name in LOADERS:
                    if hasattr(module, name):
                        stack.enter_context(mock.patch.object(module, name, timed[name]))
            stack.enter_context(mock.patch.object(
                local_models, "_entry", self._timed(local_models._entry)))
            stack.enter_context(mock.patch.object(
                local_models._CACHE, "release", self._timed(local_models._CACHE.release)))
            stack.enter_context(mock.patch.object(
                local_models, "_load_uncached", self._count_load))
            yield self


# --- engines and requests ----------------------------------------------------------


@dataclass
class Engine:
    """One row: a tool's task and model, its input and a check of its outputs."""

    name: str
    task: str
    model: str
    backend: str
    args: dict[str, str]
    valid: Callable[[dict[str, Any]], bool]
    loader: str | None = None
    """The lite loader it uses (None: the local backend's cache)."""
    shared_with: str | None = None
    """The row that loads this engine's model first."""
    files: list[str] = field(default_factory=list)


def loaded(engine: Engine) -> bool:
    if engine.loader is not None:
        return bool(LOADERS[engine.loader])
    return any(model == engine.model for _, model in local_models.loaded_models())


def drop(engine: Engine) -> None:
    """Forget the engine's loaded model, as a cache that does not reuse would."""
    if engine.loader is not None:
        LOADERS[engine.loader].clear()
    else:
        local_models.clear_loaded()


def top_label(outputs: dict[str, Any]) -> str:
    labels = outputs.get("labels")
    return str(labels[0]["label"]) if isinstance(labels, list) and labels else ""


def draw_receipt(path: Path) -> Path:
    """A receipt with printed text. 760 px square: RapidOCR scales an image up until its
    shorter side is 736 px, so a smaller image would cost more, not less."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (760, 760), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=32)
    for i, line in enumerate(RECEIPT):
        draw.text((60, 80 + i * 90), line, fill="black", font=font)
    image.save(path)
    return path


def build_tiny_model(folder: Path) -> Path:
    """The tiny classifier, built in a child process (nothing it imports or runs warms
    this one)."""
    code = ("import sys; from pathlib import Path; from tests.tiny_models import build; "
            "print(build(sys.argv[1], Path(sys.argv[2])))")
    done = subprocess.run([sys.executable, "-c", code, TINY_TASK, str(folder)], cwd=ROOT,
                          check=True, capture_output=True, text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def engines(workspace: Path, tiny_model: Path) -> list[Engine]:
    """The rows, in the order they run: lingua before summa, whose tool detects the
    language first; MiniLM similarity before zero-shot, which reuses its model."""
    image = str(draw_receipt(workspace / "receipt.png"))
    return [
        Engine("VADER", "text-classification", lite.VADER, lite.LITE_BACKEND,
               {"text": REVIEW}, lambda o: top_label(o) == "POSITIVE", "vader"),
        Engine("lingua", "text-classification", lite_languages.LINGUA, lite.LITE_BACKEND,
               {"text": FRENCH}, lambda o: top_label(o) == "fr", "lingua_detector"),
        Engine("summa TextRank", "summarization", lite.TEXTRANK, lite.LITE_BACKEND,
               {"text": ARTICLE}, lambda o: 0 < len(o.get("text", "")) < len(ARTICLE),
               "textrank"),
        Engine("RapidOCR", "image-to-text", lite.RAPIDOCR, lite.LITE_BACKEND,
               {"image": image}, lambda o: "Total" in o.get("text", ""), "ocr_engine",
               files=[image]),
        Engine("MiniLM similarity", "sentence-similarity", lite.MINILM, lite.LITE_BACKEND,
               {"text": "A cat sleeps on the sofa.", "text2": "A kitten naps on the couch."},
               lambda o: float(o.get("score", 0)) > 0.5, "text_encoder"),
        Engine("MiniLM zero-shot", "zero-shot-classification", lite.MINILM_ZERO_SHOT,
               lite.LITE_BACKEND,
               {"text": "The striker scored twice and the home team won the match.",
                "labels": "sports, finance, politics"},
               lambda o: top_label(o) == "sports", "text_encoder", "MiniLM similarity"),
        Engine("local tiny BERT", TINY_TASK, str(tiny_model), local_models.LOCAL_BACKEND,
               {"text": "the movie was good"},
               lambda o: top_label(o) in {"NEGATIVE", "POSITIVE"}),
    ]


@dataclass
class Request:
    seconds: float
    """End to end: from the executor taking the subtask to its checked result."""
    management: float
    loads: int


def request(engine: Engine, management: Management, workspace: Path) -> Request:
    """One subtask for the engine, as the executor runs it."""
    board = Board([0])
    job = Job(id=0, task=engine.task, dep=[], args=engine.args,
              candidates=[{"model": engine.model, "backend": engine.backend}],
              no_model_reason="", files=engine.files, workspace=str(workspace),
              thread_id="bench", board=board.key, timeout_s=600, retries=0, backoff_s=0,
              latency_scale=1.0, max_models=1, settings=Context().backend_settings())
    management.take()
    started = time.perf_counter()
    try:
        with run_settings(job.settings):
            result = asyncio.run(run_job(job, {}, lambda event: None))
    finally:
        board.close()
    seconds = time.perf_counter() - started
    spent, loads = management.take()
    if result["status"] != "done" or not engine.valid(result["outputs"]):
        raise RuntimeError(f"{engine.name}: {result['status']} {result.get('error')} "
                           f"{result.get('outputs')!r}")
    return Request(seconds, spent, loads)


@dataclass
class Row:
    engine: Engine
    first: Request
    warm: list[Request]
    load_s: float
    """What the first request spent loading (the sharing row's, for a shared engine)."""

    @property
    def second_s(self) -> float:
        return statistics.median(r.seconds for r in self.warm)

    @property
    def warm_management(self) -> float:
        return statistics.median(r.management for r in self.warm)

    @property
    def warm_loads(self) -> int:
        return sum(r.loads for r in self.warm)

    @property
    def ratio(self) -> float:
        return self.warm_management / self.load_s if self.load_s > 0 else float("inf")

    @property
    def ok(self) -> bool:
        return self.ratio < TARGET and self.warm_loads == 0


def measure(engine: Engine, management: Management, workspace: Path, warm_runs: int,
            loads: dict[str, float]) -> Row:
    """The first request, then ``warm_runs`` more; ``loads`` maps rows to what their
    first request spent loading, for engines another row loaded."""
    if loaded(engine) != bool(engine.shared_with):
        state = "already loaded" if loaded(engine) else "not loaded"
        raise RuntimeError(f"{engine.name}: the model is {state} before the first request")
    first = request(engine, management, workspace)
    if first.loads != (0 if engine.shared_with else 1):
        raise RuntimeError(f"{engine.name}: the first request loaded {first.loads} times")
    warm = [request(engine, management, workspace) for _ in range(warm_runs)]
    load_s = loads[engine.shared_with] if engine.shared_with else first.management
    loads[engine.name] = load_s
    return Row(engine, first, warm, load_s)


def reload_forced(row: Row, management: Management, workspace: Path) -> Row:
    """One more request after the engine's model was dropped, measured as a warm one."""
    drop(row.engine)
    return Row(row.engine, row.first, [request(row.engine, management, workspace)],
               row.load_s)


# --- the report --------------------------------------------------------------------


def import_shared() -> list[tuple[str, float]]:
    """Import the shared heavy packages; each one's time excludes those before it."""
    times = []
    for name in SHARED_IMPORTS:
        started = time.perf_counter()
        importlib.import_module(name)
        times.append((name, time.perf_counter() - started))
    return times


def print_table(rows: list[Row]) -> None:
    print(f"{'engine':<18} {'1st req s':>9} {'2nd req s':>9} {'saved s':>8} {'loads':>6} "
          f"{'mgmt 1st s':>10} {'mgmt 2nd s':>10} {'mgmt ratio':>10}  verdict")
    for row in rows:
        star = "*" if row.engine.shared_with else " "
        loads = f"{row.first.loads}/{row.warm_loads}"
        print(f"{row.engine.name:<18} {row.first.seconds:>9.4f} {row.second_s:>9.4f} "
              f"{row.first.seconds - row.second_s:>8.4f} {loads:>6} {row.load_s:>9.4f}{star} "
              f"{row.warm_management:>10.6f} {row.ratio:>10.3%}  "
              f"{'PASS' if row.ok else 'FAIL'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=9, help="warm requests per engine")
    options = parser.parse_args(argv)
    busy = os.getloadavg()[0]

    with (tempfile.TemporaryDirectory(prefix="hugginggpt-models-") as tmp,
          Management().patched() as management):
        workspace = Path(tmp)
        tiny_model = build_tiny_model(workspace / "models")
        shared = import_shared()
        loads: dict[str, float] = {}
        rows = [measure(engine, management, workspace, options.warm, loads)
                for engine in engines(workspace, tiny_model)]
        forced = [reload_forced(row, management, workspace) for row in rows]

    print(f"{os.cpu_count()} CPUs, load average {busy:.2f} over the minute before the run")
    print(f"shared imports before timing: {sum(s for _, s in shared):.2f} s "
          f"({', '.join(f'{name} {seconds:.2f}' for name, seconds in shared)})")
    print(f"a request = one subtask as the executor runs it; 2nd = median of {options.warm} "
          "further requests with the same input;\nsaved = 1st - 2nd; loads = on the 1st / "
          "on all further requests; mgmt = time getting the model\n(1st: its load, * on "
          "the row that loaded the shared model; 2nd: median lookup, locks, LRU "
          f"bookkeeping, any reload);\ntarget: mgmt ratio = mgmt 2nd / mgmt 1st < "
          f"{TARGET:.0%}, and no further load\n")
    print_table(rows)
    misses = [row.engine.name for row in rows if not row.ok]
    print(f"\nwarm model management < {TARGET:.0%} of the cold load, no reload: "
          + (f"FAIL on {', '.join(misses)}" if misses else f"PASS on all {len(rows)} engines"))

    print("\nself-check: each engine's model dropped before one more request "
          "(a cache that does not reuse), measured as the 2nd:\n")
    print_table(forced)
    caught = [row for row in forced if not row.ok]
    by_ratio = [row.engine.name for row in forced if row.ratio >= TARGET]
    print(f"\nself-check: the verdict says FAIL on {len(caught)} of {len(forced)} engines "
          f"({'as it must' if len(caught) == len(forced) else 'it must on all: BROKEN'}); "
          f"the ratio alone on {len(by_ratio)} ({', '.join(by_ratio) or 'none'})")
    return 1 if misses or len(caught) < len(forced) else 0


if __name__ == "__main__":
    sys.exit(main())
