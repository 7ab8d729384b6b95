"""After a commit: a timer for the exact moment the table next acts by itself.

The timer is the prompt path; beat's one-second sweep (``tasks.sweep``) is the guarantee when a
timer is lost. Either carries the position it was set for, so acting twice is impossible.
"""

from __future__ import annotations

import logging
from datetime import datetime

log = logging.getLogger(__name__)


def schedule_deadline(table_id: int, position: tuple[int, int] | None,
                      deadline: datetime) -> None:
    from .tasks import turn_due

    round_number, ply = position if position is not None else (None, None)
    try:
        turn_due.apply_async((table_id, round_number, ply), eta=deadline)
    except Exception:  # the broker is down: the sweep will act when it is back
        log.exception("could not schedule the deadline of table %s", table_id)
