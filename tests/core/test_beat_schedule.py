"""Every entry of beat's schedule names a task the worker has (a misspelt name is sent every
time and never run)."""

from __future__ import annotations

from django.conf import settings


def test_every_scheduled_task_is_registered():
    from config.celery import app

    app.loader.import_default_modules()
    names = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert names <= set(app.tasks), names - set(app.tasks)
    assert {"apps.tables.tasks.sweep", "apps.tables.tasks.prune_events",
            "apps.accounts.tasks.clear_expired_sessions"} <= names
