"""Celery tasks: thin shells around apps.club.services."""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True)
def cancel_unfilled() -> int:
    from .services import cancel_unfilled as cancel

    return cancel()
