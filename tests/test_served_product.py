"""The served graph as a product, on a real ``langgraph dev`` with API keys: a chat
message with an uploaded image answered by an AI message whose image block downloads
for its owner only, A2A ``message/send``, the OpenAI client (streamed and not, and
going on with a thread), owners kept apart, and a caller's deployment-only setting
refused."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, ImageDraw

from tests.test_served import DevServer, start_deployment

ALICE, BOB = "alice-key-0123456789abcdef", "bob-key-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    folder = tmp_path_factory.mktemp("served-product")
    dev = start_deployment(folder, {"HUGGINGGPT_API_KEYS": f"alice={ALICE},bob={BOB}"})
    yield dev
    dev.stop()


def _png() -> bytes:
    image = Image.new("RGB", (160, 60), "white")
    ImageDraw.Draw(image).text((10, 20), "a red boat", fill="black")
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _client(server: DevServer, key: str) -> Any:
    from langgraph_sdk import get_client

    return get_client(url=server.url, api_key=key)


def test_a_message_with_an_image_is_answered_with_an_image_only_its_owner_downloads(
        server: DevServer):
    png = _png()
    message = {"type": "human", "content": [
        {"type": "text", "text": "Caption this photo, then draw a picture of the caption"},
        {"type": "image", "base64": base64.b64encode(png).decode(), "mime_type": "image/png",
         "extras": {"filename": "boat.png"}}]}

    async def go() -> tuple[str, dict[str, Any], dict[str, Any]]:
        alice = _client(server, ALICE)
        thread = await alice.threads.create()
        out = await alice.runs.wait(thread["thread_id"], "hugginggpt",
                                    input={"messages": [message]},
                                    context={"backend": "dry-run"})
        again = await alice.runs.wait(
            thread["thread_id"], "hugginggpt", context={"backend": "dry-run"},
            input={"messages": [{"type": "human", "content": "Now summarize 'The boat was "
                                 "red and it sailed across the bay at dawn.'"}]})
        return thread["thread_id"], out, again

    thread_id, out, again = asyncio.run(go())
    assert out["status"] == "completed", out.get("response")
    assert [m["type"] for m in out["messages"]] == ["human", "ai"]
    # the upload is the caption's input, stored in the thread's artifact store
    caption = out["plan"][0]
    assert caption["task"] == "image-to-text"
    stored = Path(caption["args"]["image"])
    assert stored.name == "boat.png" and stored.read_bytes() == png
    assert stored.is_relative_to(server.folder / "ws" / "artifacts" / thread_id)
    [upload] = [b for b in out["messages"][0]["content"] if b["type"] == "image"]
    assert "base64" not in upload  # the checkpoints keep a link, not the bytes
    assert upload["url"] == f"/artifacts/{thread_id}/uploads/{stored.parent.name}/boat.png"
    sent = httpx.get(server.url + upload["url"], headers={"x-api-key": ALICE})
    assert sent.status_code == 200 and sent.content == png
    assert httpx.get(server.url + upload["url"], headers={"x-api-key": BOB}).status_code == 404

    reply = out["messages"][-1]
    text = next(b["text"] for b in reply["content"] if b["type"] == "text")
    assert text == out["response"]
    [image] = [b for b in reply["content"] if b["type"] == "image"]
    assert image["mime_type"] == "image/png"
    assert image["url"] == f"/artifacts/{thread_id}/{image['id']}.png"
    ref = out["results"]["1"]["outputs"]["image"]
    assert ref["url"] == image["url"]  # the result carries the URL beside the path

    got = httpx.get(server.url + image["url"], headers={"x-api-key": ALICE})
    assert got.status_code == 200 and got.headers["content-type"] == "image/png"
    assert got.content == (server.folder / "ws" / ref["path"]).read_bytes()
    assert hashlib.sha256(got.content).hexdigest().startswith(image["id"])
    bearer = httpx.get(server.url + image["url"], headers={"Authorization": f"Bearer {ALICE}"})
    assert bearer.status_code == 200 and bearer.content == got.content
    refused = httpx.get(server.url + image["url"], headers={"x-api-key": BOB})
    assert refused.status_code == 404 and b"\x89PNG" not in refused.content
    assert httpx.get(server.url + image["url"]).status_code == 401
    wrong = httpx.get(server.url + image["url"], headers={"x-api-key": "not-a-key-at-all"})
    assert wrong.status_code == 401 and "not valid" in wrong.json()["detail"]
    outside = httpx.get(f"{server.url}/artifacts/{thread_id}/..%2F..%2Fcheckpoints.sqlite",
                        headers={"x-api-key": ALICE})
    assert outside.status_code == 404

    # the second turn on the thread: a chat of four messages, the first turn as history
    assert again["status"] == "completed"
    assert [m["type"] for m in again["messages"]] == ["human", "ai", "human", "ai"]
    assert again["plan"][0]["task"] == "summarization"


def test_owners_are_kept_apart_and_assistants_are_the_deployments(server: DevServer):
    from langgraph_sdk.errors import NotFoundError, PermissionDeniedError

    async def go() -> None:
        alice, bob = _client(server, ALICE), _client(server, BOB)
        thread = await alice.threads.create()
        assert thread["metadata"]["owner"] == "alice"
        with pytest.raises(NotFoundError):
            await bob.threads.get(thread["thread_id"])
        with pytest.raises(httpx.HTTPStatusError) as run:  # runs.wait raises httpx's own
            await bob.runs.wait(thread["thread_id"], "hugginggpt", input={"request": "hi"})
        assert run.value.response.status_code == 404
        mine = {t["thread_id"] for t in await bob.threads.search(limit=100)}
        assert thread["thread_id"] not in mine
        assert await bob.assistants.search(graph_id="hugginggpt")  # readable by all
        with pytest.raises(PermissionDeniedError) as refused:
            await bob.assistants.create("hugginggpt", context={"workspace": "/tmp"})
        assert "assistants are the deployment's" in refused.value.response.text

    asyncio.run(go())


def test_a_caller_that_sets_the_workspace_is_refused(server: DevServer, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"

    async def go() -> tuple[httpx.HTTPStatusError, dict[str, Any]]:
        alice = _client(server, ALICE)
        thread = await alice.threads.create()
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await alice.runs.wait(
                thread["thread_id"], "hugginggpt", input={"request": "Draw a boat"},
                context={"backend": "dry-run", "workspace": str(elsewhere),
                         "allow_private_urls": True})
        return refused.value, await alice.threads.get_state(thread["thread_id"])

    refused, state = asyncio.run(go())
    assert refused.response.status_code == 403
    detail = refused.response.json()["detail"]
    assert "workspace: not a caller's setting: the deployment sets it (its environment: " \
           "HUGGINGGPT_WORKSPACE)" in detail
    assert "allow_private_urls: not a caller's setting" in detail
    assert not state["values"]  # nothing ran
    assert not elsewhere.exists()


def test_a_served_run_reads_no_file_of_the_server_nor_another_threads(server: DevServer):
    secret = server.folder / "secret.png"
    secret.write_bytes(_png())

    async def go() -> list[dict[str, Any]]:
        alice = _client(server, ALICE)
        outs = []
        for name in (str(secret), "../secret.png"):
            thread = await alice.threads.create()
            outs.append(await alice.runs.wait(
                thread["thread_id"], "hugginggpt", context={"backend": "dry-run"},
                input={"request": "Caption this photo", "files": [name]}))
        return outs

    for out in asyncio.run(go()):
        assert out["status"] == "aborted"
        assert "refused: a served run reads only files sent with it" in out["abort_reason"]
        assert not out.get("results")


def test_a2a_message_send_answers(server: DevServer):
    async def assistant_id() -> str:
        found = await _client(server, ALICE).assistants.search(graph_id="hugginggpt")
        return found[0]["assistant_id"]

    request = {"jsonrpc": "2.0", "id": "1", "method": "message/send", "params": {"message": {
        "role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text":
            "Summarize: 'The harbour was quiet. A red boat left at dawn and came back at "
            "dusk with a full load of fish.'"}]}}}
    reply = httpx.post(f"{server.url}/a2a/{asyncio.run(assistant_id())}", json=request,
                       headers={"x-api-key": ALICE, "Accept": "application/json"},
                       timeout=120).json()
    task = reply["result"]
    assert task["status"]["state"] == "completed", reply
    agent = [m for m in task["history"] if m["role"] == "agent"][-1]
    text = " ".join(p["text"] for p in agent["parts"] if p["kind"] == "text")
    assert text.startswith("Summary: ") and "harbour" in text
    without_key = httpx.post(f"{server.url}/a2a/x", json=request)
    assert without_key.status_code == 401


def test_the_openai_client_streams_an_answer_and_goes_on_with_the_thread(server: DevServer):
    from openai import AuthenticationError, NotFoundError, OpenAI

    client = OpenAI(base_url=f"{server.url}/v1", api_key=ALICE, max_retries=0)
    assert [m.id for m in client.models.list().data] == ["hugginggpt"]

    stream = client.chat.completions.create(model="hugginggpt", stream=True, messages=[
        {"role": "user", "content": "Read 'welcome aboard' aloud"}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(chunks) >= 4  # the role, the text in pieces, the end
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert text.startswith("Speech saved to ") and "[audio: " in text
    url = text.rsplit("(", 1)[-1].rstrip(")")
    assert url.startswith(f"{server.url}/artifacts/")
    wav = httpx.get(url, headers={"Authorization": f"Bearer {ALICE}"})
    assert wav.status_code == 200 and wav.content[:4] == b"RIFF" and wav.content[8:12] == b"WAVE"
    assert wav.headers["content-type"] in ("audio/wav", "audio/x-wav")
    thread_id = url.split("/artifacts/", 1)[1].split("/")[0]

    # not streamed, going on with the same thread (the whole chat sent, as clients do)
    raw = client.chat.completions.with_raw_response.create(
        model="hugginggpt", extra_headers={"X-Thread-Id": thread_id}, messages=[
            {"role": "user", "content": "Read 'welcome aboard' aloud"},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "Translate 'welcome aboard' into French"}])
    assert raw.headers["x-thread-id"] == thread_id
    answer = raw.parse()
    assert answer.choices[0].message.role == "assistant"
    assert "translation" in answer.choices[0].message.content.lower()

    async def history() -> list[str]:
        state = await _client(server, ALICE).threads.get_state(thread_id)
        return [m["type"] for m in state["values"]["messages"]]

    assert asyncio.run(history()) == ["human", "ai", "human", "ai"]

    with pytest.raises(NotFoundError):  # another owner's thread
        OpenAI(base_url=f"{server.url}/v1", api_key=BOB, max_retries=0).chat.completions.create(
            model="hugginggpt", extra_headers={"X-Thread-Id": thread_id},
            messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(NotFoundError) as unknown:
        client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "x"}])
    assert "GET /v1/models lists them" in str(unknown.value)
    with pytest.raises(AuthenticationError):
        OpenAI(base_url=f"{server.url}/v1", api_key="wrong-key-0123456789",
               max_retries=0).models.list()
    # on the wire: the stages as SSE comments (clients skip them) before the answer
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", timeout=120,
                      headers={"Authorization": f"Bearer {ALICE}"},
                      json={"model": "hugginggpt", "stream": True, "messages": [
                          {"role": "user", "content": "Draw a lighthouse"}]}) as wire:
        assert wire.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in wire.iter_lines() if line]
    assert ": plan start" in lines and ": respond start" in lines
    answer = next((i for i, line in enumerate(lines) if '"delta": {"content": "' in line
                   and '"content": ""' not in line), None)
    assert answer is not None and lines.index(": respond start") < answer, lines
    assert lines[-1] == "data: [DONE]"
    bad = httpx.post(f"{server.url}/v1/chat/completions", headers={"x-api-key": ALICE},
                     content=json.dumps({"model": "hugginggpt", "messages": []}))
    assert bad.status_code == 400 and "messages" in bad.json()["error"]["message"]
