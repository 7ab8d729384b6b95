"""Beat's tournament work: thin shells over the services, each step in its own transactions."""

from __future__ import annotations

import logging

from celery import shared_task

from apps.core.outages import OUTAGES, warn

from . import running, services

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def tick() -> dict | None:
    """Start the tournaments whose time came, decide the no-shows, move rounds on."""
    try:
        return {"started": services.start_due(), "forfeits": running.forfeits_due(),
                "advanced": running.advance_due()}
    except OUTAGES as err:
        warn(log, "tournament tick skipped", err)  # the next tick does what this one would
        return None
