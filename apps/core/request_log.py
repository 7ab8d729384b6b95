"""One line per refused request in ``django.request``'s log (``LOGGING`` in config/settings.py).

Django logs a view's ``PermissionDenied`` as a warning with the exception attached, so every
403 wrote a full traceback: a short run of the staff pages wrote about a hundred, and the
warnings worth reading drowned. A refusal is an answer, not a fault: its line says who asked
for what, and nothing more. Read by ``logging.config`` before the apps are loaded: this module
imports no model.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied


class OneLineRefusals(logging.Filter):
    """Keeps every record; a ``PermissionDenied`` one loses its traceback and becomes
    ``Forbidden: GET /path (user 12) 403``."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if isinstance(record.exc_info, tuple) else None
        if not isinstance(exc, PermissionDenied):
            return True
        request = getattr(record, "request", None)
        record.msg = "Forbidden: %s %s (user %s) %s"
        record.args = (getattr(request, "method", "?"), _path(request), _user_id(request),
                       getattr(record, "status_code", 403))
        record.exc_info = record.exc_text = None
        return True


def _path(request) -> str:
    # As Django escapes it: a path is the client's text, and a newline in it would make two
    # lines of one.
    path = getattr(request, "path", "?")
    return path.encode("unicode_escape").decode("ascii")


def _user_id(request) -> str:
    try:
        user = request.user
        return str(user.pk) if user.is_authenticated else "anonymous"
    except Exception:  # no user on the request, or its session unreadable: still one line
        return "?"
