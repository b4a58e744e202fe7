"""The house: one import name, every module importable on its own, public LangGraph
APIs only, log redaction that leaves the logging module alone, and a wheel that holds
every module."""

from __future__ import annotations

import ast
import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())
MAPPING: dict[str, str] = CONFIG["tool"]["setuptools"]["package-dir"]


def _modules() -> dict[str, Path]:
    """Every module of the package as it installs: dotted name -> source file."""
    found: dict[str, Path] = {}
    for package, folder in MAPPING.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            found.setdefault(name, path)  # hugginggpt.graph is graph/, not hugginggpt/graph
    return found


MODULES = _modules()


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.mark.timeout(600)
def test_every_module_imports_on_its_own(tmp_path):
    """Each module imported alone, from a folder outside the checkout: a cycle or an
    import that only works after another one shows up here.

    One interpreter imports the third-party libraries that every module needs (no module
    of ours), then forks a child per module, two at a time: each child imports exactly one
    of our modules first, as a fresh interpreter would, without paying ~80 times for
    langgraph and pydantic (which made this test take minutes on a busy machine)."""
    runnable = sorted(m for m in MODULES if not m.endswith("__main__"))
    assert len(runnable) > 70
    script = textwrap.dedent("""
        import importlib, os, sys, traceback
        for library in ("pydantic", "httpx", "numpy", "rich.console", "huggingface_hub",
                        "langchain_core.runnables", "langchain_openai", "langgraph.graph",
                        "langgraph.func"):
            importlib.import_module(library)
        assert not [m for m in sys.modules if m.startswith("hugginggpt")]
        failed, running = [], {}

        def reap():
            pid, status = os.wait()
            name, out = running.pop(pid)
            with os.fdopen(out) as pipe:
                said = pipe.read().strip()
            if status:
                failed.append(f"{name}: {said.splitlines()[-1] if said else status}")

        for name in sys.argv[1:]:
            if len(running) == 2:
                reap()
            out, into = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(out)
                try:
                    importlib.import_module(name)
                except BaseException:
                    os.write(into, traceback.format_exc().encode()[-4000:])
                    os._exit(1)
                os._exit(0)
            os.close(into)
            running[pid] = (name, out)
        while running:
            reap()
        print("\\n".join(failed))
        sys.exit(1 if failed else 0)
    """)
    proc = subprocess.run([sys.executable, "-c", script, *runnable], cwd=tmp_path,
                          env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def test_only_hugginggpt_imports_and_no_private_langgraph_api():
    sources = [*MODULES.values(), *(ROOT / "tests").glob("*.py"),
               *(ROOT / "benchmarks").glob("*.py"), *(ROOT / "scripts").glob("*.py")]
    bad = [f"{path.relative_to(ROOT)}:{line}: {name}" for path in sources
           for line, name in _imports(path)
           if name.split(".")[0] in ("graph", "nodes", "tools") or name.startswith(".")
           or name.startswith("langgraph._internal")]
    assert not bad, bad


def test_the_msgpack_allowlist_in_langgraph_json_is_the_state_types():
    from hugginggpt.graph.state import STATE_TYPES

    declared = json.loads((ROOT / "langgraph.json").read_text())
    allowed = declared["checkpointer"]["serde"]["allowed_msgpack_modules"]
    assert sorted(map(tuple, allowed)) == sorted((t.__module__, t.__name__) for t in STATE_TYPES)
    # an object since the graph carries its description (for /mcp and A2A)
    assert declared["graphs"]["hugginggpt"]["path"] == "hugginggpt.graph.served:graph"


def test_logging_works_after_importing_the_graph_and_secrets_are_filtered(monkeypatch, caplog):
    from hugginggpt import build_graph
    from hugginggpt.tools.llm.chat_models import built
    from hugginggpt.tools.llm.config import Endpoint
    from hugginggpt.tools.redact import LOG_FILTER

    build_graph()
    built(Endpoint(name="e", model="m", base_url="http://127.0.0.1:9/v1"), 5.0, 0)
    assert logging.makeLogRecord({"msg": "hi"}).getMessage() == "hi"  # structlog does this
    assert logging.getLogRecordFactory() is logging.LogRecord
    monkeypatch.setenv("MY_SERVICE_TOKEN", "s3cret-value-123")
    caplog.set_level(logging.DEBUG)
    for name in ("openai._base_client", "httpx", "hugginggpt"):
        assert LOG_FILTER in logging.getLogger(name).filters
        logging.getLogger(name).debug("sent %s and sk-abcdefghijklmnopqrstu", "s3cret-value-123")
    assert caplog.messages == ["sent [redacted] and [redacted]"] * 3


def test_a_users_graph_py_nodes_py_and_tools_package_do_not_collide(tmp_path):
    """A LangGraph tutorial's layout beside the installed package."""
    (tmp_path / "graph.py").write_text("def build_graph():\n    return 'the user graph'\n")
    (tmp_path / "nodes.py").write_text("VALUE = 'the user nodes'\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("VALUE = 'the user tools'\n")
    script = textwrap.dedent("""
        import graph, nodes, tools
        import hugginggpt
        from hugginggpt import build_graph
        compiled = build_graph()
        assert graph.build_graph() == "the user graph", graph.__file__
        assert nodes.VALUE == "the user nodes" and tools.VALUE == "the user tools"
        assert "plan" in compiled.nodes
        import hugginggpt.nodes.plan, hugginggpt.tools.experts.registry
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_clean_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"id": 0, "task": "summarization", "dep": [],
                                 "args": {"text": "a long story"}}]))
    cli = Path(sys.executable).with_name("hugginggpt")
    proc = subprocess.run([str(cli), "run", "Summarise it", "--dry-run", "--plan", str(plan),
                           "--latency-scale", "0", "--json"], cwd=tmp_path, env=_clean_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "completed" and doc["results"]["0"]["status"] == "done"
    assert (tmp_path / "hugginggpt-workspace" / "checkpoints.sqlite").is_file()


@pytest.mark.timeout(600)
def test_the_wheel_holds_every_module_and_data_file(tmp_path):
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info beside it
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache",
        "hugginggpt-workspace", ".langgraph_api"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps",
                           "--no-build-isolation", "-w", str(tmp_path), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Warning" not in proc.stdout + proc.stderr, [  # e.g. the old license table's
        line for line in (proc.stdout + proc.stderr).splitlines() if "Warning" in line]
    [wheel] = tmp_path.glob("hugginggpt-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
    assert "License-Expression: Apache-2.0" in zipfile.ZipFile(wheel).read(metadata).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    expected = {name.replace(".", "/") + ("/__init__.py" if path.name == "__init__.py" else ".py")
                for name, path in MODULES.items()}
    assert expected <= names, sorted(expected - names)
    for data in ("hugginggpt/tools/experts/catalog.json",
                 "hugginggpt/nodes/planning/plan_bank.jsonl"):
        assert data in names
    assert not [n for n in names if n.split("/")[0] in ("graph", "nodes", "tools")]


def test_the_docs_name_modules_and_files_that_exist():
    """The README, CONTRIBUTING.md and the documentation's pages point readers at code:
    every dotted ``hugginggpt.…`` name resolves, every source path in backticks exists."""
    import importlib
    import re

    missing = []
    docs = ["README.md", "CONTRIBUTING.md",
            *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").rglob("*.md")))]
    for doc in docs:
        text = (ROOT / doc).read_text()
        for name in set(re.findall(r"`(hugginggpt(?:\.[A-Za-z_]\w*)+)", text)):
            parts = name.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                    break
                except ImportError:
                    continue
            for attr in parts[i:]:
                if not hasattr(obj, attr):
                    missing.append(f"{doc}: {name}")
                    break
                obj = getattr(obj, attr)
        for path in set(re.findall(r"`((?:hugginggpt|graph|nodes|tools)/[\w/.]+)`", text)):
            if not (ROOT / path.split(":")[0]).exists():
                missing.append(f"{doc}: {path}")
    assert not missing, missing
