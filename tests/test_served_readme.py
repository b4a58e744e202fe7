"""The server started exactly as the README starts it, and the audio link of an answer
downloaded from it: through the OpenAI endpoint, a chat message on a thread
(``langgraph_sdk``) and the web UI's server runner (``hugginggpt ui --server``), in a real Chromium too.

``langgraph dev`` runs blockbuster: a blocking call on its event loop (``os.getcwd`` to
resolve the default, relative workspace) fails the request with a 500. The other served
tests start the server with ``--no-reload``, ``--config`` and an absolute
``HUGGINGGPT_WORKSPACE``, so they cannot see it; this one takes the README's command line
as it is written, in a fresh folder holding only a copy of ``langgraph.json``, with no
``HUGGINGGPT_*`` setting.

The environment beyond the README's own two variables is the harness's, for loopback
only: ``HF_HUB_OFFLINE=1`` and an empty ``HF_HOME`` (no download, no saved login, and no
cached local model, so text-to-speech is the lite backend's eSpeak NG), and no LLM key
(``OPENAI_*``, ``HF_TOKEN``), so nothing leaves the machine.
"""

from __future__ import annotations

import array
import asyncio
import base64
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from tests.test_served import ROOT, _free_port

REQUEST = 'Read this sentence aloud: "The boat is on the lake."'
_README_LINE = re.compile(r"^((?:[A-Z_]+=\S+ )*)\.venv/bin/langgraph dev (.*)$", re.MULTILINE)
_CLEARED = ("HUGGINGGPT_", "OPENAI_", "HF_", "HUGGINGFACE", "LANGSMITH_", "LANGCHAIN_",
            "ANTHROPIC_")


def readme_command() -> tuple[dict[str, str], list[str]]:
    """The README's ``langgraph dev`` line: its variables and its arguments."""
    found = _README_LINE.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found, "README.md no longer shows how to start langgraph dev"
    variables = dict(item.split("=", 1) for item in found.group(1).split())
    return variables, shlex.split(found.group(2))


def harness_env(folder: Path) -> dict[str, str]:
    """This process's environment without any setting of the project, an LLM or the Hub,
    offline, with an empty Hugging Face cache in ``folder``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
    return env | {"HF_HUB_OFFLINE": "1", "HF_HOME": str(folder / "hf-home")}


class ReadmeServer:
    """``langgraph dev`` as the README starts it (reloading included), on a free port."""

    def __init__(self, folder: Path) -> None:
        variables, args = readme_command()
        assert "--port" in args and "--config" not in args and "--no-reload" not in args
        self.port = _free_port()
        args[args.index("--port") + 1] = str(self.port)
        self.url = f"http://127.0.0.1:{self.port}"
        self.folder = folder
        shutil.copy(ROOT / "langgraph.json", folder / "langgraph.json")
        env = harness_env(folder) | variables
        self.env = env
        exe = Path(sys.executable).parent / "langgraph"  # the README's .venv/bin/langgraph
        self.log = folder / "server.log"
        with self.log.open("w") as log:
            # its own session: the reloader's worker is stopped with it
            self.proc = subprocess.Popen([str(exe), "dev", *args], cwd=folder, env=env,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail("langgraph dev did not start:\n" + self.log.read_text())
            time.sleep(0.3)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReadmeServer]:
    dev = ReadmeServer(tmp_path_factory.mktemp("readme-server"))
    yield dev
    dev.stop()
    assert "BlockingError" not in dev.log.read_text()


def assert_speech(data: bytes) -> None:
    """A WAV file with sound in it (not silence, not an error page)."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", data[:200]
    with wave.open(io.BytesIO(data)) as wav:
        assert wav.getsampwidth() == 2 and wav.getnframes() > wav.getframerate() // 2
        samples = array.array("h", wav.readframes(wav.getnframes()))
    assert max(abs(s) for s in samples) > 1000


def _no_cli_flag(text: str) -> None:
    assert not re.search(r"(?<![\w-])--[a-z]", text), text


@pytest.mark.timeout(300)
def test_the_openai_endpoints_audio_link_downloads(server: ReadmeServer):
    reply = httpx.post(f"{server.url}/v1/chat/completions", timeout=120, json={
        "model": "hugginggpt", "messages": [{"role": "user", "content": REQUEST}]})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    content = body["choices"][0]["message"]["content"]
    [url] = body["hugginggpt"]["artifacts"]
    assert url.startswith(f"{server.url}/artifacts/") and url.endswith(".wav")
    assert f"Speech saved to {url} (" in content  # the sentence names the link itself
    assert f"]({url})" in content
    _no_cli_flag(content)
    download = httpx.get(url, timeout=60)
    assert download.status_code == 200, download.text
    assert download.headers["content-type"] == "audio/x-wav"
    assert_speech(download.content)

    # and back as an upload: the server stores it in the thread's folder of its
    # (relative) workspace and reads it, all off its event loop
    sent = base64.b64encode(download.content).decode()
    heard = httpx.post(f"{server.url}/v1/chat/completions", timeout=120, json={
        "model": "hugginggpt", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "Transcribe this recording."},
            {"type": "input_audio", "input_audio": {"data": sent, "format": "wav"}}]}]})
    assert heard.status_code == 200, heard.text
    assert heard.json()["hugginggpt"]["status"] == "completed", heard.text
    assert "Transcript: " in heard.json()["choices"][0]["message"]["content"]


@pytest.mark.timeout(300)
def test_a_chat_messages_audio_block_downloads(server: ReadmeServer):
    from langgraph_sdk import get_client

    async def chat() -> dict:
        client = get_client(url=server.url)
        thread = await client.threads.create()
        return await client.runs.wait(thread["thread_id"], "hugginggpt", input={
            "messages": [{"type": "human", "content": REQUEST}]})

    values = asyncio.run(chat())
    assert values["status"] == "completed", values.get("response")
    answer = values["messages"][-1]
    [audio] = [b for b in answer["content"] if isinstance(b, dict) and b["type"] == "audio"]
    assert audio["url"].startswith("/artifacts/")
    assert f"Speech saved to {audio['url']} (" in values["response"]
    _no_cli_flag(values["response"])
    download = httpx.get(urljoin(server.url, audio["url"]), timeout=60)
    assert download.status_code == 200, download.text
    assert_speech(download.content)


@pytest.mark.timeout(300)
def test_the_ui_in_server_mode_downloads_the_audio(server: ReadmeServer, tmp_path: Path):
    """The UI's server runner, as ``hugginggpt ui --server URL`` uses it: the page shows
    the file it downloaded (not driven in a browser here: tests/test_ui_browser.py does
    that for the page itself)."""
    from hugginggpt.ui.runners import ServerRunner

    runner = ServerRunner(server.url, workspace=tmp_path / "ui-ws")

    async def scenario():
        thread = await runner.new_thread()
        return await runner.start(thread, REQUEST, [], None, lambda *event: None)

    done = asyncio.run(scenario())
    assert done.status == "completed", done.response
    [audio] = [a for a in done.artifacts if a.kind == "audio"]
    assert audio.where.startswith(f"{server.url}/artifacts/"), audio.where
    assert audio.path is not None, audio.where  # "(download failed: ...)" otherwise
    assert f"Speech saved to {audio.where} (" in done.response  # the page's answer links it
    assert_speech(audio.path.read_bytes())
    _no_cli_flag(done.response)


CANNOT = "Draw a picture of a cat"
"""A request no model can run here: no image generator is cached, and nothing is
downloaded (offline; a served run may not download)."""


@pytest.mark.timeout(300)
def test_a_failed_runs_fix_is_said_for_each_interface(server: ReadmeServer, tmp_path: Path):
    """The same failing run: the CLI's answer names its flags, the Python caller's the
    keywords of hugginggpt.run, and the OpenAI endpoint's no CLI flag at all."""
    env = harness_env(tmp_path)
    cli = subprocess.run([str(Path(sys.executable).parent / "hugginggpt"), "run", CANNOT],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert "Generating the image failed" in cli.stdout, cli.stdout + cli.stderr
    assert "try another --backend" in cli.stdout and "--download" in cli.stdout

    python = subprocess.run(
        [sys.executable, "-c", f"import hugginggpt; print(hugginggpt.run({CANNOT!r}).response)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert "Generating the image failed" in python.stdout, python.stdout + python.stderr
    assert "try another backend=..." in python.stdout and 'download="yes"' in python.stdout
    assert "pass llm=MODEL" in python.stdout
    assert not re.search(r"(?<![\w-])--(?!task)[a-z]", python.stdout), python.stdout

    reply = httpx.post(f"{server.url}/v1/chat/completions", timeout=120, json={
        "model": "hugginggpt", "messages": [{"role": "user", "content": CANNOT}]})
    content = reply.json()["choices"][0]["message"]["content"]
    assert "Generating the image failed" in content, content
    assert "try another \"backend\" in the run's context" in content
    assert "HUGGINGGPT_DOWNLOAD=" in content and "ask the server's operator" in content
    _no_cli_flag(content)


def test_the_ui_in_server_mode_plays_the_audio_in_a_browser(
        server: ReadmeServer, tmp_path_factory: pytest.TempPathFactory):
    """``hugginggpt ui --server URL`` in a real headless Chromium: the page's player
    plays the WAV it fetched from the README's server, and its answer links the file."""
    from playwright.sync_api import sync_playwright

    from tests.test_ui_browser import BROWSER_ARGS, UI, _browser_path, _status

    browser_path = _browser_path()  # a skip, saying why, where none can be installed
    ui = UI(tmp_path_factory.mktemp("ui-server"), server=server.url)
    ui.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=browser_path,
                                                 headless=True, args=BROWSER_ARGS)
            page = browser.new_page()
            page.goto(ui.url)
            page.wait_for_selector("#request textarea")
            page.fill("#request textarea", REQUEST)
            page.click("#run")
            _status(page, "completed")
            audio = page.locator("#audio-0 audio[src]").first
            audio.wait_for(state="attached", timeout=30_000)
            played = page.evaluate("""async (src) => {
                const reply = await fetch(src);
                return Array.from(new Uint8Array(await reply.arrayBuffer()));
            }""", audio.get_attribute("src"))
            answer = page.inner_text("#response")
            browser.close()
    finally:
        ui.stop()
    assert_speech(bytes(played))
    assert f"Speech saved to {server.url}/artifacts/" in answer, answer
    _no_cli_flag(answer)
