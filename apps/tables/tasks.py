"""Celery tasks: thin shells that carry the round and ply they were set for to a service."""

from __future__ import annotations

import logging

from celery import shared_task

log = logging.getLogger(__name__)


def schedule_bot_move(table_id: int) -> None:
    """If a bot is to play at this table, ask it to move after the host's think time."""
    from .selectors import bot_to_move

    due = bot_to_move(table_id)
    if due is None:
        return
    round_number, ply, think_ms = due
    bot_move.apply_async((table_id, round_number, ply), countdown=think_ms / 1000)


@shared_task(ignore_result=True)
def bot_move(table_id: int, round_number: int, ply: int) -> None:
    from .services import ServiceError, play_for_seat

    try:
        play_for_seat(table_id=table_id, round_number=round_number, ply=ply, by="bot")
    except ServiceError as err:  # moved on, paused, closed: a late task is harmless
        log.info("bot move for table %s at %s/%s skipped: %s", table_id, round_number, ply,
                 err.code)
