"""A local LLM's plans with and without the grammar: how often they parse and validate.

The model is the tests' tiny random Qwen2 (``tests/tiny_chat.py``: 2 layers of width
32, a byte-level BPE tokenizer of 1,024 tokens trained on the planner's prompts, Qwen's
chat template), loaded as ``--llm transformers:FOLDER`` loads it. A random model is the
worst planner there is: what it writes shows what the grammar guarantees, not what a
real model would plan. It samples (temperature 1), so each of the 20 requests
(``tests.tiny_chat.REQUESTS``, some with files) gets a reply of its own.

Two ways, the same model and requests, in one run:

- *with the grammar*: the real planner path (``ask_planner``: the planner's prompts,
  ``complete``, the plan's bounded schema compiled by xgrammar, a fresh logits
  processor per call);
- *without*: the same messages to the same chat model, with no grammar, as a provider
  without structured output would be asked; the reply read by the same parser.

Each reply is read as the planner reads it (``parse_plan_text``, which also finds a
JSON value inside prose) and checked (``validate_plan``, the run's own validation).
Figures: replies that are JSON as a whole, replies the parser found a plan in, valid
plans, valid plans that are not empty, the median seconds per plan, and the first plan
(with the grammar, that includes compiling it). CPU only, one thread.

Verdict (exit status 1 on FAIL): all 20 plans with the grammar are valid.

Usage: ``python benchmarks/local_llm.py [--seed 0]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import tiny_chat  # noqa: E402

Row = tuple[bool, bool, bool, bool, float]
"""Of one plan: the whole reply is JSON, the parser found a plan, it is valid, it is
valid and not empty; seconds."""


def _one(ask: Any) -> Row:
    import json

    from hugginggpt.nodes.planning.validation import (
        PlanParseError,
        parse_plan_text,
        validate_plan,
    )

    started = time.perf_counter()
    text = ask()
    elapsed = time.perf_counter() - started
    try:
        json.loads(text)
        strict = True
    except ValueError:
        strict = False
    try:
        items = parse_plan_text(text)
    except PlanParseError:
        return strict, False, False, False, elapsed
    _, problems = validate_plan(items, max_subtasks=10)
    return strict, True, not problems, not problems and bool(items), elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from hugginggpt.graph.context import Context
    from hugginggpt.graph.state import State
    from hugginggpt.nodes.plan import _messages, ask_planner
    from hugginggpt.tools.llm import local_chat
    from hugginggpt.tools.llm.replies import reply_text

    torch.set_num_threads(1)
    local_chat.SAMPLING = {"do_sample": True, "temperature": 1.0}
    folder = tiny_chat.build(Path(tempfile.mkdtemp(prefix="tiny-chat-")))
    context = Context(llm=f"transformers:{folder}", planner="llm", llm_timeout_s=120)
    started = time.perf_counter()
    chat = local_chat.local_chat(context.llm)  # type: ignore[arg-type]
    load_s = time.perf_counter() - started

    def grammar(state: State) -> Any:
        return lambda: ask_planner(state, context)[1]

    def free(state: State) -> Any:
        messages = _messages(state, context)
        free_chat = chat.bind(pipeline_kwargs={"max_time": 120.0, **local_chat.SAMPLING})
        return lambda: reply_text(free_chat.invoke(messages))

    rows: dict[str, list[Row]] = {"with the grammar": [], "without": []}
    torch.manual_seed(args.seed)
    for way, make in (("with the grammar", grammar), ("without", free)):
        for request, files in tiny_chat.REQUESTS:
            rows[way].append(_one(make(State(request=request, files=files))))

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    print(f"tiny random Qwen2 ({sum(p.numel() for p in chat.llm.pipeline.model.parameters())} "  # type: ignore[attr-defined]
          f"parameters), {len(tiny_chat.REQUESTS)} requests each way, CPU, 1 thread, "
          f"commit {commit}; model load {load_s:.2f} s")
    heads = ("reply is JSON", "parsed", "valid", "valid, not empty", "median s", "first s")
    print(f"{'':17}" + "".join(f"{h:>17}" for h in heads))
    for way, found in rows.items():
        counts = [f"{sum(r[i] for r in found)}/{len(found)}" for i in range(4)]
        median = statistics.median(r[4] for r in found)
        print(f"{way:17}" + "".join(f"{c:>17}" for c in counts)
              + f"{median:>17.2f}{found[0][4]:>17.2f}")
    valid = sum(r[2] for r in rows["with the grammar"])
    ok = valid == len(rows["with the grammar"])
    print(f"\nverdict: {'PASS' if ok else 'FAIL'}: every plan with the grammar is valid "
          f"({valid}/{len(rows['with the grammar'])})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
