"""The tournaments' Celery tasks: thin shells over the services, each step in its own
transactions. ``tick`` is beat's; ``follow_table`` does what a table told (``follow.py``)."""

from __future__ import annotations

import logging

from celery import shared_task

from apps.core.outages import OUTAGES, warn

from . import follow, running, services

log = logging.getLogger(__name__)

#: What a table told is tried again this often while PostgreSQL or Redis is away, for about
#: ten minutes: nothing else would hear it again, and hearing it twice does no harm.
FOLLOW_RETRY_SECONDS = 20
FOLLOW_RETRIES = 30


@shared_task(ignore_result=True)
def tick() -> dict | None:
    """Start the tournaments whose time came, decide the no-shows, move rounds on."""
    try:
        return {"started": services.start_due(), "forfeits": running.forfeits_due(),
                "advanced": running.advance_due()}
    except OUTAGES as err:
        warn(log, "tournament tick skipped", err)  # the next tick does what this one would
        return None


@shared_task(bind=True, ignore_result=True, max_retries=FOLLOW_RETRIES)
def follow_table(self, game_id: int, came: bool = False, left: list[int] | None = None,
                 match_over: bool = False, closed: bool = False) -> None:
    try:
        follow.follow_up(game_id=game_id, came=came, left=left or (), match_over=match_over,
                         closed=closed)
    except OUTAGES as err:
        warn(log, f"tournament game {game_id}: what its table told is tried again", err)
        raise self.retry(countdown=FOLLOW_RETRY_SECONDS) from None
