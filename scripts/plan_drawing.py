"""The plan drawing of a real run, for the documentation (The four stages).

``python scripts/plan_drawing.py run`` runs one request through the whole graph offline
(``offline``: no LLM is called, so the built-in planner plans; the ``lite`` backend's
engines do the work; no result cache), with the demo's own scanned notice as its file,
and stores the plan, each subtask's state and model, and the stamp (the command, the
commit, the date) in ``docs/concepts/img/plan.json``. The picture is the web UI's own
plan drawing (:func:`hugginggpt.ui.plan_picture.plan_svg`) of that record, written to
``docs/concepts/img/plan.svg``, with its caption in ``docs/concepts/stages.md``.

``python scripts/plan_drawing.py`` writes the picture and caption from the stored
record; ``--check`` (and ``mkdocs build``, through ``scripts/docs_hooks.py``) fails when
either differs from it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REQUEST = "Read the text in notice.png, tell me its sentiment, and read it aloud."
COMMAND = "python scripts/plan_drawing.py run"
PAGE = "concepts/stages.md"
BLOCK = "plan-drawing"


def _paths(docs: Path) -> tuple[Path, Path]:
    return docs / "concepts" / "img" / "plan.json", docs / "concepts" / "img" / "plan.svg"


def record() -> dict[str, Any]:
    """Run the request offline, and what its plan drawing needs, stamped."""
    import hugginggpt
    from hugginggpt.demo import make_samples
    from scripts.benchmark_pages import stamp

    with tempfile.TemporaryDirectory(prefix="hugginggpt-plan-drawing-") as tmp:
        files = make_samples(Path(tmp) / "inputs")
        result = hugginggpt.run(REQUEST, [files["notice.png"]], offline=True, backend="lite",
                                cache=False, workspace=str(Path(tmp) / "workspace"))
    return {**stamp(COMMAND), "request": REQUEST, "status": result.status,
            "plan": [step.model_dump(mode="json") for step in result.plan],
            "states": {str(i): r.status for i, r in result.results.items()},
            "models": {str(i): r.model or "" for i, r in result.results.items()}}


def picture(stored: dict[str, Any]) -> str:
    """The web UI's drawing of the stored plan, coloured by how each subtask ended."""
    from hugginggpt.ui.plan_picture import plan_svg

    return plan_svg(stored["plan"], {int(i): s for i, s in stored["states"].items()},
                    {int(i): m for i, m in stored["models"].items() if m})


def caption(stored: dict[str, Any]) -> str:
    """The picture in the page, and what it shows, stamped."""
    from scripts.benchmark_pages import commit_of

    return (f"![The plan of a real offline run, drawn as the web UI draws it]"
            f"(img/plan.svg)\n\n"
            f"The plan of a real run, as the web UI draws it: *\"{stored['request']}\"* with "
            f"a scanned notice (`notice.png`, the demo's), offline (no LLM: the built-in "
            f"planner), on the `lite` backend; each box is a subtask with the model that "
            f"ran it, green when done, and each arrow a `<GENERATED>-k` dependency. The run "
            f"ended `{stored['status']}`. Drawn by `{stored['command']}` on commit "
            f"{commit_of(stored)}, {stored['date']}.\n")


def stale(docs: Path = DOCS) -> list[str]:
    """The picture and the page's caption, where they differ from the stored record."""
    from scripts.reference_pages import with_blocks

    data, svg = _paths(docs)
    if not data.exists():
        return [str(data.relative_to(docs))]
    stored = json.loads(data.read_text(encoding="utf-8"))
    differ = []
    if not svg.exists() or svg.read_text(encoding="utf-8") != picture(stored):
        differ.append(str(svg.relative_to(docs)))
    text = (docs / PAGE).read_text(encoding="utf-8")
    if with_blocks(text, {BLOCK: lambda: caption(stored)}) != text:
        differ.append(PAGE)
    return differ


def write(docs: Path = DOCS) -> None:
    from scripts.reference_pages import with_blocks

    data, svg = _paths(docs)
    stored = json.loads(data.read_text(encoding="utf-8"))
    svg.write_text(picture(stored), encoding="utf-8")
    page = docs / PAGE
    page.write_text(with_blocks(page.read_text(encoding="utf-8"),
                                {BLOCK: lambda: caption(stored)}), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", nargs="?", choices=["run"],
                        help="run the request and store its plan first")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the picture or its caption differs from the record")
    args = parser.parse_args(argv)
    if args.check:
        differ = stale()
        for path in differ:
            print(f"docs/{path} differs from the stored plan: run python "
                  "scripts/plan_drawing.py", file=sys.stderr)
        return 1 if differ else 0
    if args.action == "run":
        data, _ = _paths(DOCS)
        data.parent.mkdir(parents=True, exist_ok=True)
        stored = record()
        data.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        if stored["status"] != "completed":
            print(f"the run ended {stored['status']}", file=sys.stderr)
    write()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
