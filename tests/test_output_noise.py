"""What a user reads stays readable: multi-line outputs indented under their subtask, a
long request not echoed back whole, a reason for "no model" said once in the log."""

from __future__ import annotations

import io

from hugginggpt.graph.state import Selection, State, Subtask, SubtaskResult
from hugginggpt.nodes.respond import template_response
from hugginggpt.progress import Progress


def _state(request: str) -> State:
    return State(
        request=request,
        plan=[Subtask(id=0, task="image-to-text", args={"image": "scan.png"}),
              Subtask(id=1, task="text-to-speech", args={"text": "hi"})],
        selections={0: Selection(subtask_id=0, task="image-to-text", model="lite/rapidocr",
                                 backend="lite", reason="the only model")},
        results={0: SubtaskResult(id=0, task="image-to-text", status="done",
                                  outputs={"text": "TOTAL 23.48\nVAT 3.91\nThank you"})},
    )


def test_multi_line_outputs_stay_under_their_subtask():
    text = template_response(_state("Read scan.png"), "Results.")
    lines = text.splitlines()
    start = lines.index("1. The image says:")
    assert lines[start + 1:start + 4] == ["   TOTAL 23.48", "   VAT 3.91", "   Thank you"]
    assert lines[start + 4].startswith("2. Reading the text aloud did not run")


def test_a_long_request_is_not_echoed_back_whole():
    request = "Summarise this: " + "word " * 15_000  # 75 kB
    text = template_response(_state(request), "Results.")
    assert len(text) < 3_000 and "word word word" not in text


def test_a_reason_for_no_model_is_said_once_in_the_log():
    log = io.StringIO()
    progress = Progress(log)
    reason = "no model can run text-to-speech with backend 'lite' (lite: no tool for it)"
    progress.handle("updates", {"select": {"selections": {1: Selection(
        subtask_id=1, task="text-to-speech", model=None, backend=None, reason=reason)}}})
    progress.handle("custom", {"type": "subtask", "id": 1, "task": "text-to-speech",
                               "event": "failed", "error": reason})
    progress.close()
    assert log.getvalue().count(reason) == 1, log.getvalue()
    assert "#1 text-to-speech: not run: no model" in log.getvalue()
