"""The web UI in a real headless Chromium: ``hugginggpt ui`` started as a user would (a
subprocess, embedded, offline: the lite backend, no LLM), driven by Playwright.

The browser is Debian's ``chromium`` (``scripts/chromium.sh`` installs it when missing;
``playwright install`` cannot download its own builds here); it resolves no host but
127.0.0.1, so a page that reached for the internet would show it. The tests skip only
where no browser can be installed.

The documentation's screenshots of the page (``docs/guides/img/ui-*.png``, in The web
UI) are taken here, at the moment a test has checked what they show:
``HUGGINGGPT_DOCS_SCREENSHOTS=1 python -m pytest tests/test_ui_browser.py`` writes them.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
BROWSER_ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
READ_AND_JUDGE = ("Read the text in this image and tell me whether it sounds positive or "
                  "negative")
PICTURE_TEXT = "I love this sunny day"
SIMILAR = "How similar are 'a cat sat on the mat' and 'a kitten lay on the rug'?"
SCREENSHOTS = ROOT / "docs" / "guides" / "img"
"""Where the documentation's screenshots go, when asked."""
TAKE_SCREENSHOTS = os.environ.get("HUGGINGGPT_DOCS_SCREENSHOTS") == "1"
"""Read at import: each test runs without the ``HUGGINGGPT_*`` variables (conftest.py)."""
RUN_S = 120_000
"""Milliseconds a run may take on the page (the first one loads the OCR engine)."""

pytestmark = pytest.mark.timeout(300)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _browser_path() -> str:
    """Debian's chromium, installed by scripts/chromium.sh when missing; a skip, saying
    why, only when it cannot be installed."""
    done = subprocess.run(["bash", str(ROOT / "scripts" / "chromium.sh")],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"no browser for the UI test: scripts/chromium.sh failed: "
                    f"{done.stderr.strip()[-500:]}")
    return done.stdout.strip().splitlines()[-1]


class UI:
    """``hugginggpt ui`` on a free loopback port, in its own folder."""

    def __init__(self, folder: Path, server: str | None = None) -> None:
        """``server``: a LangGraph server's URL (``hugginggpt ui --server``); else the
        graph runs embedded, on the lite backend."""
        self.folder = folder
        self.server = server
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.workspace = folder / "workspace"
        self.log = folder / "ui.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        exe = shutil.which("hugginggpt", path=str(Path(sys.executable).parent))
        assert exe, "the hugginggpt console script is missing: pip install -e '.[dev]'"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("HUGGINGGPT_", "OPENAI_", "GRADIO_"))}
        env |= {"HF_HOME": str(self.folder / "hf-home"), "HF_HUB_OFFLINE": "1",
                "GRADIO_ANALYTICS_ENABLED": "False",
                "GRADIO_TEMP_DIR": str(self.folder / "gradio-tmp"),
                "HUGGINGGPT_STATE_DIR": str(self.folder / "state")}
        env.pop("HF_TOKEN", None)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [exe, "ui", "--port", str(self.port), "--workspace", str(self.workspace),
                 *(["--server", self.server] if self.server else ["--backend", "lite"])],
                cwd=self.folder, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(self.url, timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail("hugginggpt ui did not start:\n" + self.log.read_text())
            time.sleep(0.3)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UI]:
    server = UI(tmp_path_factory.mktemp("ui"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    path = _browser_path()
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=path,
            headless=True, args=BROWSER_ARGS, viewport={"width": 1280, "height": 1000})
        yield context
        context.close()


@pytest.fixture
def page(ui: UI, browser: Any, tmp_path: Path) -> Iterator[Any]:
    """The UI's page, freshly loaded; every request it makes is recorded (only the UI's
    own address may appear), and a screenshot is saved under the test's folder at the
    end, whatever the outcome."""
    page = browser.new_page()
    page.requests_made = []
    page.on("request", lambda r: page.requests_made.append(r.url))
    page.goto(ui.url)
    page.wait_for_selector("#request textarea")
    yield page
    page.screenshot(path=str(tmp_path / "ui.png"), full_page=True)
    outside = [u for u in page.requests_made
               if not u.startswith((ui.url, "data:", "blob:"))]
    page.close()
    assert not outside, f"the page reached outside the UI: {outside[:5]}"
    assert (tmp_path / "ui.png").stat().st_size > 10_000


def _picture(path: Path) -> Path:
    image = Image.new("RGB", (900, 200), "white")
    ImageDraw.Draw(image).text((30, 60), PICTURE_TEXT, fill="black",
                               font=ImageFont.load_default(size=64))
    image.save(path)
    return path


def _docs_screenshot(page: Any, name: str) -> None:
    """The page as it is now, for the documentation (``SCREENSHOTS``), when asked."""
    if TAKE_SCREENSHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
        with Image.open(SCREENSHOTS / name) as shot:  # 256 colours: a page, not a photo
            small = shot.convert("RGB").quantize(256)
        small.save(SCREENSHOTS / name, optimize=True)


def _status(page: Any, words: str) -> None:
    page.wait_for_selector(f"#status :text('{words}')", timeout=RUN_S)


def test_an_uploaded_picture_is_read_and_judged(page: Any, tmp_path: Path, ui: UI):
    page.fill("#request textarea", READ_AND_JUDGE)
    page.set_input_files("#uploads input[type=file]", str(_picture(tmp_path / "note.png")))
    page.wait_for_selector("#uploads :text('note.png')")
    page.click("#run")
    # live: the page shows the plan's subtasks while they run (OCR loads its engine)
    # (one check of both at once: they change together, and the subtask may end soon)
    page.wait_for_function("""() =>
        document.querySelector("#progress tr[data-state='running']") !== null &&
        document.querySelectorAll("#plan-picture svg g.subtask[data-state='running']")
            .length === 1""", timeout=RUN_S)
    _status(page, "completed")
    answer = page.inner_text("#response")
    assert PICTURE_TEXT in answer and "positive" in answer.lower(), answer
    steps = page.inner_text("#steps")
    assert f"text: {PICTURE_TEXT}" in steps and "POSITIVE" in steps, steps
    # the plan as a picture: two boxes, OCR then sentiment, an arrow between, both done
    boxes = page.locator("#plan-picture svg g.subtask")
    assert boxes.count() == 2
    assert "image-to-text" in boxes.nth(0).text_content()
    assert "text-classification" in boxes.nth(1).text_content()
    assert [boxes.nth(i).get_attribute("data-state") for i in range(2)] == ["done", "done"]
    assert page.locator("#plan-picture svg path[marker-end]").count() == 1
    rows = page.locator("#progress tr[data-state='done']")
    assert rows.count() == 2 and "lite/rapidocr" in page.inner_text("#progress")
    _docs_screenshot(page, "ui-run.png")
    # the upload was copied into the workspace, under the thread
    thread = page.input_value("#thread textarea, #thread input")
    assert (ui.workspace / "uploads" / thread / "note.png").is_file()


def test_a_read_aloud_request_plays_a_wav(page: Any):
    page.fill("#request textarea", "Read this aloud: 'Good morning, the weather is lovely "
                                   "today'")
    page.click("#run")
    _status(page, "completed")
    # Gradio's player: a hidden <audio> without a source, and the waveform's own (in a
    # shadow root) whose source is the file the server sent
    audio = page.locator("#audio-0 audio[src]").first
    audio.wait_for(state="attached", timeout=30_000)
    source = audio.get_attribute("src")
    assert source, "the audio player has no source"
    head = page.evaluate("""async (src) => {
        const reply = await fetch(src);
        const bytes = new Uint8Array(await reply.arrayBuffer());
        return {status: reply.status, size: bytes.length,
                head: String.fromCharCode(...bytes.slice(0, 4)),
                wave: String.fromCharCode(...bytes.slice(8, 12))};
    }""", source)
    assert head["head"] == "RIFF" and head["wave"] == "WAVE", head
    assert head["size"] > 10_000  # seconds of speech, not an empty file
    assert "audio file, shown below" in page.inner_text("#steps")


def test_an_uploaded_recording_is_transcribed(page: Any, tmp_path: Path):
    import soundfile

    from hugginggpt.tools.experts.lite import speech

    samples, rate = speech.speak("The weather is nice today.")  # eSpeak NG, offline
    soundfile.write(str(tmp_path / "talk.wav"), samples, rate)
    page.fill("#request textarea", "Transcribe this recording")
    page.set_input_files("#uploads input[type=file]", str(tmp_path / "talk.wav"))
    page.wait_for_selector("#uploads :text('talk.wav')")
    page.click("#run")
    _status(page, "completed")
    assert "automatic-speech-recognition" in page.inner_text("#progress")
    assert "weather" in page.inner_text("#response").lower()


def test_a_plan_waits_for_approval_then_runs(page: Any):
    _wait_for_approval(page, SIMILAR)
    box = page.locator("#approve")  # the approval panel's button (the panel is two divs)
    assert box.is_visible()
    assert "Approval needed" in page.inner_text("#approval-text")
    assert "sentence-similarity" in page.inner_text("#approval-text")
    # the plan is drawn before anything ran: its box is waiting
    assert page.locator("#plan-picture svg g.subtask[data-state='waiting']").count() == 1
    assert "sentence-similarity" in page.inner_text("#plan-json")
    _docs_screenshot(page, "ui-approval.png")
    page.click("#approve")
    _status(page, "completed")
    assert not box.is_visible()
    assert page.locator("#plan-picture svg g.subtask[data-state='done']").count() == 1
    assert "similar" in page.inner_text("#response").lower()
    # a fresh page lists the thread; opening it shows its answer again
    thread = page.input_value("#thread textarea, #thread input")
    page.reload()
    page.wait_for_selector("#request textarea")
    assert "similar" not in page.inner_text("#response").lower()
    page.click("#refresh")
    page.click("#threads input")
    option = page.locator(f"[role='option']:has-text('{thread}')")
    option.wait_for(timeout=10_000)
    assert "completed" in option.inner_text()
    option.click()
    page.click("#open-thread")
    page.wait_for_selector(f"#status :text('{thread}')")
    assert "similar" in page.inner_text("#response").lower()


def test_an_empty_request_is_refused_in_words(page: Any):
    page.click("#run")
    _status(page, "the request is empty")
    assert "Traceback" not in page.inner_text("body")


def _wait_for_approval(page: Any, request: str) -> None:
    page.click("#approval-policy label:has-text('plan')")
    page.fill("#request textarea", request)
    page.click("#run")
    _status(page, "waiting for your decision")  # the stream says so first (the state's
    # status), then the thread's state brings the question
    page.wait_for_selector("#approval-text :text('Approval needed')", timeout=RUN_S)


def test_an_edited_plan_runs_instead_and_a_broken_one_is_shown_back(page: Any):
    _wait_for_approval(page, SIMILAR)
    editor = page.locator("#plan-json .cm-content")
    editor.fill('[{"id": 0, "task": "text-classification"')  # cut short
    page.click("#edit")
    _status(page, "the edited plan is not a plan")
    assert page.locator("#approve").is_visible()  # still waiting: nothing was lost
    editor.fill(json.dumps([{"id": 0, "task": "text-classification", "dep": [],
                             "args": {"text": "What a wonderful, happy day"}}]))
    page.click("#edit")
    _status(page, "completed")
    picture = page.locator("#plan-picture svg").text_content()
    assert "text-classification" in picture and "sentence-similarity" not in picture
    # the edited step ran on its new text: a classification the request's words do not
    # ask about languages goes to sentiment, never to the language detector
    assert "positive" in page.inner_text("#response")


def test_a_rejected_plan_ends_with_the_reason(page: Any):
    _wait_for_approval(page, SIMILAR)
    page.fill("#reason textarea", "not today")
    page.click("#reject")
    _status(page, "aborted")
    assert "rejected: not today" in page.inner_text("#status")
    # nothing ran: the planned subtask is skipped
    assert page.locator("#plan-picture svg g.subtask[data-state='skipped']").count() == 1
    assert not page.locator("#approve").is_visible()
