"""``hugginggpt mcp``: the experts as the tools of an MCP server on stdin and stdout.

An MCP client (Claude Desktop, an IDE, ``langchain-mcp-adapters``) starts the command
and lists the tools: the same ones :func:`hugginggpt.tools.experts.langchain_tools`
gives, with the same names, descriptions and JSON schemas. A call returns the tool's
JSON text and the same data as structured content; a failure the tool reports is a
result with ``isError`` and its message, as the protocol asks. Logs go to stderr
(stdout carries the protocol). Needs the ``mcp`` package (``pip install
'hugginggpt[mcp]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from hugginggpt.cli.common import EXIT_OK, UsageError
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts import langchain_tools

__all__ = ["add_parser", "serve"]


def add_parser(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="serve the experts as MCP tools on stdin/stdout")
    mcp.add_argument("--backend", action="append", metavar="NAME",
                     help="offer this backend's experts (repeatable; default: every real one)")
    mcp.add_argument("--task", action="append", metavar="TASK",
                     help="offer experts for this task type only (repeatable)")
    mcp.add_argument("--workspace", help="where file arguments are read and outputs written")
    mcp.add_argument("--catalog", help="the model catalog (default: the shipped one)")
    mcp.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    context = Context()
    try:
        tools = langchain_tools(backend=args.backend, tasks=args.task,
                                workspace=Path(args.workspace or context.workspace),
                                catalog=args.catalog or context.catalog,
                                max_file_mb=context.max_file_mb)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not tools:
        raise UsageError("no expert matches --backend and --task: nothing to serve")
    asyncio.run(serve(tools))
    return EXIT_OK


async def serve(tools: list[BaseTool]) -> None:
    """Serve ``tools`` over stdio until the client closes the connection.

    Raises:
        UsageError: the ``mcp`` package is not installed.
    """
    try:
        import mcp_types as types
        from mcp.server import Server
        from mcp.server.stdio import stdio_server
    except ImportError:
        raise UsageError("hugginggpt mcp needs the mcp package: pip install "
                         "'hugginggpt[mcp]'") from None
    by_name = {t.name: t for t in tools}

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description,
                       input_schema=convert_to_openai_tool(t)["function"]["parameters"])
            for t in tools])

    async def call_tool(ctx: Any, params: Any) -> Any:
        tool = by_name.get(params.name)
        if tool is None:
            return types.CallToolResult(is_error=True, content=[types.TextContent(
                text=f"no tool named {params.name!r}; the tools: {', '.join(by_name)}")])
        reply = await tool.ainvoke({"type": "tool_call", "id": "mcp", "name": tool.name,
                                    "args": params.arguments or {}})
        assert isinstance(reply, ToolMessage)
        text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        return types.CallToolResult(
            content=[types.TextContent(text=text)], is_error=reply.status == "error",
            structured_content=reply.artifact if reply.status != "error" else None)

    server: Any = Server("hugginggpt", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
