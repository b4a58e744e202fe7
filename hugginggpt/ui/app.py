"""The Gradio page of ``hugginggpt ui``.

One column to ask (the request, uploads, the approval policy, the threads to revisit),
one to watch: the plan as a picture coloured by each subtask's state, a progress table
updated from the graph's stream, the approval panel when the policy asks (approve, edit
the plan as JSON, or reject with a reason), then the answer with the outputs inline
(images in a gallery, audio players, each step's text). Everything goes through a
:class:`~hugginggpt.ui.runners.Runner`, so the page does not know whether the graph runs
here or on a server. A failure is shown on the page, in words; nothing is lost (the
thread stays in its checkpoints, the request and uploads stay in their boxes).

Gradio is imported by this module, after :mod:`hugginggpt.ui` has set its analytics and
temporary folder (see there); ``hugginggpt --help`` never imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from html import escape
from pathlib import Path
from typing import Any

import gradio as gr

from hugginggpt.nodes.planning.validation import PlanParseError, plan_from_json
from hugginggpt.tools.artifacts import is_artifact_ref
from hugginggpt.tools.text import MAX_MESSAGE, clip
from hugginggpt.ui.plan_picture import plan_svg
from hugginggpt.ui.runners import OnEvent, Runner, UIError, stage_uploads
from hugginggpt.ui.view import RunView, text_outputs

__all__ = ["build_app", "launch", "serve", "AUDIO_SLOTS", "APPROVALS"]

log = logging.getLogger(__name__)

AUDIO_SLOTS = 4
"""Audio players on the page; a run's further audio outputs are listed as files."""
APPROVALS = ("never", "plan", "risky")
_MARKS = {"waiting": "·", "running": "▶", "retrying": "↻", "done": "✓", "failed": "✗",
          "skipped": "↷"}
_CSS = """
.hugginggpt-progress table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
.hugginggpt-progress td, .hugginggpt-progress th { padding: 2px 8px; text-align: left;
  border-bottom: 1px solid #e5e7eb; vertical-align: top; }
.hugginggpt-plan-box { overflow-x: auto; }
"""


# ------------------------------------------------------------------------ what is shown


def _note(note: str) -> str:
    """A row's note (why a step failed or waits), whole up to a length."""
    return clip(note, MAX_MESSAGE)


def _status_line(view: RunView) -> str:
    if view.error:
        return f"**Error:** {escape(view.error)}"
    words = {"running": "running", "waiting": "waiting for your decision",
             "interrupted": "interrupted: resume the thread to finish it"}
    said = words.get(view.status, view.status)
    stage = f" ({view.stage})" if view.status == "running" and view.stage else ""
    line = f"**Thread** `{view.thread_id}`: **{said}**{stage}"
    if view.abort_reason:
        line += f"\n\n{escape(_note(view.abort_reason))}"
    if view.plan_errors and view.status == "aborted":
        line += "\n\n" + "\n".join(f"- {escape(_note(e))}" for e in view.plan_errors[:5])
    return line


def _progress_html(view: RunView) -> str:
    if not view.rows:
        lines = "".join(f"<li>{escape(line)}</li>" for line in view.log[-6:])
        return f'<div class="hugginggpt-progress"><ul>{lines}</ul></div>' if lines else ""
    body = []
    for row in view.rows.values():
        took = f"{row.latency_s:.2f}s" if row.latency_s is not None else ""
        model = f"{row.model} ({row.backend})" if row.model else ""
        attempt = str(row.attempt) if row.attempt else ""
        body.append(
            f'<tr data-id="{row.id}" data-state="{escape(row.state)}"><td>#{row.id}</td>'
            f"<td>{escape(row.task)}</td><td>{_MARKS.get(row.state, '')} {escape(row.state)}"
            f"</td><td>{escape(model)}</td><td>{attempt}</td><td>{took}</td>"
            f"<td>{escape(_note(row.note))}</td></tr>")
    return ('<div class="hugginggpt-progress"><table><thead><tr><th>id</th><th>task</th>'
            "<th>state</th><th>model</th><th>attempt</th><th>time</th><th>note</th></tr>"
            f"</thead><tbody>{''.join(body)}</tbody></table></div>")


def _plan_html(view: RunView) -> str:
    if not view.plan:
        return ""
    states = {i: row.state for i, row in view.rows.items()}
    models = {i: row.model for i, row in view.rows.items() if row.model}
    return f'<div class="hugginggpt-plan-box">{plan_svg(view.plan, states, models)}</div>'


def _approval_text(pending: dict[str, Any]) -> str:
    if pending.get("type") == "download":
        lines = [f"**Downloads needed** for: {escape(str(pending.get('request', '')))}"]
        lines += [f"- {escape(str(item.get('summary', item.get('model'))))}"
                  for item in pending.get("downloads", [])]
        lines.append("\nApprove to download them all, reject to download none.")
    else:
        lines = [f"**Approval needed** ({escape(str(pending.get('policy')))} policy) for: "
                 f"{escape(str(pending.get('request', '')))}"]
        chosen = pending.get("selections", {})
        for step in pending.get("plan", []):
            pick = chosen.get(str(step.get("id")), {})
            lines.append(f"- #{step.get('id')} {escape(str(step.get('task')))} → "
                         f"{escape(str(pick.get('model')))} ({escape(str(pick.get('backend')))})")
        lines += [f"- risk: #{r.get('id')} {escape(str(r.get('model')))} is "
                  f"{escape(str(r.get('risk')))}" for r in pending.get("risky", [])]
    lines += [f"- **problem:** {escape(str(p))}" for p in pending.get("problems", [])]
    return "\n".join(lines)


def _steps_text(view: RunView) -> str:
    lines = []
    for step in view.plan:
        result = view.results.get(int(step["id"]))
        if result is None:
            continue
        files = [f"{name}: {value.get('kind', 'file')} file, shown below"
                 for name, value in (result.get("outputs") or {}).items()
                 if is_artifact_ref(value)]
        said = (text_outputs(result) or "; ".join(files)) if result.get("status") == "done" \
            else (result.get("error") or result.get("status", ""))
        lines.append(f"- **#{step['id']} {escape(str(step.get('task')))}** "
                     f"({escape(str(result.get('status')))}): {escape(str(said))}")
    return "\n".join(lines)


def _files_text(view: RunView, shown: set[Path]) -> str:
    lines = [f"- #{a.subtask_id} {a.kind}: `{a.path if a.path else a.where}`"
             for a in view.artifacts if a.path is None or a.path not in shown]
    return ("**Other outputs**\n" + "\n".join(lines)) if lines else ""


def _outputs(view: RunView) -> list[Any]:
    """The values of the output components (``outputs`` in :func:`build_app`), in that
    order."""
    pending = view.approval if view.status == "waiting" else None
    images = [str(a.path) for a in view.artifacts if a.kind == "image" and a.path]
    audio = [a.path for a in view.artifacts if a.kind == "audio" and a.path][:AUDIO_SLOTS]
    shown = {Path(p) for p in images} | set(audio)
    plan_json = json.dumps(pending.get("plan", view.plan), indent=2) if pending else ""
    values: list[Any] = [
        view.thread_id,
        _status_line(view),
        _plan_html(view),
        _progress_html(view),
        view.response,
        _steps_text(view),
        gr.update(value=images, visible=bool(images)),
        gr.update(value=_files_text(view, shown)),
        gr.update(visible=pending is not None),
        _approval_text(pending) if pending else "",
        gr.update(value=plan_json, visible=bool(pending and pending.get("type") != "download")),
    ]
    for i in range(AUDIO_SLOTS):
        path = audio[i] if i < len(audio) else None
        values.append(gr.update(value=str(path) if path else None, visible=path is not None,
                                label=f"audio: {path.name}" if path else "audio"))
    return values


# ------------------------------------------------------------------------ running


async def _drive(view: RunView,
                 call: Callable[[OnEvent], Awaitable[RunView]]) -> AsyncIterator[RunView]:
    """Run ``call`` and yield the view after each stream event, then the final view (the
    thread's state). A failure becomes the view's error, said in words."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()

    def on_event(mode: str, chunk: Any) -> None:  # called from the run's thread
        loop.call_soon_threadsafe(queue.put_nowait, (mode, chunk))

    task = asyncio.ensure_future(call(on_event))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    while (item := await queue.get()) is not None:
        view.handle(*item)
        yield view
    try:
        yield task.result()
    except UIError as exc:
        view.error = str(exc)
        yield view
    except Exception as exc:  # an unexpected failure: said on the page, logged in full
        log.exception("the run of thread %s failed", view.thread_id)
        view.error = f"the run failed: {type(exc).__name__}: {exc}"
        yield view


def build_app(runner: Runner, *, approval: str = "never", title: str = "HuggingGPT") -> gr.Blocks:
    """The page over ``runner``; ``approval`` is the policy preselected for new runs."""
    who = _who()
    with gr.Blocks(title=title, analytics_enabled=False) as demo:
        gr.Markdown(f"# {escape(title)}\nAn LLM (or the offline planner) plans, experts "
                    f"execute. Runs go to: {escape(runner.where)}")
        with gr.Row():
            with gr.Column(scale=2):
                request = gr.Textbox(label="Request", lines=3, elem_id="request",
                                     placeholder="e.g. Read the text in this image and tell "
                                                 "me whether it sounds positive or negative")
                uploads = gr.File(label="Images and audio", file_count="multiple",
                                  file_types=["image", "audio"], type="filepath",
                                  elem_id="uploads")
                policy = gr.Radio(list(APPROVALS), value=approval, label="Approval",
                                  info="plan: approve every plan; risky: only plans with "
                                       "risky tools", elem_id="approval-policy")
                follow_up = gr.Checkbox(label="Continue the open thread", value=False,
                                        elem_id="follow-up")
                run = gr.Button("Run", variant="primary", elem_id="run")
                with gr.Accordion("Threads", open=True):
                    threads = gr.Dropdown(label="Threads in the checkpoints", choices=[],
                                          elem_id="threads", allow_custom_value=False)
                    with gr.Row():
                        refresh = gr.Button("Refresh", size="sm", elem_id="refresh")
                        open_thread = gr.Button("Open", size="sm", elem_id="open-thread")
                        resume = gr.Button("Resume", size="sm", elem_id="resume")
            with gr.Column(scale=3):
                thread = gr.Textbox(label="Thread", interactive=False, elem_id="thread")
                status = gr.Markdown(elem_id="status")
                plan_picture = gr.HTML(elem_id="plan-picture")
                progress = gr.HTML(elem_id="progress")
                with gr.Group(visible=False, elem_id="approval-box") as approval_box:
                    approval_text = gr.Markdown(elem_id="approval-text")
                    plan_code = gr.Code(label="Plan (edit it, then Run edited plan)",
                                        language="json", interactive=True,
                                        elem_id="plan-json")
                    reason = gr.Textbox(label="Reason (for a rejection)", elem_id="reason")
                    with gr.Row():
                        approve = gr.Button("Approve", variant="primary", elem_id="approve")
                        edit = gr.Button("Run edited plan", elem_id="edit")
                        reject = gr.Button("Reject", variant="stop", elem_id="reject")
                response = gr.Markdown(label="Answer", elem_id="response")
                steps = gr.Markdown(elem_id="steps")
                gallery = gr.Gallery(label="Images", visible=False, elem_id="images",
                                     columns=3, height="auto")
                players = [gr.Audio(label="audio", visible=False, interactive=False,
                                    type="filepath", elem_id=f"audio-{i}")
                           for i in range(AUDIO_SLOTS)]
                files = gr.Markdown(elem_id="files")
        outputs = [thread, status, plan_picture, progress, response, steps, gallery, files,
                   approval_box, approval_text, plan_code, *players]

        def said(message: str) -> list[Any]:
            """Outputs that only say what is wrong: the rest of the page stays as it was
            (the request, the uploads, an approval still waiting)."""
            return [gr.update(), f"**Error:** {escape(message)}",
                    *[gr.update()] * (len(outputs) - 2)]

        async def on_run(text: str, uploaded: list[str] | None, chosen: str, again: bool,
                         current: str) -> AsyncIterator[list[Any]]:
            if not text.strip():
                yield said("the request is empty: say what you want done")
                return
            try:
                thread_id = current if again and current else await runner.new_thread()
                staged = stage_uploads(list(uploaded or []), runner.workspace, thread_id)
            except UIError as exc:
                yield said(str(exc))
                return
            view = RunView(thread_id, request=text)
            async for shown in _drive(view, lambda on_event: runner.start(
                    thread_id, text, staged, chosen, on_event)):
                yield _outputs(shown)

        async def on_decide(action: str, current: str, why: str, edited: str
                            ) -> AsyncIterator[list[Any]]:
            if not current:
                yield said("no open thread")
                return
            decision: dict[str, Any] = {"action": action, "who": who}
            if action == "reject":
                decision["reason"] = why.strip() or "rejected in the web UI"
            if action == "edit":
                try:
                    decision["plan"] = plan_from_json(edited or "", "the edited plan")
                except PlanParseError as exc:
                    yield said(f"the edited plan is not a plan: {exc}")
                    return
            view = RunView(current)
            with contextlib.suppress(UIError):  # the run says why, if it cannot go on
                view = await runner.open(current)
            view.approval, view.status = None, "running"
            async for shown in _drive(view, lambda on_event: runner.resume(
                    current, decision, on_event)):
                yield _outputs(shown)

        async def on_resume(choice: str | None, current: str) -> AsyncIterator[list[Any]]:
            thread_id = _thread_of(choice) or current
            if not thread_id:
                yield said("pick a thread first")
                return
            view = RunView(thread_id)
            async for shown in _drive(view, lambda on_event: runner.resume(
                    thread_id, None, on_event)):
                yield _outputs(shown)

        async def on_open(choice: str | None) -> list[Any]:
            thread_id = _thread_of(choice)
            if not thread_id:
                return said("pick a thread first")
            try:
                return _outputs(await runner.open(thread_id))
            except UIError as exc:
                return said(str(exc))

        async def on_refresh() -> Any:
            try:
                found = await runner.threads()
            except UIError as exc:
                return gr.update(choices=[], label=f"Threads (cannot list them: {exc})")
            return gr.update(choices=[t.label() for t in found], label="Threads in the "
                             "checkpoints")

        def decider(action: str) -> Callable[[str, str, str], AsyncIterator[list[Any]]]:
            async def decide(current: str, why: str, edited: str) -> AsyncIterator[list[Any]]:
                async for shown in on_decide(action, current, why, edited):
                    yield shown
            return decide

        run.click(on_run, [request, uploads, policy, follow_up, thread], outputs).then(
            on_refresh, None, threads)
        for button, action in ((approve, "approve"), (edit, "edit"), (reject, "reject")):
            button.click(decider(action), [thread, reason, plan_code], outputs).then(
                on_refresh, None, threads)
        open_thread.click(on_open, [threads], outputs)
        resume.click(on_resume, [threads, thread], outputs).then(on_refresh, None, threads)
        refresh.click(on_refresh, None, threads)
        demo.load(on_refresh, None, threads)
    return demo


def _thread_of(choice: str | None) -> str:
    """The thread id of a dropdown entry (``ID · status · request``)."""
    return (choice or "").split(" · ", 1)[0].strip()


def _who() -> str:
    """Who answers approvals on this page, for the audit trail."""
    try:
        return f"web UI ({getpass.getuser()})"
    except (KeyError, OSError):  # no user name (a container without a passwd entry)
        return "web UI"


def launch(runner: Runner, *, host: str = "127.0.0.1", port: int = 7860,
           approval: str = "never") -> None:
    """Build the page over ``runner`` and serve it until interrupted (see :func:`serve`)."""
    serve(build_app(runner, approval=approval), runner, host=host, port=port)


def serve(demo: gr.Blocks, runner: Runner, *, host: str = "127.0.0.1", port: int = 7860) -> None:
    """Serve ``demo`` until interrupted: the outputs servable (the workspace's artifacts
    and the files downloaded from a server, never its checkpoints or uploads), a theme
    of system fonts and no share link (nothing from or to the internet)."""
    outputs = [str(runner.workspace / "artifacts"), str(runner.workspace / "ui-downloads")]
    demo.queue(default_concurrency_limit=4)
    demo.launch(server_name=host, server_port=port, share=False, show_error=False,
                allowed_paths=outputs, css=_CSS,
                theme=gr.themes.Default(font=["ui-sans-serif", "system-ui", "sans-serif"],
                                        font_mono=["ui-monospace", "monospace"]),
                footer_links=[])
