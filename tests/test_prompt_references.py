"""Prompts carry references, not contents: files enter a prompt as their id, kind, path
and a short preview, long texts as their beginning, earlier answers clipped."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from hugginggpt.tools.artifacts import where_shown
from hugginggpt.tools.experts.registry import ToolContext, register_tool
from tests.conftest import run

TRANSCRIPT = " ".join(f"word{i}" for i in range(1500))  # a long transcript-like output
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{120,}")


def test_outputs_enter_the_responder_prompt_as_references(
        compiled, make_context, llm_server, test_tools, catalog_file):
    def transcribe(text: str) -> str:
        return TRANSCRIPT

    def paint(text: str, ctx: ToolContext) -> Path:
        _, path = ctx.artifacts.new_path(".png")
        Image.new("RGB", (64, 64), "red").save(path)
        return path

    test_tools.append(register_tool(transcribe, "summarization", backend="test",
                                    models=["test/long"]))
    test_tools.append(register_tool(paint, "text-to-image", backend="test",
                                    models=["test/painter"]))
    catalog = catalog_file(("summarization", "test/long", 1000),
                           ("text-to-image", "test/painter", 1000))
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "text-to-image", "dep": [], "args": {"text": "a red bicycle"}},
        {"id": 1, "task": "summarization", "dep": [], "args": {"text": "a long talk"}},
    ]}})
    long_answer = "Here is everything. " * 150
    llm_server.script("responder", {"content": long_answer})
    context = make_context(backend="test", catalog=catalog)
    out = run(compiled, context, "draw a bicycle and transcribe the talk", thread="refs")
    assert out["status"] == "completed"
    image = out["results"][0].outputs["image"]
    transcript = out["results"][1].outputs["text"]  # long text is kept as a file too

    prompt = llm_server.calls("responder")[0]["messages"][-1]["content"]
    # each file named where the caller finds it: the absolute path in the workspace
    image_at, transcript_at = (where_shown(ref, context.workspace) for ref in (image, transcript))
    assert Path(image_at).is_absolute() and image_at.endswith(image["path"])
    assert f"image file {image_at} (artifact {image['artifact_id']}, " in prompt
    assert not _BASE64_RUN.search(prompt), "no encoded bytes in the prompt"
    assert f"text file {transcript_at} (artifact {transcript['artifact_id']}" in prompt
    assert TRANSCRIPT not in prompt and TRANSCRIPT[:100] in prompt  # a preview
    assert len(prompt) < 2500

    # the next request on the thread sees the earlier answer only in part
    llm_server.script("planner", {"tool_args": {"subtasks": []}})
    run(compiled, context, "thanks, that is all", thread="refs")
    planner_prompt = llm_server.calls("planner")[1]["messages"][-1]["content"]
    assert long_answer not in planner_prompt and long_answer[:200] in planner_prompt
    assert len(planner_prompt) < 2000
