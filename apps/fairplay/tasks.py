"""Fair play's Celery tasks: thin shells over :mod:`apps.fairplay.judging`.

``judge_match`` runs on the ``collusion`` queue, which only the judging worker takes
(``apps.core.processes.judge_worker``, at a lower CPU priority): the tables' timers and bots,
on the main worker, never wait behind it.
"""

from __future__ import annotations

import logging

from celery import shared_task

from apps.core.outages import OUTAGES, warn

from . import judging

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def judge_match(match_id: int) -> str | None:
    try:
        return judging.judge(match_id)
    except OUTAGES as err:  # the row stays queued; judge_waiting sends it again
        warn(log, f"collusion check of match {match_id} interrupted", err)
        return None
    except Exception as err:
        # A match the check cannot judge must not come back every few minutes.
        log.exception("collusion check of match %s failed", match_id)
        try:
            judging.fail(match_id, err)
        except OUTAGES as outage:
            warn(log, f"collusion check of match {match_id} not marked failed", outage)
        return "failed"


@shared_task(ignore_result=True)
def judge_waiting() -> int | None:
    try:
        return judging.judge_waiting()
    except OUTAGES as err:
        warn(log, "waiting collusion checks not looked at this time", err)
        return None
