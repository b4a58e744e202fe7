"""The ``messages`` channel in-process: a human message's text and content blocks become
the request and the files, the answer an AI message with the outputs as blocks; the
served settings; and the server's authentication, called as the server calls it."""

from __future__ import annotations

import asyncio
import base64
import io
import wave
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from PIL import Image

from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.callers import ServedContext
from hugginggpt.graph.context import Context, SettingsError
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.blocks import message_inputs, message_text, output_blocks
from hugginggpt.tools.errors import ArgumentError


def _png(color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 32), color).save(out, "PNG")
    return out.getvalue()


def _wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\x00\x00" * 1600)
    return out.getvalue()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


MB = 2**20


def test_every_accepted_block_form_is_stored_or_passed_on(tmp_path: Path):
    store = ArtifactStore(tmp_path, "t-1")
    png, wav = _png(), _wav()
    content = [
        {"type": "text", "text": "Caption these"},
        {"type": "image", "base64": _b64(png), "mime_type": "image/png",
         "extras": {"filename": "../../holiday photo.png"}},
        {"type": "image", "source_type": "base64", "data": _b64(_png("blue")),
         "mime_type": "image/png"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_b64(png)}"}},
        {"type": "input_audio", "input_audio": {"data": _b64(wav), "format": "wav"}},
        {"type": "image", "url": "https://example.org/cat.jpg"},
        {"type": "text", "text": "and transcribe this"},
    ]
    files, kept = message_inputs(content, store, 10 * MB)
    assert message_text(content) == "Caption these\nand transcribe this"
    named, blue, same, audio, url = files
    assert Path(named).name == "holiday_photo.png"  # its own name, made safe
    assert Path(named).read_bytes() == png
    assert Path(same).read_bytes() == png and Path(same).suffix == ".png"
    assert Path(blue).read_bytes() != png
    assert Path(audio).read_bytes() == wav and audio.endswith(".wav")
    assert url == "https://example.org/cat.jpg"
    for path in (named, blue, same, audio):
        assert Path(path).is_relative_to(store.folder / "uploads")
    # the content kept in the conversation links the stored files instead of their bytes
    assert kept[0] == content[0] and kept[5:] == content[5:]
    assert kept[1] == {"type": "image", "url": Path(named).as_uri(), "mime_type": "image/png",
                       "extras": {"filename": "holiday_photo.png"}}
    assert [b["url"] for b in kept[2:5]] == [Path(p).as_uri() for p in (blue, same, audio)]
    assert kept[4]["type"] == "audio" and kept[4]["mime_type"] == "audio/wav"
    served = ArtifactStore(tmp_path, "t-1", url="https://host/artifacts")
    assert served.link(named) == \
        f"https://host/artifacts/t-1/uploads/{Path(named).parent.name}/holiday_photo.png"


@pytest.mark.parametrize(("block", "message"), [
    ({"type": "image", "url": "file:///etc/passwd"}, "send the file itself (base64) or an http"),
    ({"type": "image", "base64": "not base64!", "mime_type": "image/png"}, "not valid base64"),
    ({"type": "image", "base64": _b64(b"just text, not a picture"), "mime_type": "image/png"},
     "is not an image that can be read"),
    ({"type": "audio", "base64": _b64(b"RIFF....not a wav"), "mime_type": "audio/wav"},
     "is not a recording that can be read"),
    ({"type": "image", "base64": _b64(b"\x89PNG" + b"0" * 3 * MB), "mime_type": "image/png"},
     "larger than the 1 MB"),
    ({"type": "image"}, "carries no file"),
])
def test_a_block_that_cannot_be_used_is_refused_saying_why(tmp_path: Path,
                                                           block: dict[str, Any], message: str):
    with pytest.raises(ArgumentError, match="block 2") as refused:
        message_inputs([{"type": "text", "text": "look"}, block], ArtifactStore(tmp_path), MB)
    assert message in str(refused.value)


def test_output_blocks_link_media_once_by_served_url_or_file():
    served = {"artifact_id": "a" * 16, "kind": "image", "path": "artifacts/t/x.png",
              "url": "/artifacts/t/aaaaaaaaaaaaaaaa.png"}
    local = {"artifact_id": "b" * 16, "kind": "audio", "path": "artifacts/t/b.wav"}
    vector = {"artifact_id": "c" * 16, "kind": "embedding", "path": "artifacts/t/c.json"}
    blocks = output_blocks([served, "text", local, served, vector], "/ws")
    assert blocks == [
        {"type": "image", "url": served["url"], "mime_type": "image/png", "id": "a" * 16},
        {"type": "audio", "url": "file:///ws/artifacts/t/b.wav", "mime_type": "audio/x-wav",
         "id": "b" * 16}]


@pytest.fixture
def chat(tmp_path: Path):
    app = build_graph(checkpointer=InMemorySaver())
    context = Context(backend="dry-run", workspace=str(tmp_path / "ws"),
                      dry_run_latency_scale=0.01)
    config = {"configurable": {"thread_id": "chat-1"}}

    def send(graph_input: dict[str, Any]) -> dict[str, Any]:
        return app.invoke(graph_input, config, context=context)

    return send


def test_a_chat_turn_runs_the_message_and_answers_with_the_outputs(chat, tmp_path: Path):
    png = _png()
    out = chat({"messages": [HumanMessage(content=[
        {"type": "text", "text": "Caption this photo, then draw a picture of the caption"},
        {"type": "image", "base64": _b64(png), "mime_type": "image/png"}])]})
    assert out["status"] == "completed"
    upload = Path(out["plan"][0].args["image"])
    assert upload.read_bytes() == png
    asked = out["messages"][0]  # kept with a link to the upload, not its bytes
    assert asked.content[1]["url"] == upload.as_uri() and "base64" not in asked.content[1]
    assert _b64(png) not in str(out["messages"])
    reply = out["messages"][-1]
    assert isinstance(reply, AIMessage)
    assert reply.content[0] == {"type": "text", "text": out["response"]}
    [image] = reply.content[1:]
    path = tmp_path / "ws" / out["results"][1].outputs["image"]["path"]
    assert image["type"] == "image" and image["url"] == path.resolve().as_uri()

    # a request given as such still joins the conversation; a message follows it
    out = chat({"request": "Summarize 'The boat came back at dusk with its nets full.'"})
    assert [m.type for m in out["messages"]] == ["human", "ai", "human", "ai"]
    assert out["messages"][2].content.startswith("Summarize")
    out = chat({"messages": [HumanMessage(content="Now draw a boat at dusk")]})
    assert out["plan"][0].task == "text-to-image" and len(out["messages"]) == 6


def test_an_unusable_message_aborts_with_the_reason_and_the_next_one_runs(chat):
    out = chat({"messages": [HumanMessage(content=[
        {"type": "text", "text": "Caption this"},
        {"type": "image", "base64": "%%%", "mime_type": "image/png"}])]})
    assert out["status"] == "aborted"
    assert out["abort_reason"] == "the message cannot be used: block 2 (image): its data is " \
                                  "not valid base64"
    assert out["messages"][-1].content == f"The run was aborted: {out['abort_reason']}"
    out = chat({"messages": [HumanMessage(content="")]})
    assert out["status"] == "aborted" and out["abort_reason"].startswith("the request is empty")
    out = chat({"messages": [HumanMessage(content="Draw a lighthouse")]})
    assert out["status"] == "completed"
    assert [m.type for m in out["messages"]] == ["human", "ai"] * 3


def test_a_first_message_list_becomes_the_history(tmp_path: Path):
    app = build_graph(checkpointer=InMemorySaver())
    context = Context(backend="dry-run", workspace=str(tmp_path), dry_run_latency_scale=0.01)
    out = app.invoke({"messages": [HumanMessage("Draw a red boat"), AIMessage("Here it is."),
                                   HumanMessage("Now a blue one")]},
                     {"configurable": {"thread_id": "h"}}, context=context)
    state = app.get_state({"configurable": {"thread_id": "h"}}).values
    assert [(t.role, t.content) for t in state["history"][:2]] == [
        ("user", "Draw a red boat"), ("assistant", "Here it is.")]
    assert out["status"] == "completed" and len(out["messages"]) == 4


def test_served_settings_take_only_the_callers_own(monkeypatch: pytest.MonkeyPatch):
    assert ServedContext(approval="plan").artifact_url == "/artifacts"
    assert Context().artifact_url is None
    with pytest.raises(SettingsError) as refused:
        ServedContext(approval="plan", workspace="/elsewhere", dry_run_faults={"rates": {}})
    text = str(refused.value)
    assert "workspace = '/elsewhere' is not valid: not a caller's setting: the deployment " \
           "sets it (its environment: HUGGINGGPT_WORKSPACE)" in text
    assert "dry_run_faults" in text and "a caller may set approval, backend" in text
    monkeypatch.setenv("HUGGINGGPT_CALLER_SETTINGS", "workspace, catalog")
    assert ServedContext(workspace="/elsewhere").workspace == "/elsewhere"
    monkeypatch.setenv("HUGGINGGPT_CALLER_SETTINGS", "workspaces")
    with pytest.raises(SettingsError, match="HUGGINGGPT_CALLER_SETTINGS = 'workspaces'"):
        ServedContext()


def _authenticate(headers: dict[bytes, bytes], client: str) -> Any:
    from hugginggpt.server.auth import authenticate

    return asyncio.run(authenticate(headers, {"client": (client, 50000)}))


def test_the_server_lets_in_keys_or_loopback_callers_of_an_open_server(
        monkeypatch: pytest.MonkeyPatch):
    from langgraph_sdk import Auth

    assert _authenticate({}, "127.0.0.1")["identity"] == "local"
    assert _authenticate({}, "::1")["identity"] == "local"
    for headers, client in (({}, "10.1.2.3"), ({b"x-forwarded-for": b"10.1.2.3"}, "127.0.0.1")):
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            _authenticate(headers, client)
        assert refused.value.status_code == 403
        assert "set HUGGINGGPT_API_KEYS=NAME=KEY" in refused.value.detail

    monkeypatch.setenv("HUGGINGGPT_API_KEYS", "ana=ana-key-0123456789abcdef, bo=bo-key-0123456789abcdef")
    assert _authenticate({b"x-api-key": b"bo-key-0123456789abcdef"}, "10.1.2.3")["identity"] == "bo"
    assert _authenticate({b"authorization": b"Bearer ana-key-0123456789abcdef"},
                         "10.1.2.3")["identity"] == "ana"
    for headers in ({}, {b"x-api-key": b"ana-key-0123456789abcdeX"},
                    {b"authorization": b"Basic ana-key-0123456789abcdef"}):
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            _authenticate(headers, "127.0.0.1")  # keys set: loopback is no key
        assert refused.value.status_code == 401

    monkeypatch.setenv("HUGGINGGPT_API_KEYS", "ana=short")
    with pytest.raises(Auth.exceptions.HTTPException) as broken:
        _authenticate({b"x-api-key": b"short"}, "127.0.0.1")
    assert broken.value.status_code == 500 and "at least 16 characters" in broken.value.detail
