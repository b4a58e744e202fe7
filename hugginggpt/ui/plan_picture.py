"""The plan's DAG as a picture: inline SVG, drawn here.

No graph library and nothing from the internet (the UI works offline): subtasks are laid
out in columns by depth (a subtask sits one column right of its deepest dependency), in
plan order within a column; each dependency is an arrow. A box's colour is the
subtask's state (see :data:`hugginggpt.ui.view.ROW_STATES`), so the same picture shows
the plan waiting for approval and the run's progress.
"""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["plan_svg", "depths", "COLOURS"]

COLOURS = {
    "waiting": ("#f3f4f6", "#6b7280"),
    "running": ("#dbeafe", "#2563eb"),
    "retrying": ("#fef3c7", "#d97706"),
    "done": ("#dcfce7", "#16a34a"),
    "failed": ("#fee2e2", "#dc2626"),
    "skipped": ("#fef9c3", "#a16207"),
}
"""A state -> (fill, stroke) of its box."""

_BOX_W, _BOX_H, _GAP_X, _GAP_Y, _PAD = 190, 54, 60, 22, 12


def depths(plan: list[dict[str, Any]]) -> dict[int, int]:
    """Each subtask's column: 0 without dependencies, else one more than its deepest
    dependency. Dependencies on ids the plan lacks are ignored, and a cycle (which a
    validated plan never has) cannot loop: a subtask met again while its depth is being
    worked out counts as a root."""
    deps = {int(s["id"]): [int(d) for d in s.get("dep") or []] for s in plan}
    found: dict[int, int] = {}
    visiting: set[int] = set()

    def depth(node: int) -> int:
        if node in found:
            return found[node]
        if node in visiting:
            return 0
        visiting.add(node)
        known = [d for d in deps.get(node, []) if d in deps and d != node]
        found[node] = 1 + max(map(depth, known)) if known else 0
        visiting.discard(node)
        return found[node]

    for node in deps:
        depth(node)
    return found


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plan_svg(plan: list[dict[str, Any]], states: dict[int, str] | None = None,
             models: dict[int, str] | None = None) -> str:
    """The plan as an SVG document: a box per subtask (``#id task``, the model under it
    when known), arrows from each dependency, coloured by ``states`` (id -> state;
    ``waiting`` when absent). An empty plan is a one-line picture saying so."""
    states, models = states or {}, models or {}
    if not plan:
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="320" height="40" '
                'role="img" aria-label="no plan"><text x="8" y="24" font-family="sans-serif" '
                'font-size="14" fill="#6b7280">no subtasks planned</text></svg>')
    column = depths(plan)
    columns: dict[int, list[int]] = {}
    for step in plan:
        columns.setdefault(column[int(step["id"])], []).append(int(step["id"]))
    place: dict[int, tuple[int, int]] = {}
    for col, ids in columns.items():
        for row, node in enumerate(ids):
            place[node] = (_PAD + col * (_BOX_W + _GAP_X), _PAD + row * (_BOX_H + _GAP_Y))
    width = _PAD * 2 + (max(columns) + 1) * _BOX_W + max(columns) * _GAP_X
    height = _PAD * 2 + max(map(len, columns.values())) * (_BOX_H + _GAP_Y) - _GAP_Y
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="plan: {len(plan)} subtasks" '
        'class="hugginggpt-plan">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'fill="#6b7280"/></marker></defs>',
    ]
    for step in plan:
        x2, y2 = place[int(step["id"])]
        for dep in step.get("dep") or []:
            if int(dep) not in place or int(dep) == int(step["id"]):
                continue
            x1, y1 = place[int(dep)]
            sx, sy, ex, ey = x1 + _BOX_W, y1 + _BOX_H / 2, x2, y2 + _BOX_H / 2
            mid = (sx + ex) / 2
            parts.append(f'<path d="M {sx} {sy} C {mid} {sy}, {mid} {ey}, {ex} {ey}" '
                         'fill="none" stroke="#6b7280" stroke-width="1.5" '
                         'marker-end="url(#arrow)"/>')
    for step in plan:
        node = int(step["id"])
        x, y = place[node]
        state = states.get(node, "waiting")
        fill, stroke = COLOURS.get(state, COLOURS["waiting"])
        label = f"#{node} {step.get('task', '')}"
        title = escape(f"{label}: {state}")
        parts.append(
            f'<g class="subtask" data-id="{node}" data-state="{escape(state)}"><title>{title}'
            f'</title><rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="8" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="2"/>'
            f'<text x="{x + 10}" y="{y + 22}" font-family="sans-serif" font-size="13" '
            f'font-weight="600" fill="#111827">{escape(_clip(label, 26))}'
            f'</text><text x="{x + 10}" y="{y + 42}" font-family="sans-serif" font-size="11" '
            f'fill="#374151">{escape(_clip(models.get(node) or state, 30))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
