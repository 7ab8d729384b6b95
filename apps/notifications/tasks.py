"""The notifications' Celery tasks, thin shells: ``process`` (queued after each commit that
made notifications), ``sweep`` (beat: what a lost task left, and tournaments about to start),
``prune`` (beat: older than ``NOTIFY_KEEP_DAYS``)."""

from __future__ import annotations

import logging

from celery import shared_task

from apps.core.outages import OUTAGES, warn

from . import delivery, sources

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def process() -> dict | None:
    try:
        return delivery.process()
    except OUTAGES as err:
        warn(log, "notifications left for the sweep", err)
        return None


@shared_task(ignore_result=True)
def sweep() -> dict | None:
    try:
        soon = sources.tournaments_soon()
        return {"tournaments": soon, **delivery.process()}
    except OUTAGES as err:
        warn(log, "notifications sweep skipped", err)
        return None


@shared_task(ignore_result=True)
def prune() -> int | None:
    try:
        return delivery.prune()
    except OUTAGES as err:
        warn(log, "notifications prune skipped", err)
        return None
