"""After a commit: a timer for the exact moment the table next acts by itself.

The timer is the prompt path (``apps.tables.timers``, fired by the worker's dispatcher); beat's
one-second sweep (``tasks.sweep``) is the guarantee when a timer is lost. Either carries the
position it was set for, so acting twice is impossible.

A quick table's bot fill, rare, is a Celery task with an ETA, sent by the task's name: the tasks
call the services, which call this module, so importing the tasks here would close a circle.
"""

from __future__ import annotations

import logging
from datetime import datetime

from celery import current_app

from apps.core.outages import OUTAGES, warn

from . import timers

log = logging.getLogger(__name__)


def schedule_deadline(table_id: int, position: tuple[int, int] | None,
                      deadline: datetime, *, actor: str | None = None, pipe=None) -> None:
    """``actor`` "bot" is a slow bot's turn: when due it goes to the ``bots`` queue and thinks
    before it locks the table (``services.act_on_deadline``). ``pipe``: queued on a pipeline
    of the state's Redis (the caller runs it, and logs its failure)."""
    round_number, ply = position if position is not None else (None, None)
    try:
        timers.set_timer(table_id, deadline, round_number=round_number, ply=ply,
                         slow_bot=actor == "bot", pipe=pipe)
    except OUTAGES as err:  # Redis is away: the sweep will act when the deadline comes
        warn(log, f"no timer for table {table_id}; the sweep will act", err)


def schedule_fill(table_id: int, when: datetime) -> None:
    """A quick table's wait ends at ``when``: bots take the free seats then, if people have
    not filled it (``services.fill_quick_table``; the sweep does it when this timer is lost)."""
    try:
        current_app.send_task(FILL_DUE, (table_id,), eta=when)
    except Exception:  # the broker is down: the sweep will fill it when it is back
        log.exception("could not schedule the bot fill of table %s", table_id)


#: The Celery queue of slow bots' turns (workers consume it with the default queue).
BOTS_QUEUE = "bots"
#: The tasks' names (``apps.tables.tasks``; ``tests/tables/test_tasks.py`` checks they exist).
TURN_DUE = "apps.tables.tasks.turn_due"
FILL_DUE = "apps.tables.tasks.fill_due"
