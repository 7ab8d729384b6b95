"""Celery tasks: thin shells that carry the position they were set for to a service."""

from __future__ import annotations

import logging

from celery import shared_task

from apps.core.errors import ServiceError
from apps.core.outages import OUTAGES, warn

from . import services

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def turn_due(table_id: int, round_number: int | None, ply: int | None,
             think_first: bool = False) -> None:
    try:
        services.act_on_deadline(table_id=table_id, round_number=round_number, ply=ply,
                                 think_first=think_first)
    except ServiceError as err:  # moved on, paused, not due: a late or repeated task is harmless
        log.debug("deadline of table %s at %s/%s: %s", table_id, round_number, ply, err.code)
    except OUTAGES as err:
        # The sweep finds this deadline still due once the database is back.
        warn(log, f"deadline of table {table_id} at {round_number}/{ply} left to the sweep",
             err)


@shared_task(ignore_result=True)
def fill_due(table_id: int) -> None:
    try:
        services.fill_quick_table(table_id=table_id)
    except ServiceError as err:  # started, closed or not due: a late or repeated task is harmless
        log.debug("bot fill of table %s: %s", table_id, err.code)
    except OUTAGES as err:
        warn(log, f"bot fill of table {table_id} left to the sweep", err)


@shared_task(ignore_result=True)
def sweep() -> dict | None:
    try:
        return services.sweep()
    except OUTAGES as err:
        # Beat sends the next one in a second; what this one would have done is still due.
        warn(log, "sweep skipped", err)
        return None


@shared_task(ignore_result=True)
def prune_events() -> int | None:
    try:
        return services.prune_table_events()
    except OUTAGES as err:
        warn(log, "table events not pruned this time", err)
        return None
