"""What the commands share: usage errors, exit codes, common options, plugins, plan
files and the settings a thread was started with."""

from __future__ import annotations

import argparse
import getpass
import importlib
import json
from pathlib import Path
from typing import Any

from hugginggpt.graph.context import Context, SettingsError, env_names, settings_of
from hugginggpt.nodes.planning.validation import PlanParseError, parse_plan_text
from hugginggpt.tools.env import env
from hugginggpt.tools.llm.config import ConfigError, routing_config
from hugginggpt.tools.redact import REDACTED, redact

__all__ = ["UsageError", "EXIT_OK", "EXIT_ABORTED", "EXIT_USAGE", "EXIT_INTERRUPTED",
           "add_common", "load_plugins", "read_plan", "checked", "settings_path",
           "saved_settings", "saved_checkpoint_url", "with_credentials", "who"]

EXIT_OK, EXIT_ABORTED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad input from the user: printed as is, exit code 2."""


def add_common(p: argparse.ArgumentParser) -> None:
    """Options of every command that works on a thread."""
    p.add_argument("--thread", help="thread id (run: new if omitted)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--workspace", help="folder for artifacts, checkpoints and settings")
    p.add_argument("--checkpoint-url",
                   help="memory | sqlite:///FILE | postgresql://... "
                        "(default: <workspace>/checkpoints.sqlite)")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="import MODULE first (it may register tools); repeatable")


def load_plugins(modules: list[str]) -> None:
    """Import the plugin modules (``--plugin`` and ``HUGGINGGPT_PLUGINS``)."""
    for name in [*modules, *(env("HUGGINGGPT_PLUGINS") or "").split(",")]:
        if name.strip():
            try:
                importlib.import_module(name.strip())
            except ImportError as exc:
                raise UsageError(f"cannot import plugin {name!r}: {exc}") from exc


def read_plan(path: str) -> list[dict[str, Any]]:
    try:
        return parse_plan_text(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the plan file {path}: {exc.strerror}") from exc
    except PlanParseError as exc:
        raise UsageError(f"the plan file {path} holds no plan: {exc}") from exc


def checked(context: Context) -> Context:
    """The context, once its LLM configuration is known to be valid."""
    try:
        routing_config(context)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    return context


def settings_path(workspace: str, thread_id: str) -> Path:
    """Where ``run`` keeps a thread's settings (never secrets) for ``resume``."""
    return Path(workspace) / "threads" / f"{thread_id}.json"


def saved_settings(args: argparse.Namespace, *, to_run: bool = False) -> tuple[Context, str]:
    """The settings and checkpoint URL a thread's run was started with; ``to_run``: with
    the URL credentials they were saved without, from the environment (see
    :func:`with_credentials`)."""
    if not args.thread:
        raise UsageError(f"{args.command} needs --thread ID")
    workspace = args.workspace or Context().workspace
    settings_file = settings_path(workspace, args.thread)
    if not settings_file.is_file():
        if args.checkpoint_url:  # e.g. a thread of the server, traced from its database
            return Context(workspace=str(Path(workspace).resolve())), args.checkpoint_url
        raise UsageError(
            f"no saved settings for thread {args.thread!r} in {Path(workspace).resolve()}: "
            "pass the --workspace the run used (or its --checkpoint-url)"
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
