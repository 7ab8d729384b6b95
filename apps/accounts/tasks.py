"""The accounts' chores on beat's schedule (``config/settings.py``)."""

from __future__ import annotations

import logging

from celery import shared_task

from apps.core.outages import OUTAGES, warn

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def clear_expired_sessions() -> None:
    """Django leaves expired sessions in their table until someone runs ``clearsessions``:
    every sign-in and every guest adds a row, and none would ever go."""
    from importlib import import_module

    from django.conf import settings

    try:
        import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
    except OUTAGES as err:
        warn(log, "expired sessions not cleared this time", err)
