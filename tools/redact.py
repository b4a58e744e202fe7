"""Keeping secrets out of everything the system writes: state, traces, logs and errors.

Keys live in the environment and are read only where a client is built. What can still
carry one is text that came back from elsewhere: an error message that echoes a request
header, a URL with ``user:password@``. :func:`redact` removes, from any text, the values
of the environment's secret variables and anything shaped like a known key or a URL's
credentials.
"""

from __future__ import annotations

import logging
import os
import re

__all__ = ["redact", "REDACTED", "USERINFO", "RedactingFilter", "LOG_FILTER",
           "install_log_redaction"]

REDACTED = "[redacted]"

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
_SHAPES = (
    re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{12,}"),   # OpenAI-style keys
    re.compile(r"\bhf_[A-Za-z0-9]{12,}"),                  # Hugging Face tokens
    re.compile(r"\blsv2_[A-Za-z0-9_]{12,}"),               # LangSmith keys
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"(?i)(?<=basic )[A-Za-z0-9+/]{8,}=*"),      # user:password, base64
)
USERINFO = re.compile(r"(?<=://)[^/\s?#]+@")
"""A URL's ``user:password@`` (or a token as the user name, ``https://TOKEN@host``)."""
_MIN_SECRET = 6


def _secret_values() -> list[str]:
    values = {value for name, value in os.environ.items()
              if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET}
    return sorted(values, key=len, reverse=True)  # longest first: no partial leftovers


def redact(text: str) -> str:
    """``text`` without secrets: environment secret values, key-shaped strings and URL
    credentials become ``[redacted]``."""
    if not text:
        return text
    for value in _secret_values():
        text = text.replace(value, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(REDACTED, text)
    return USERINFO.sub(REDACTED + "@", text)


# where request URLs, headers or error bodies get logged: HTTP and LLM clients (openai
# vendors httpx as httpx2), and this project
_LOGGED_BY = ("httpx", "httpx2", "httpcore", "openai", "urllib3", "requests",
              "huggingface_hub", "langsmith", "langchain", "langgraph", "hugginggpt")


class RedactingFilter(logging.Filter):
    """Removes secrets from a record's message (see :func:`redact`); never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record is the logging module's to report
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


LOG_FILTER = RedactingFilter()


def install_log_redaction() -> None:
    """Put :data:`LOG_FILTER` on the loggers of the HTTP and LLM clients and of this
    project, and on every child logger of theirs that exists now.

    A logger's filters see only the records logged on that logger (not its children's),
    so this is called again where a client library has just been imported (a client is
    built) to cover the loggers it created. Idempotent and cheap; the process's record
    factory and other applications' handlers are left alone.
    """
    names = [*_LOGGED_BY, *(name for name in list(logging.root.manager.loggerDict)
                            if name.split(".", 1)[0] in _LOGGED_BY)]
    for name in names:
        logger = logging.getLogger(name)
        if LOG_FILTER not in logger.filters:
            logger.addFilter(LOG_FILTER)
