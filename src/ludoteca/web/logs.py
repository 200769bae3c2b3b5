"""The server's logs as JSON lines (``ludoteca serve --log-format json``).

:func:`log_config` is the ``logging.config.dictConfig`` dictionary uvicorn is started with: every
record of uvicorn and of ``ludoteca`` becomes one JSON object per line (:class:`JsonFormatter`),
and every HTTP request gets one line from uvicorn's access log (``"logger": "uvicorn.access"``,
with ``client``, ``method``, ``path``, ``http_version``, ``status``), whatever ``--log-level`` says.
Without ``--log-format json`` uvicorn's own text format is kept.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from typing import Any

FORMATS = ("text", "json")
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "color_message"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``,
    ``pid``; uvicorn's access records add the request's fields, an exception its ``error`` text, and
    the ``extra=`` fields of a call are kept."""

    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "pid": os.getpid(),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            body.update(zip(_ACCESS_FIELDS, record.args, strict=True))
            body["message"] = f"{body['method']} {body['path']} {body['status']}"
        else:
            body["message"] = record.getMessage()
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in body:
                body[key] = value if isinstance(value, str | int | float | bool | None) else repr(value)
        if record.exc_info:
            body["error"] = self.formatException(record.exc_info)
        return json.dumps(body, ensure_ascii=False, default=str)


def log_config(level: str = "warning") -> dict[str, Any]:
    """uvicorn's logging configuration writing JSON lines to standard error (the access log to
    standard output, as uvicorn does)."""
    level = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {
            "default": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
            "access": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"},
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
            "ludoteca": {"handlers": ["default"], "level": level, "propagate": False},
        },
    }
