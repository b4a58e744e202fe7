"""What runs where: per task type, the backends that can run it, the model ``auto``
chooses and whether it runs offline, generated from the code (the documentation's
``docs/reference/what-runs-where.md`` shows it).

Nothing is listed by hand: the four set-ups of ``benchmarks/coverage.py`` are measured,
and a fifth, offline with the catalog's models in the cache (each a fresh process,
through the mini-hub and a local LLM server, with selection's own ranking and
availability), and a backend is listed for a task type when it can run it in one of
them, with what it needs (nothing, weights cached, an LLM key, a Hugging Face token, a
download). The default model is the one ``auto`` ranks first in the most capable set-up
that runs the task type. A backend, task type or catalog model added in the code shows
up at the next run.

Usage: ``python scripts/what_runs_where.py`` prints the table; ``--write`` replaces it,
and the coverage table, in the documentation's page (between its ``<!-- name -->`` and
``<!-- /name -->`` markers); ``--check`` exits 1 when it differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.coverage import CACHED, SETUPS, Found, measure, report  # noqa: E402
from scripts.reference_pages import with_blocks  # noqa: E402

PAGES = (ROOT / "docs" / "reference" / "what-runs-where.md",)
"""The files that show the generated blocks."""
NEEDS = {"offline": "", "cached": "weights cached or downloaded", "llm": "LLM key",
         "llm+hf": "HF token", "downloads": "a download"}
"""What a backend needs, by the first set-up in which it runs a task type."""
MEASURED = (SETUPS[0], CACHED, *SETUPS[1:])
"""The coverage set-ups, and offline with the weights cached after the first."""


def table(results: list[Found]) -> str:
    """The markdown table, one row per task type."""
    first = results[0]
    cached = next((f for f in results if f.setup.cached), first)
    lines = ["| task type | backends that can run it (what they need) | default model "
             "| offline |", "| --- | --- | --- | --- |"]
    for task in first.names:
        needs: dict[str, str] = {}
        for found in results:
            for backend in found.backends.get(task, []):
                needs.setdefault(backend, NEEDS.get(found.setup.name, found.setup.label))
        backends = ", ".join(f"{b} ({n})" if n else b for b, n in needs.items()) or "none"
        model, backend = next((f.default[task] for f in reversed(results)
                               if task in f.default), ("", ""))
        default = f"`{model}` ({backend})" if model else "-"
        if task in first.backends:
            offline = f"yes ({', '.join(first.backends[task])})"
        elif task in cached.backends:
            offline = f"after a download ({', '.join(cached.backends[task])})"
        else:
            offline = "no"
        lines.append(f"| {task} | {backends} | {default} | {offline} |")
    return "\n".join(lines)


def blocks(results: list[Found]) -> dict[str, str]:
    """The generated blocks by marker name."""
    return {"what-runs-where": table(results), "coverage": report(results)}


def replace(text: str, generated: dict[str, str]) -> str:
    """``text`` with each marked block replaced by its generated content (as
    :func:`scripts.reference_pages.with_blocks` does, a newline after the content).

    Raises:
        ValueError: a block's markers are missing.
    """
    return with_blocks(text, {name: (lambda body=body: body + "\n")
                              for name, body in generated.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="update the pages")
    mode.add_argument("--check", action="store_true", help="exit 1 if a page differs")
    args = parser.parse_args(argv)
    generated = blocks(measure(MEASURED))
    if not (args.write or args.check):
        print(generated["what-runs-where"])
        return 0
    differ = []
    for page in PAGES:
        current = page.read_text(encoding="utf-8")
        try:
            wanted = replace(current, generated)
        except ValueError as exc:
            print(f"what_runs_where: {page.relative_to(ROOT)}: {exc}", file=sys.stderr)
            return 2
        if args.write:
            page.write_text(wanted, encoding="utf-8")
        elif wanted != current:
            differ.append(page)
    for page in differ:
        print(f"{page.relative_to(ROOT)} differs from the code: run python "
              "scripts/what_runs_where.py --write", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
