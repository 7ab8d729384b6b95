"""Celery tasks: thin shells around apps.club.services."""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True)
def cancel_unfilled() -> int:
    from .services import cancel_unfilled as cancel

    return cancel()


@shared_task(ignore_result=True)
def close_league() -> bool:
    from .services import close_last_week

    return close_last_week() is not None
