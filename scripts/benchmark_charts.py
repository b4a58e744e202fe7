"""Charts of the benchmarks' stored results (``docs/benchmarks/results/``), as SVG
written here: horizontal bars, grouped or stacked, each chart captioned with the stamp
of the run its figures come from (the command, the commit and the date).

Each chart reads the figures from what its benchmark printed; a result whose output
lacks them (the benchmark's format changed) is an error naming the benchmark, rather
than an empty chart. ``scripts/benchmark_pages.py`` writes the charts and checks them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

PALETTE = ("#2563eb", "#16a34a", "#d97706", "#dc2626", "#7c3aed", "#6b7280", "#0891b2")
WIDTH, LABEL_W, RIGHT, BAR_H, GAP = 760, 190, 110, 16, 12
FONT = 'font-family="sans-serif"'


@dataclass(frozen=True)
class Chart:
    alt: str
    make: Callable[[dict[str, Any]], str]


def _figures(pattern: str, output: str, name: str) -> list[tuple[str, ...]]:
    found = re.findall(pattern, output, re.MULTILINE)
    if not found:
        raise ValueError(f"the stored output of benchmarks/{name}.py has none of the figures "
                         "its chart draws: its format changed (scripts/benchmark_charts.py)")
    return found


def bars(title: str, stamp: str, series: list[str], rows: list[tuple[str, list[float]]],
         unit: str = "", stacked: bool = False,
         line: tuple[float, str] | None = None,
         colours: tuple[str, ...] = PALETTE, cap: float | None = None,
         ends: list[str] | None = None) -> str:
    """Horizontal bars, one row per label: one bar per series (grouped), or one bar of a
    segment per series (stacked); ``line``: a value to draw a dashed line at, and its
    label; ``cap``: the axis ends there, a longer bar is cut at it (its value still
    written after it), so that one outlier does not flatten the rest; ``ends``: what to
    write after each stacked bar (by default its total)."""
    per_row = BAR_H if stacked else BAR_H * len(series)
    top = 64
    height = top + len(rows) * (per_row + GAP) + 44
    totals = [sum(values) if stacked else max(values) for _, values in rows]
    most = cap or max([*totals, line[0] if line else 0]) or 1
    scale = (WIDTH - LABEL_W - RIGHT) / most
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}">',
             f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
             f'<text x="10" y="22" {FONT} font-size="15" font-weight="bold">{escape(title)}</text>']
    x = 10
    for i, name in enumerate(series):  # the legend
        parts.append(f'<rect x="{x}" y="34" width="12" height="12" fill="{colours[i]}"/>'
                     f'<text x="{x + 16}" y="45" {FONT} font-size="12">{escape(name)}</text>')
        x += 28 + 7 * len(name)
    y = top
    for row, (label, values) in enumerate(rows):
        parts.append(f'<text x="{LABEL_W - 8}" y="{y + per_row / 2 + 4:g}" {FONT} '
                     f'font-size="12" text-anchor="end">{escape(label)}</text>')
        start = LABEL_W
        for i, value in enumerate(values):
            w = min(value, most) * scale
            bar_y = y if stacked else y + i * BAR_H
            parts.append(f'<rect x="{start:.1f}" y="{bar_y}" width="{w:.1f}" '
                         f'height="{BAR_H - 2}" fill="{colours[i]}"><title>{escape(label)}, '
                         f'{escape(series[i])}: {value:g}{unit}</title></rect>')
            if stacked and w > 26:
                parts.append(f'<text x="{start + w / 2:.1f}" y="{bar_y + 11}" {FONT} '
                             f'font-size="10" fill="white" text-anchor="middle">{value:g}</text>')
            if not stacked:
                cut = " (bar cut)" if value > most else ""
                parts.append(f'<text x="{start + w + 4:.1f}" y="{bar_y + 11}" {FONT} '
                             f'font-size="10">{value:g}{unit}{cut}</text>')
            start += w if stacked else 0
        if stacked:
            end = ends[row] if ends else f"{sum(values):g}{unit}"
            parts.append(f'<text x="{start + 4:.1f}" y="{y + 11}" {FONT} font-size="10">'
                         f'{escape(end)}</text>')
        y += per_row + GAP
    if line:
        at = LABEL_W + line[0] * scale
        parts.append(f'<line x1="{at:.1f}" y1="{top - 6}" x2="{at:.1f}" y2="{y - GAP + 4}" '
                     'stroke="#111" stroke-dasharray="4 3"/>'
                     f'<text x="{at + 4:.1f}" y="{y + 8}" {FONT} font-size="11">'
                     f'{escape(line[1])}</text>')
    parts += [f'<text x="10" y="{height - 10}" {FONT} font-size="11" fill="#4b5563">'
              f'{escape(stamp)}</text>', "</svg>"]
    return "\n".join(parts) + "\n"


def scheduling(result: dict[str, Any]) -> str:
    """wall / critical path per DAG shape and executor."""
    from scripts.benchmark_pages import stamp_line

    ratio = r"\s*[\d.]+\s+([\d.]+)x\s*"
    found = _figures(rf"^(\S.*?)\s+[\d.]+\s+\|{ratio}\|{ratio}\|{ratio}\|{ratio}\|",
                     result["output"], "scheduling")
    return bars("Wall time over critical path, by DAG shape (lower is better)",
                stamp_line(result),
                ["dataflow (sync)", "dataflow (async)", "superstep", "sequential"],
                [(shape, [float(v) for v in values]) for shape, *values in found],
                unit="x", line=(1.10, "target 1.10x for dataflow"), cap=2.0)


def startup(result: dict[str, Any]) -> str:
    """A trivial offline request, cold, before and after: seconds per phase."""
    from scripts.benchmark_pages import stamp_line

    phases = _figures(r"^\| (imports|plan|select|execute|respond|other) \| ([\d.]+) \| "
                      r"([\d.]+) \|", result["output"], "startup")
    [walls] = _figures(r"^\| \*\*the command as typed\*\* .*?, wall \| ([\d.]+) \| ([\d.]+) \|",
                       result["output"], "startup")
    return bars("Start-up: a trivial offline request, cold: median seconds per phase "
                "(and the command as typed)",
                stamp_line(result), [phase for phase, _, _ in phases],
                [("before", [float(b) for _, b, _ in phases]),
                 ("after", [float(a) for _, _, a in phases])], unit=" s", stacked=True,
                ends=[f"{wall} s as typed" for wall in walls])


def answers(result: dict[str, Any]) -> str:
    """Answers judged right, honest and wrong, per split, before and after."""
    from scripts.benchmark_pages import stamp_line

    found = _figures(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\(\d+ requests\)",
                     result["output"], "answers")
    rows: list[tuple[str, list[float]]] = []
    for split, *counts in found:
        rows += [(f"{split}, before", [float(c) for c in counts[:3]]),
                 (f"{split}, after", [float(c) for c in counts[3:]])]
    return bars("Answers judged right, honest and wrong, before and after",
                stamp_line(result), ["right", "honest", "wrong"], rows, stacked=True,
                colours=("#16a34a", "#d97706", "#dc2626"))


CHARTS: dict[str, Chart] = {
    "scheduling": Chart("wall time over critical path by DAG shape and executor", scheduling),
    "startup": Chart("seconds per phase of a trivial offline request, before and after",
                     startup),
    "answers": Chart("answers right, honest and wrong per split, before and after", answers),
}
"""The benchmarks with a chart, and what it draws."""


def chart(name: str, result: dict[str, Any]) -> str:
    """A benchmark's chart, from its stored result."""
    return CHARTS[name].make(result)


def has_chart(name: str, result: dict[str, Any] | None) -> bool:
    """Whether a stored run is drawn: a benchmark with a chart that printed its figures.
    A run that failed before printing them has none (its page shows how it failed); a
    run that succeeded without them raises the chart's ``ValueError``."""
    if name not in CHARTS or result is None:
        return False
    try:
        chart(name, result)
    except ValueError:
        if result["exit_code"] == 0:
            raise
        return False
    return True
