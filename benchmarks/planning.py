"""Offline planning time against the length of the text to process.

Three requests of 1 KB, 10 KB and 100 KB each ask for a summary of a pasted article and
its translation; the article is ordinary prose, with commas, "then" and full stops that
a clause splitter could cut at. After a warm-up (MiniLM and the bank's embeddings
loaded), each is planned five times and the median is printed.

What a user would otherwise get is the planner before this change, which cut the whole
request into clauses and embedded each one; its cost is measured here as that work alone
(MiniLM on every clause of the raw request) on the 10 KB request, in the same run.

Target: every size plans in under 1 s, the 100 KB request takes at most 3x the 1 KB one
(planning time independent of the text's length), and the whole 10 KB plan costs less
than the old way's embeddings alone. The verdict line can say FAIL.

Run: ``python benchmarks/planning.py``
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hugginggpt.nodes.planning.bank import load_bank  # noqa: E402
from hugginggpt.nodes.planning.offline import offline_plan  # noqa: E402
from hugginggpt.tools.experts.lite import minilm  # noqa: E402

SENTENCES = [
    "The river rose again in the night, then fell back before dawn",
    "Farmers along the valley, who had seen this before, moved their animals uphill",
    "By noon the council had met, and then it met again to agree on a plan",
    "Schools stayed open; the roads, however, were closed until the water went down",
    "Engineers said the new wall held, although parts of it will need repair",
]
INSTRUCTION = "Summarise this article and translate the summary into French: "


def request_of(size: int) -> str:
    text, i = [], 0
    while len(INSTRUCTION) + sum(len(s) + 2 for s in text) < size:
        text.append(SENTENCES[i % len(SENTENCES)] + ".")
        i += 1
    return (INSTRUCTION + " ".join(text))[:size]


def median_time(request: str, runs: int = 5) -> tuple[float, list[str]]:
    times, tasks = [], []
    bank = load_bank()
    for _ in range(runs):
        start = time.perf_counter()
        found = offline_plan(request, [], bank, max_subtasks=10)
        times.append(time.perf_counter() - start)
        tasks = [s["task"] for s in found.items]
    return statistics.median(times), tasks


def old_clause_embedding(request: str) -> float:
    clauses = [c for c in request.replace(", then", ".").split(". ") if c.strip()]
    start = time.perf_counter()
    minilm().encode(clauses, normalize_embeddings=True, batch_size=64)
    return time.perf_counter() - start


def main() -> int:
    median_time(request_of(1_000), runs=1)  # warm-up: MiniLM, the bank's embeddings
    print(f"{'request':>9}  {'median s':>9}  plan")
    figures = {}
    for size in (1_000, 10_000, 100_000):
        seconds, tasks = median_time(request_of(size))
        figures[size] = seconds
        print(f"{size // 1000:>6} KB  {seconds:>9.3f}  {' -> '.join(tasks)}")
    old = old_clause_embedding(request_of(10_000))
    print(f"\nbefore (every clause embedded), 10 KB: {old:.3f} s for the embeddings alone, "
          f"{old / figures[10_000]:.0f}x this planner's whole time")
    ratio = figures[100_000] / figures[1_000]
    ok = (all(s < 1.0 for s in figures.values()) and ratio <= 3.0
          and figures[10_000] < old)
    print(f"100 KB / 1 KB: {ratio:.2f}x")
    print(f"verdict: {'PASS' if ok else 'FAIL'} (target: under 1 s at every size, "
          f"100 KB at most 3x the 1 KB time, and faster at 10 KB than the embeddings alone "
          f"of the old way)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
