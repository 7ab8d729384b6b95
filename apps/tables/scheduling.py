"""What happens after a table changes: the bot in the seat to play is asked to move.

Timers (turn deadlines, presence) arrive with the Celery issue; the hook is here so that the
service layer has one place to call after every commit.
"""

from __future__ import annotations


def after_change(table_id: int) -> None:
    from .tasks import schedule_bot_move

    schedule_bot_move(table_id)
