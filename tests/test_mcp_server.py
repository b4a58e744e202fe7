"""``hugginggpt mcp``: an MCP client over stdio lists the experts and calls one (a real
lite engine), and a bad call comes back as an error result, not a broken session."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


async def _session(workspace: Path) -> dict:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "hugginggpt", "mcp", "--backend", "lite", "--task", "sentiment-analysis",
        "--workspace", str(workspace)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        name = "lite_text-classification_vader-sentiment"
        good = await session.call_tool(name, {"text": "What a wonderful, happy day!"})
        bad = await session.call_tool(name, {})
        return {"tools": listed.tools, "good": good, "bad": bad}


def test_an_mcp_client_lists_the_experts_and_calls_one(tmp_path: Path):
    got = asyncio.run(asyncio.wait_for(_session(tmp_path), timeout=240))

    tools = {t.name: t for t in got["tools"]}
    assert set(tools) == {"lite_text-classification_vader-sentiment",
                          "lite_text-classification_vader-sentiment-fr",
                          "lite_text-classification_snownlp-sentiment-zh",
                          "lite_text-classification_lingua"}
    schema = tools["lite_text-classification_vader-sentiment"].input_schema
    assert schema["type"] == "object" and schema["required"] == ["text"]
    assert "VADER" in (tools["lite_text-classification_vader-sentiment"].description or "")

    good = got["good"]
    assert not good.is_error
    data = json.loads(good.content[0].text)
    assert data == good.structured_content
    assert data["model"] == "lite/vader-sentiment"
    assert data["outputs"]["labels"][0]["label"] == "POSITIVE"
    bad = got["bad"]
    assert bad.is_error and "needs the argument text" in bad.content[0].text
