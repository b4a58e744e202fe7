"""The graph as an MCP tool and an A2A agent, described by langgraph.json: a real
``langgraph dev`` answers ``initialize`` and ``tools/list`` on ``/mcp`` (streamable HTTP,
JSON-RPC over POST) with the graph's description and its input schema, and its A2A agent
card and assistants list carry the same description."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.test_served import DevServer

ROOT = Path(__file__).resolve().parents[1]
HEADERS = {"Accept": "application/json, text/event-stream",
           "Content-Type": "application/json"}


def _graph_entry() -> dict[str, Any]:
    entry = json.loads((ROOT / "langgraph.json").read_text())["graphs"]["hugginggpt"]
    assert isinstance(entry, dict), "the graph entry must be an object with a description"
    return entry


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    dev = DevServer(tmp_path_factory.mktemp("mcp"))
    dev.start()
    yield dev
    dev.stop()


def _rpc(url: str, id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = httpx.post(f"{url}/mcp", headers=HEADERS, timeout=30,
                       json={"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == id_, body
    assert "error" not in body, body
    return body["result"]


def _named(description: str, section: str) -> set[str]:
    """The fields a part of the description names in backticks ("Input: ..." or
    "Output: ..."), up to the next part."""
    part = description.split(f"{section}:", 1)[1]
    part = re.split(r"\b(?:Input|Output):", part, maxsplit=1)[0]
    return set(re.findall(r"`([a-z_]+)`", part))


def test_mcp_tools_list_describes_the_graph(server: DevServer):
    description = _graph_entry()["description"]
    init = _rpc(server.url, 1, "initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hugginggpt-tests", "version": "0"}})
    assert init["protocolVersion"] == "2025-06-18"
    assert "tools" in init["capabilities"]
    # the client says it is ready (a notification: accepted, no body)
    note = httpx.post(f"{server.url}/mcp", headers=HEADERS, timeout=30,
                      json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status_code == 202, note.text

    tools = _rpc(server.url, 2, "tools/list", {})["tools"]
    [tool] = [t for t in tools if t["name"] == "hugginggpt"]
    assert tool["description"] == description
    schema = tool["inputSchema"]
    assert schema["type"] == "object"
    # a request, or chat messages (so neither is required on its own)
    assert schema["properties"]["request"]["type"] == "string"
    # the server offers the chat channel to MCP clients as one user message (text)
    assert schema["properties"]["messages"]["type"] == "string"
    assert not {"request", "messages"} & set(schema.get("required", []))
    assert schema["properties"]["files"]["type"] == "array"
    # every input the description names is one the tool takes
    named = _named(description, "Input")
    assert {"request", "messages", "files"} <= named, named
    assert named <= set(schema["properties"]), (named, sorted(schema["properties"]))


def test_description_names_only_real_outputs(server: DevServer):
    from langgraph_sdk import get_client

    async def schemas() -> dict[str, Any]:
        client = get_client(url=server.url)
        [assistant] = await client.assistants.search(graph_id="hugginggpt")
        return {"assistant": assistant,
                **await client.assistants.get_schemas(assistant["assistant_id"])}

    got = asyncio.run(schemas())
    description = _graph_entry()["description"]
    # the assistants list (what Studio and A2A read) carries the same description
    assert got["assistant"]["description"] == description
    named = _named(description, "Output")
    assert {"response", "messages", "status", "results"} <= named, named
    outputs = set(got["output_schema"]["properties"])
    assert named <= outputs, (named - outputs, sorted(outputs))


def test_a2a_agent_card_carries_the_description(server: DevServer):
    assistants = httpx.post(f"{server.url}/assistants/search", timeout=30,
                            json={"graph_id": "hugginggpt"}).json()
    [assistant] = assistants
    card = httpx.get(f"{server.url}/.well-known/agent-card.json", timeout=30,
                     params={"assistant_id": assistant["assistant_id"]})
    assert card.status_code == 200, card.text
    card = card.json()
    description = _graph_entry()["description"]
    assert card["name"] == "hugginggpt"
    assert card["description"] == description
    [skill] = card["skills"]
    assert skill["description"] == description
    assert {"request", "messages"} <= set(skill["metadata"]["inputSchema"]["properties"])
