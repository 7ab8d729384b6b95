"""The reviews' Celery tasks: thin shells over ``running`` and ``services``.

``run_review`` goes to the ``bots`` queue (``services.send``). A worker restarting loses the one
it was running; beat's ``restart_stalled`` starts such a review again a minute or two later, and
asking for it again does at once (``services`` says how).
"""

from __future__ import annotations

import logging

from celery import shared_task

from apps.core.outages import OUTAGES, warn

from . import running, services

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def run_review(review_id: int, attempt: int) -> str | None:
    try:
        return running.run(review_id, attempt)
    except OUTAGES as err:  # the review stalls and is started again once the service is back
        warn(log, f"review {review_id} interrupted", err)
        return None
    except Exception as err:
        log.exception("review %s (attempt %s) failed", review_id, attempt)
        try:
            running.fail(review_id, attempt, err)
        except OUTAGES as outage:
            warn(log, f"review {review_id} not marked failed", outage)
        return "failed"


@shared_task(ignore_result=True)
def restart_stalled() -> int | None:
    try:
        return services.restart_stalled()
    except OUTAGES as err:
        warn(log, "stalled reviews not looked at this time", err)
        return None
