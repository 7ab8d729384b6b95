"""Celery tasks: thin shells that carry the position they were set for to a service."""

from __future__ import annotations

import logging

from celery import shared_task

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def turn_due(table_id: int, round_number: int | None, ply: int | None,
             think_first: bool = False) -> None:
    from .services import ServiceError, act_on_deadline

    try:
        act_on_deadline(table_id=table_id, round_number=round_number, ply=ply,
                        think_first=think_first)
    except ServiceError as err:  # moved on, paused, not due: a late or repeated task is harmless
        log.debug("deadline of table %s at %s/%s: %s", table_id, round_number, ply, err.code)


@shared_task(ignore_result=True)
def fill_due(table_id: int) -> None:
    from .services import ServiceError, fill_quick_table

    try:
        fill_quick_table(table_id=table_id)
    except ServiceError as err:  # started, closed or not due: a late or repeated task is harmless
        log.debug("bot fill of table %s: %s", table_id, err.code)


@shared_task(ignore_result=True)
def sweep() -> dict:
    from .services import sweep as sweep_tables

    return sweep_tables()
