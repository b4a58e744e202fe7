"""The experts as LangChain tools (issue 13, item 9): a LangGraph ``ToolNode`` runs two
real lite engines (VADER sentiment and TextRank summaries) on one AI message with two
tool calls; schemas, file arguments inside the workspace, errors as messages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from PIL import Image

import hugginggpt
from hugginggpt.tools.experts import langchain_tools

STORY = (
    "The river rose for three days after the storm. Farmers moved their animals to the "
    "hills, and the village school opened its doors to families whose houses had flooded. "
    "By the fourth day the water began to fall, and volunteers from the next valley arrived "
    "with food, blankets and pumps. The mayor thanked everyone who helped and promised a new "
    "wall along the river before the next spring. Most families were back home within two "
    "weeks, and the school reopened for lessons on the following Monday."
)


def _by_name(tools: list) -> dict:
    return {t.name: t for t in tools}


def _graph(tools: list):
    """A one-node LangGraph graph: the ToolNode, as a user would wire it."""
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    return builder.compile()


def _replies(out: dict) -> dict:
    return {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}


def test_a_tool_node_runs_two_experts_on_two_tool_calls(tmp_path: Path):
    tools = _by_name(langchain_tools(backend="lite",
                                     tasks=["sentiment-analysis", "summarization"],
                                     workspace=tmp_path))
    sentiment = tools["lite_text-classification_vader-sentiment"]
    summary = tools["lite_summarization_summa-textrank"]
    assert {t.metadata["backend"] for t in tools.values()} == {"lite"}
    assert {t.metadata["task"] for t in tools.values()} == {"text-classification",
                                                            "summarization"}

    graph = _graph([sentiment, summary])
    message = AIMessage(content="", tool_calls=[
        {"name": sentiment.name, "args": {"text": "I love this wonderful, sunny day!"},
         "id": "call-sentiment", "type": "tool_call"},
        {"name": summary.name, "args": {"text": STORY}, "id": "call-summary",
         "type": "tool_call"},
    ])
    replies = _replies(graph.invoke({"messages": [message]}))
    assert set(replies) == {"call-sentiment", "call-summary"}
    assert all(isinstance(m, ToolMessage) and m.status == "success" for m in replies.values())
    felt = json.loads(replies["call-sentiment"].content)
    assert felt["model"] == "lite/vader-sentiment" and felt["backend"] == "lite"
    top = felt["outputs"]["labels"][0]
    assert top["label"].upper().startswith("POS") and top["score"] > 0.5
    assert felt["confidence"]["uncertain"] is None  # how sure VADER was travels along
    assert replies["call-sentiment"].artifact == felt  # the same data, unserialised
    summarised = json.loads(replies["call-summary"].content)["outputs"]["text"]
    assert summarised and len(summarised) < len(STORY)
    assert all(sentence.strip() in STORY for sentence in summarised.split(". ") if sentence)


def test_each_tool_has_a_json_schema_a_model_provider_accepts(tmp_path: Path):
    tools = langchain_tools(workspace=tmp_path)
    assert {t.metadata["backend"] for t in tools} >= {"lite", "hf-inference", "local"}
    assert "dry-run" not in {t.metadata["backend"] for t in tools}
    assert len({t.name for t in tools}) == len(tools)
    for t in tools:
        spec = convert_to_openai_tool(t)["function"]
        assert spec["name"] == t.name and len(t.name) <= 64
        assert spec["description"]
        assert spec["parameters"]["type"] == "object"
    hf = _by_name(tools)["hf-inference_image-to-text"]
    schema = hf.args_schema
    assert isinstance(schema, dict)
    assert schema["required"] == ["image"]
    assert "inside the workspace" in schema["properties"]["image"]["description"]
    assert schema["properties"]["model"]["enum"]  # a choice among the catalog's models
    assert hugginggpt.langchain_tools is langchain_tools  # the front door's name


def test_file_arguments_are_paths_inside_the_workspace(tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    Image.new("RGB", (8, 8), "white").save(workspace / "blank.png")
    outside = tmp_path / "secret.png"
    Image.new("RGB", (8, 8), "white").save(outside)
    [ocr] = langchain_tools(backend="lite", tasks=["image-to-text"], workspace=workspace)
    graph = _graph([ocr])
    message = AIMessage(content="", tool_calls=[
        {"name": ocr.name, "args": {"image": str(outside)}, "id": "outside", "type": "tool_call"},
        {"name": ocr.name, "args": {"image": "missing.png"}, "id": "missing", "type": "tool_call"},
    ])
    replies = _replies(asyncio.run(graph.ainvoke({"messages": [message]})))
    assert {m.status for m in replies.values()} == {"error"}
    assert "outside the workspace" in replies["outside"].content  # refused, never read
    assert "Traceback" not in replies["outside"].content
    assert "missing.png" in replies["missing"].content


def test_bad_arguments_are_refused_with_a_message(tmp_path: Path):
    [sentiment] = [t for t in langchain_tools(backend="lite", tasks=["text-classification"],
                                              workspace=tmp_path)
                   if t.name.endswith("vader-sentiment")]
    graph = _graph([sentiment])
    message = AIMessage(content="", tool_calls=[
        {"name": sentiment.name, "args": {}, "id": "empty", "type": "tool_call"},
        {"name": sentiment.name, "args": {"text": "ok", "colour": "red"}, "id": "extra",
         "type": "tool_call"},
    ])
    replies = _replies(graph.invoke({"messages": [message]}))
    assert "needs the argument text" in replies["empty"].content
    assert "takes no argument colour" in replies["extra"].content
    assert {m.status for m in replies.values()} == {"error"}
    with pytest.raises(ValueError, match="no task type named 'teleportation'"):
        langchain_tools(tasks=["teleportation"])


def test_an_hf_inference_expert_returns_its_image_as_an_artifact_path(tmp_path, monkeypatch):
    """Through the stub endpoint (real HTTP), on the async path of the tool."""
    import io

    from hugginggpt.tools.experts import hf_inference
    from tests.hf_stub import HFStubServer, Reply

    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    buffer = io.BytesIO()
    Image.new("RGB", (6, 4), (10, 200, 30)).save(buffer, format="PNG")
    stub = HFStubServer().start()
    try:
        stub.script("painter", Reply(body=buffer.getvalue(), content_type="image/png"))
        hf_inference.configure({"acme/painter": stub.url_for("painter")})
        [paint] = langchain_tools(backend="hf-inference", tasks=["text-to-image"],
                                  workspace=tmp_path)
        message = AIMessage(content="", tool_calls=[
            {"name": paint.name, "args": {"text": "a green field", "model": "acme/painter"},
             "id": "paint", "type": "tool_call"}])
        refused = paint.invoke(message.tool_calls[0]["args"])  # not in the shipped catalog
        assert "no model 'acme/painter'" in refused and stub.requests() == []
        catalog = tmp_path / "catalog.json"
        catalog.write_text(json.dumps({"version": 1, "models": [
            {"id": "acme/painter", "task": "text-to-image"}]}))
        [paint] = langchain_tools(backend="hf-inference", tasks=["text-to-image"],
                                  workspace=tmp_path, catalog=catalog)
        replies = _replies(asyncio.run(_graph([paint]).ainvoke({"messages": [message]})))
    finally:
        hf_inference.configure()
        stub.stop()

    reply = replies["paint"]
    assert reply.status == "success", reply.content
    image = reply.artifact["outputs"]["image"]
    assert image["kind"] == "image" and image["path"].startswith("artifacts/langchain/")
    assert Path(image["file"]) == (tmp_path / image["path"]).resolve()
    with Image.open(image["file"]) as saved:
        assert saved.size == (6, 4)
    [request] = stub.requests("painter")
    assert request.json["inputs"] == "a green field"
