"""Celery tasks: thin shells around apps.club.services."""

from __future__ import annotations

from celery import shared_task

from .services import cancel_unfilled as cancel
from .services import close_last_week


@shared_task(ignore_result=True)
def cancel_unfilled() -> int:
    return cancel()


@shared_task(ignore_result=True)
def close_league() -> bool:
    return close_last_week() is not None
