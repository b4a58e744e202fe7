"""``hugginggpt demo``: the whole system, offline, on inputs it makes itself.

A few canned requests run through plan -> select -> execute -> respond with the built-in
offline planner and the lite backend (engines shipped inside PyPI packages), so a fresh
machine with no key and no network sees every stage work. Each request ends with a check
of its output (the OCR text read back, the sentiment, the words heard back from the
speech...), and the demo fails when a check does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from hugginggpt.graph.context import Context
from hugginggpt.progress import Progress

__all__ = ["DEMO_REQUESTS", "make_samples", "run_demo"]

NOTICE_LINES = (
    "The city museum reopens on Saturday.",
    "Entry is free for children under twelve.",
    "We loved the new exhibition, it was wonderful!",
)
ARTICLE = (
    "Solar power capacity grew faster than any other source of electricity last year. "
    "Prices for panels fell again, and many countries raised their targets. "
    "Grid operators warned that storage must grow as quickly as generation. "
    "Batteries are being installed next to solar farms in several regions. "
    "Analysts expect the trend to continue for the rest of the decade. "
    "Some critics point to the mining needed for batteries and panels. "
    "Recycling programmes are starting to address these concerns."
)


@dataclass(frozen=True)
class DemoRequest:
    title: str
    request: str
    files: tuple[str, ...]
    check: Callable[[dict[int, Any]], str]
    """Raises AssertionError with what is wrong, or returns what was verified."""


def _text(results: dict[int, Any], key: int) -> str:
    return str(results[key].outputs["text"])


def _check_ocr_sentiment(results: dict[int, Any]) -> str:
    text = str(results[0].outputs.get("text", ""))  # the plan reads the notice first
    squeezed = text.replace(" ", "").lower()
    for line in NOTICE_LINES:
        assert line.split()[1].lower() in squeezed, f"OCR missed {line!r}: got {text!r}"
    labels = next(r.outputs["labels"] for r in results.values()
                  if "labels" in r.outputs and r.status == "done")
    assert labels[0]["label"] == "POSITIVE", f"expected POSITIVE, got {labels[0]}"
    return f"OCR read back {len(text.splitlines())} lines; sentiment {labels[0]['label']}"


def _check_summary(results: dict[int, Any]) -> str:
    summary = _text(results, 0)
    sentences = [s.strip() for s in summary.split(". ") if s.strip()]
    assert 0 < len(summary) < len(ARTICLE), "the summary is not shorter than the article"
    assert all(s.rstrip(".") in ARTICLE for s in sentences), "the summary invents sentences"
    return f"{len(sentences)} sentence(s) kept out of 7"


def _check_similarity(results: dict[int, Any]) -> str:
    score = float(results[0].outputs["score"])
    assert score > 0.5, f"similar sentences scored only {score:.2f}"
    return f"cosine similarity {score:.2f}"


def _check_document_answer(results: dict[int, Any]) -> str:
    answer = _text(results, 0)
    assert "children" in answer.lower(), f"the answer misses the notice's line: {answer!r}"
    return f"answer read from the scan: {answer!r}"


def _check_topic(results: dict[int, Any]) -> str:
    labels = results[0].outputs["labels"]
    assert labels[0]["label"] == "sports", f"expected sports, got {labels[0]}"
    return f"topic {labels[0]['label']}"


SPOKEN = "The weather is nice today."


def _check_round_trip(results: dict[int, Any]) -> str:
    heard = _text(results, 1)
    said, got = SPOKEN.lower().rstrip(".").split(), heard.lower().split()
    hits = sum(word in got for word in said)
    assert hits >= len(said) - 1, f"PocketSphinx heard {heard!r} for {SPOKEN!r}"
    return (f"spoken to {results[0].outputs['audio']['path']}, heard back {heard!r} "
            f"({hits} of {len(said)} words)")


DEMO_REQUESTS: tuple[DemoRequest, ...] = (
    DemoRequest("OCR, then sentiment",
                "Read the text in notice.png, then tell me the sentiment of the text.",
                ("notice.png",), _check_ocr_sentiment),
    DemoRequest("Summarisation", f"Summarize this article: {ARTICLE}", (), _check_summary),
    DemoRequest("Sentence similarity",
                'How similar are "A man is playing a guitar on stage." and '
                '"Someone performs music with an instrument."?', (), _check_similarity),
    DemoRequest("Zero-shot topic",
                'Which topic fits the headline "The striker scored twice in the last ten '
                'minutes of the final": sports, politics or cooking?', (), _check_topic),
    DemoRequest("Question about a scanned document",
                "notice.png is a scanned notice. Who gets free entry?",
                ("notice.png",), _check_document_answer),
    DemoRequest("Read aloud, then transcribe (eSpeak NG, then PocketSphinx)",
                f'Read "{SPOKEN}" aloud, then transcribe the audio.', (), _check_round_trip),
)


def make_samples(folder: Path) -> dict[str, Path]:
    """The demo's input files: an image with rendered text."""
    from PIL import Image, ImageDraw, ImageFont

    folder.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (960, 70 + 60 * len(NOTICE_LINES)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=32)
    for row, line in enumerate(NOTICE_LINES):
        draw.text((24, 30 + 60 * row), line, fill="black", font=font)
    notice = folder / "notice.png"
    image.save(notice)
    return {"notice.png": notice}


def _show_stage(node: str, update: dict[str, Any], say: Callable[[str], None]) -> None:
    if node == "plan" and update.get("plan"):
        say("  plan: " + json.dumps([s.model_dump() for s in update["plan"]]))
    elif node == "select":
        for s in (update.get("selections") or {}).values():
            say(f"  select #{s.subtask_id} {s.task}: {s.model} on {s.backend}")


def run_demo(workspace: Path, out: Callable[[str], None] = print,
             verbose: bool = False) -> int:
    """Run every demo request; 0 when every check passes. ``verbose`` adds each step in
    full after its answer (model and why, candidates with their ranking scores)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from hugginggpt.graph.builder import build_graph
    from hugginggpt.graph.checkpoint import serializer
    from hugginggpt.nodes.responding.answer import details

    samples = make_samples(workspace / "demo-inputs")
    context = Context(backend="lite", planner="offline", offline=True,
                      workspace=str(workspace), caller="cli")
    app = build_graph(checkpointer=InMemorySaver(serde=serializer()))
    failures = 0
    for number, demo in enumerate(DEMO_REQUESTS, 1):
        out(f"\n=== {number}. {demo.title}\n>>> {demo.request}")
        progress = Progress()
        config: RunnableConfig = {"configurable": {"thread_id": f"demo-{number}"}}
        graph_input: Any = {"request": demo.request,
                            "files": [str(samples[f]) for f in demo.files]}
        for mode, chunk in app.stream(graph_input, config, context=context,
                                      stream_mode=["updates", "custom"]):
            progress.handle(mode, chunk)
            if mode == "updates" and isinstance(chunk, dict):
                for node, update in chunk.items():
                    _show_stage(node, update or {}, out)
        progress.close()
        values = app.get_state(config).values
        out(values.get("response", ""))
        if verbose:
            out("details:\n" + details(values.get("plan", []), values.get("selections", {}),
                                        values.get("results", {})))
        try:
            assert values.get("status") == "completed", values.get("abort_reason")
            verified = demo.check(values["results"])
        except (AssertionError, KeyError, StopIteration, IndexError) as exc:
            failures += 1
            out(f"CHECK FAILED: {exc!r}")
        else:
            out(f"check: {verified}")
    out(f"\n{len(DEMO_REQUESTS) - failures} of {len(DEMO_REQUESTS)} demo requests verified; "
        f"outputs under {workspace / 'artifacts'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(run_demo(Path("hugginggpt-workspace")))
