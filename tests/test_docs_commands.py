"""The shell blocks of the README and the documentation marked runnable run as they are
written, and print what the page shows.

A block is marked by an HTML comment on the line before its fence (invisible on GitHub and
on the site)::

    <!-- run -->                                  run it; it must exit with 0
    <!-- run: serves http://127.0.0.1:2024/ok --> start it, and go on once the URL answers 200
    <!-- run: llm=tests/data/docs_llm/X.json -->  run it with the tests' LLM server standing in
    <!-- output -->                               (before a ```text block right after a
                                                  runnable one) what that block prints

The runnable blocks of a page's section (``##``) run in order, in one fresh folder made
as a clone's root is after ``make setup``: its ``.venv`` (this interpreter's), and a copy
of ``langgraph.json``. Each runs with ``bash -e -c``, exactly as written, with no
environment beyond the harness's own for loopback only: the ``PATH`` without this
virtualenv, a fresh ``HOME``, ``HF_HUB_OFFLINE=1`` and an empty ``HF_HOME`` (nothing is
downloaded, no login is found). Where a block needs an LLM, the tests' OpenAI-compatible
server (``tests/llm_server.py``) stands in: ``OPENAI_BASE_URL`` points at it, and it
gives the replies of the block's file, each of which must be asked for. A server a block
starts is stopped, its process group with it, when the section ends.

An output is compared line for line with what the block prints on stdout: ``<name>``
stands for one part of a path or URL (a thread id, a file name), and a line ``...`` for
any lines.

The one change the harness may make: where a port the page serves on is taken on the
test machine, every ``:PORT`` and ``--port PORT`` of the section is given a free port
instead (port 2024 is taken in some sandboxes).

``DOCS_COMMANDS_CODE=/path/to/a/checkout`` runs the blocks against that checkout's code
instead of the installed package (laid out as it installs, first on ``PYTHONPATH``, with
its ``langgraph.json``), and ``DOCS_COMMANDS_PYTHONPATH`` adds the folders of packages
that code needs and this virtualenv no longer has: how the test was shown to fail on the
code before the artifact route was fixed (commit 0d1aab7), and to pass on that commit.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from scripts.installed_tree import lay_out
from tests.llm_server import ScriptedLLMServer

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(
    r"^<!-- run(?::\s*(?P<how>.*?))?\s*-->\n```(?:bash|sh|shell)\n(?P<body>.*?)\n```\n"
    r"(?:\n*<!-- output -->\n```text\n(?P<output>.*?)\n```\n)?", re.S | re.M)
_SECTION = re.compile(r"^## (.+)$", re.M)
_PLACEHOLDER = re.compile(r"<[a-z][a-z-]*>")
_KEPT = ("LANG", "LC_ALL", "TMPDIR")
"""Variables of the test's own environment a block keeps (locale, temporary folder)."""


@dataclass
class Block:
    page: str
    line: int
    body: str
    serves: str | None = None
    llm: str | None = None
    output: str | None = None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Section:
    page: str
    title: str
    blocks: list[Block] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.page}#{self.title}"


def sections(pages: list[Path] = PAGES) -> list[Section]:
    """The runnable blocks of each page, by section, in order."""
    found: list[Section] = []
    for path in pages:
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        titles = [(m.start(), m.group(1)) for m in _SECTION.finditer(text)]
        for match in _BLOCK.finditer(text):
            title = next((t for start, t in reversed(titles) if start < match.start()), "")
            how = (match.group("how") or "").split()
            block = Block(name, text.count("\n", 0, match.start()) + 2, match.group("body"),
                          output=match.group("output"))
            for word in how:
                if word.startswith("llm="):
                    block.llm = word.removeprefix("llm=")
                elif word.startswith("http"):
                    block.serves = word
                elif word != "serves":
                    raise ValueError(f"{block}: unknown run option {word!r}")
            if not found or (found[-1].page, found[-1].title) != (name, title):
                found.append(Section(name, title))
            found[-1].blocks.append(block)
    return found


def matches(shown: str, printed: str) -> bool:
    """Whether what a block printed is what the page shows (placeholders and ``...``
    lines standing for what varies)."""
    pattern = []
    for line in shown.splitlines():
        if line == "...":
            pattern.append(r"(?:.*\n)*?")
            continue
        parts = _PLACEHOLDER.split(line)
        pattern.append(r"[^/\s]+".join(re.escape(part) for part in parts) + r"\n")
    return re.fullmatch("".join(pattern), printed.rstrip("\n") + "\n") is not None


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def moved_ports(section: Section) -> Section:
    """The section with each port it serves on that is taken here given a free one."""
    for block in section.blocks:
        port = block.serves and httpx.URL(block.serves).port
        if not port or _port_free(port):
            continue
        new = _free_port()
        assert f"--port {port}" in block.body or f":{port}" in block.body, (
            f"{block}: port {port} is taken on this machine, and the block does not name it")
        for other in section.blocks:
            for name in ("body", "serves", "output"):
                value = getattr(other, name)
                if value:
                    value = value.replace(f":{port}", f":{new}")
                    setattr(other, name, value.replace(f"--port {port}", f"--port {new}"))
    return section


class Folder:
    """A fresh folder as a clone's root is after ``make setup``, and the environment the
    blocks run with."""

    def __init__(self, path: Path) -> None:
        self.path = path
        code = os.environ.get("DOCS_COMMANDS_CODE")
        source = Path(code) if code else ROOT
        venv = Path(sys.prefix)
        (path / ".venv").symlink_to(venv)
        (path / "langgraph.json").write_bytes((source / "langgraph.json").read_bytes())
        (path / "home").mkdir()
        bins = str(venv / "bin")
        self.env = {name: os.environ[name] for name in _KEPT if name in os.environ} | {
            "PATH": os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(
                os.pathsep) if p and p != bins),
            "HOME": str(path / "home"),
            "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(path / "hf-home"),
        }
        if code:
            tree = path.parent / "code-tree"
            lay_out(tree, source)
            self.env["PYTHONPATH"] = os.pathsep.join(
                [str(tree), *filter(None, [os.environ.get("DOCS_COMMANDS_PYTHONPATH")])])
        self.servers: list[tuple[Block, subprocess.Popen[bytes], Path]] = []

    def run(self, block: Block) -> str:
        """Run the block to its end; what it printed on stdout."""
        env = dict(self.env)
        llm = None
        if block.llm:
            llm = ScriptedLLMServer().start()
            replies = json.loads((ROOT / block.llm).read_text())
            for role, scripted in replies.items():
                llm.script(role, *scripted)
            env["OPENAI_BASE_URL"] = llm.url
        try:
            done = subprocess.run(["bash", "-e", "-c", block.body], cwd=self.path, env=env,
                                  capture_output=True, text=True, timeout=300)
        finally:
            if llm:
                llm.stop()
        assert done.returncode == 0, (
            f"{block} exited with {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
            f"\n--- stderr\n{done.stderr[-3000:]}\n{self.logs()}")
        if llm:
            left = {role: list(queue) for role, queue in llm.scripts.items() if queue}
            assert not left, f"{block}: the LLM was not asked for {left}"
        return done.stdout

    def start(self, block: Block) -> None:
        """Start the block (a server), and wait until its URL answers."""
        log = self.path.parent / f"server-{len(self.servers)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(["bash", "-e", "-c", block.body], cwd=self.path,
                                    env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.servers.append((block, proc, log))
        assert block.serves
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(block.serves, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, f"{block} ended ({proc.returncode})\n{self.logs()}"
            time.sleep(0.3)
        pytest.fail(f"{block}: {block.serves} did not answer in 180 s\n{self.logs()}")

    def logs(self) -> str:
        return "".join(f"--- {block} (its log)\n{log.read_text(errors='replace')[-4000:]}\n"
                       for block, _, log in self.servers)

    def stop(self) -> None:
        for _, proc, _ in self.servers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    (tmp_path / "clone").mkdir()
    made = Folder(tmp_path / "clone")
    yield made
    made.stop()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("section", sections(), ids=str)
def test_the_runnable_blocks_run_as_written(section: Section, folder: Folder):
    for block in moved_ports(section).blocks:
        if block.serves:
            folder.start(block)
            continue
        printed = folder.run(block)
        if block.output is not None:
            assert matches(block.output, printed), (
                f"{block} printed what the page does not show\n--- shown\n{block.output}"
                f"\n--- printed\n{printed}")
    for block, proc, _ in folder.servers:
        assert proc.poll() is None, f"{block} ended early ({proc.returncode})\n{folder.logs()}"


def test_the_readme_runs_its_server_commands_as_written():
    """The README's server section runs ``langgraph dev`` as it is documented, asks for
    an answer with an artifact and downloads it with ``curl``, and starts the web UI."""
    [served] = [s for s in sections([ROOT / "README.md"])
                if any(b.serves and "/ok" in b.serves for b in s.blocks)]
    bodies = [b.body for b in served.blocks]
    assert any(".venv/bin/langgraph dev" in b for b in bodies)
    assert any("/v1/chat/completions" in b and 'curl -fsS -o speech.wav "$url"' in b
               for b in bodies)
    assert any(b.startswith(".venv/bin/hugginggpt ui") for b in bodies)


def test_an_output_that_differs_fails():
    assert matches("a <thread> b\n...\nend", "a 123 b\nx\ny\nend\n")
    assert not matches("a <thread> b", "a 1/2 b")
    assert not matches("The text is in Dutch (71%).", "The text is in Afrikaans (71%).")
