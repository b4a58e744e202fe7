"""What the commands share: usage errors, exit codes, common options, plugins, plan
files and the settings a thread was started with.

``run`` saves a thread's settings in its workspace (``<workspace>/threads/<ID>.json``)
and records the thread in a per-user index (:func:`state_dir`), so that ``resume``,
``trace`` and ``replay`` find them from any folder: with ``--workspace``, there only;
else in the current folder's default workspace, then through the index.
"""

from __future__ import annotations

import argparse
import getpass
import importlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hugginggpt.cli.exits import (
    EXIT_ABORTED,
    EXIT_CODES,
    EXIT_DIFFERENT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    EXIT_WAITING,
    UsageError,
    exit_codes_help,
)
from hugginggpt.graph.checkpoint import sqlite_path
from hugginggpt.graph.context import Context, SettingsError, env_names
from hugginggpt.graph.recorded import settings_of
from hugginggpt.nodes.planning.validation import PlanParseError, plan_from_json
from hugginggpt.nodes.responding.advice import told
from hugginggpt.tools.env import env
from hugginggpt.tools.llm.config import ConfigError, routing_config
from hugginggpt.tools.redact import REDACTED, redact

__all__ = ["UsageError", "EXIT_OK", "EXIT_DIFFERENT", "EXIT_USAGE", "EXIT_PARTIAL",
           "EXIT_FAILED", "EXIT_ABORTED", "EXIT_WAITING", "EXIT_INTERRUPTED", "EXIT_CODES",
           "exit_codes_help", "add_common", "thread_id_arg", "load_plugins", "read_plan",
           "checked", "settings_path", "state_dir", "index_thread", "absolute_checkpoint_url",
           "saved_settings", "saved_checkpoint_url", "with_credentials", "who", "write_report"]

def add_common(p: argparse.ArgumentParser) -> None:
    """Options of every command that works on a thread."""
    p.add_argument("--thread", type=thread_id_arg, help="thread id (run: new if omitted)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--workspace", help="folder for artifacts, checkpoints and settings")
    p.add_argument("--checkpoint-url",
                   help="memory | sqlite:///FILE | postgresql://... "
                        "(default: <workspace>/checkpoints.sqlite)")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="import MODULE first (it may register tools); repeatable")


def write_report(args: argparse.Namespace, document: dict[str, Any], text: str) -> None:
    """An evaluation's report to ``--output`` (JSON, for CI), and the table (or, with
    ``--json``, the report) printed."""
    if args.output:
        output = Path(args.output)
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(json.dumps(document, indent=2, ensure_ascii=False))
        except OSError as exc:
            raise UsageError(f"cannot write the report to {output}: {exc}") from exc
    print(json.dumps(document, indent=2, ensure_ascii=False) if args.json else text)


def load_plugins(modules: list[str]) -> None:
    """Import the plugin modules (``--plugin`` and ``HUGGINGGPT_PLUGINS``)."""
    for name in [*modules, *(env("HUGGINGGPT_PLUGINS") or "").split(",")]:
        if name.strip():
            try:
                importlib.import_module(name.strip())
            except ImportError as exc:
                raise UsageError(f"cannot import plugin {name!r}: {exc}") from exc


def read_plan(path: str) -> list[dict[str, Any]]:
    """The subtasks of a plan file (``--plan``): strict JSON, never read like an LLM's
    reply, so a file cut short is refused with its line and column instead of running
    in part. The plan itself is validated by the planner stage."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte order mark is fine
    except OSError as exc:
        raise UsageError(f"cannot read the plan file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"the plan file {path} holds no plan: it is not UTF-8 text (byte "
                         f"{exc.start}); a plan file is JSON") from None
    try:
        return plan_from_json(text, "it")
    except PlanParseError as exc:
        raise UsageError(f"the plan file {path} holds no plan: {exc}") from None


def checked(context: Context) -> Context:
    """The context, once its LLM configuration is known to be valid."""
    try:
        routing_config(context)
    except ConfigError as exc:
        raise UsageError(told(exc, "cli")) from exc
    return context


_THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def thread_id_arg(value: str) -> str:
    """A ``--thread`` value: it names files (``threads/<ID>.json``, the index), so only
    letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit."""
    if not _THREAD_ID.fullmatch(value) or ".." in value:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a thread id: use letters, digits, '.', '_' and '-' (at most "
            "128, starting with a letter or digit)")
    return value


def settings_path(workspace: str, thread_id: str) -> Path:
    """Where ``run`` keeps a thread's settings (never secrets) for ``resume``."""
    return Path(workspace) / "threads" / f"{thread_id}.json"


def state_dir() -> Path:
    """The per-user folder of the index of threads: ``HUGGINGGPT_STATE_DIR``, else
    ``$XDG_STATE_HOME/hugginggpt``, else ``~/.local/state/hugginggpt``."""
    if chosen := env("HUGGINGGPT_STATE_DIR"):
        return Path(chosen).expanduser()
    base = env("XDG_STATE_HOME")
    return (Path(base) if base else Path.home() / ".local" / "state") / "hugginggpt"


def _index_entry(thread_id: str) -> Path:
    return state_dir() / "threads" / f"{quote(thread_id, safe='')}.json"


def index_thread(thread_id: str, settings_file: Path) -> None:
    """Record where a thread's settings are, for ``resume`` from any folder. A failure
    to write is told, not fatal: the run goes on, and ``--workspace`` still finds it."""
    entry = _index_entry(thread_id)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=entry.parent, delete=False,
                                         suffix=".tmp") as tmp:  # readers never see half
            json.dump({"settings": str(settings_file.resolve())}, tmp)
        os.replace(tmp.name, entry)
    except OSError as exc:
        print(f"hugginggpt: could not record thread {thread_id!r} in {entry.parent} "
              f"({exc.strerror}); resume it with --workspace "
              f"{settings_file.resolve().parent.parent}", file=sys.stderr)


def absolute_checkpoint_url(url: str) -> str:
    """A SQLite URL with its file made absolute (``resume`` may run in another folder);
    other URLs as they are."""
    path = sqlite_path(url)
    if path is None or str(path) == ":memory:":
        return url
    return f"sqlite:///{path.resolve()}"


def _find_settings(thread_id: str, workspace: str | None) -> tuple[Path | None, list[str]]:
    """The thread's settings file, and where it was looked for (for the message)."""
    if workspace:  # the user said where: there only
        given = settings_path(workspace, thread_id)
        return (given if given.is_file() else None), [f"{given.parent.resolve()} (--workspace)"]
    default = settings_path(Context().workspace, thread_id)
    if default.is_file():
        return default, []
    looked = [f"{default.parent.resolve()} (the default workspace here)"]
    entry = _index_entry(thread_id)
    if not entry.is_file():
        return None, [*looked, f"{entry.parent} (the index of your threads)"]
    try:
        indexed = Path(json.loads(entry.read_text())["settings"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, [*looked, f"{entry} (unreadable: remove it)"]
    if indexed.is_file():
        return indexed, looked
    return None, [*looked, f"the index of your threads, but the index points at {indexed}, "
                           "which is gone"]


def saved_settings(args: argparse.Namespace, *, to_run: bool = False) -> tuple[Context, str]:
    """The settings and checkpoint URL a thread's run was started with, found from any
    folder (see the module's docstring for where it looks); ``to_run``: with the URL
    credentials they were saved without, from the environment (see
    :func:`with_credentials`)."""
    if not args.thread:
        raise UsageError(f"{args.command} needs --thread ID")
    settings_file, looked = _find_settings(args.thread, args.workspace)
    if settings_file is None:
        if args.checkpoint_url:  # e.g. a thread of the server, traced from its database
            workspace = Path(args.workspace or Context().workspace).resolve()
            return Context(workspace=str(workspace)), args.checkpoint_url
        raise UsageError(
            f"no saved settings for thread {args.thread!r}: looked in "
            + "; ".join(looked) + ". Pass the --workspace the run used (or its "
            "--checkpoint-url)"
        )
    saved = json.loads(settings_file.read_text())
    load_plugins(saved.get("plugins", []))
    url = args.checkpoint_url or saved["checkpoint_url"]
    values = with_credentials(saved["context"], args.thread) if to_run else saved["context"]
    if to_run and _lost_credentials(url):
        raise UsageError(f"thread {args.thread!r} is checkpointed in {url}, whose credentials "
                         "are never saved: pass --checkpoint-url with them (or give the "
                         "password through the environment, e.g. PGPASSWORD)")
    try:
        context = Context(**values)
    except SettingsError as exc:
        raise UsageError(f"the saved settings of thread {args.thread!r} ({settings_file}) "
                         f"are not valid: {exc}") from None
    return context, url


def saved_checkpoint_url(url: str) -> str:
    """The checkpoint URL as saved with a thread's settings: without credentials."""
    return redact(url)


def _lost_credentials(value: Any) -> bool:
    return f"{REDACTED}@" in json.dumps(value)


def with_credentials(saved: dict[str, Any], thread: str) -> dict[str, Any]:
    """Saved settings whose URLs lost their credentials (``user:password@`` is never
    written), with those URLs taken from the environment where it has them again.

    Raises:
        UsageError: a URL that needs its credentials, and the environment does not
            give them: the message says which variable to set.
    """
    live = settings_of(context := Context())
    restored = dict(saved)
    for name, value in saved.items():
        if not _lost_credentials(value):
            continue
        if live.get(name) == value:  # the same URL, with its credentials in the environment
            restored[name] = getattr(context, name)
            continue
        variables = " or ".join(env_names(name)) or "the environment"
        raise UsageError(
            f"thread {thread!r} ran with {name} = {json.dumps(value)}, whose credentials are "
            f"never saved: to resume it, give the full URL in {variables} (credentials are "
            "best kept out of URLs: a key in the variable the endpoint reads, e.g. "
            "OPENAI_API_KEY or an api_key_env)")
    return restored


def who() -> str:
    """The user answering an approval, for the audit trail."""
    return getpass.getuser()
